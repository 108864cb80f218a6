package ansi

import "testing"

func TestStrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[1mPlan:\x1b[0m 1 to add", "Plan: 1 to add"},
		{"  \x1b[32m+\x1b[0m\x1b[0m resource", "  + resource"},
		{"\x1b[31m╷\x1b[0m\x1b[0m", "╷"},
		{"\x1b[0m", ""},
		{"a\x1b[2Kb\x1b[1Ac", "abc"},
		{"lone \x1b escape", "lone  escape"},
		{"\x1b[38;5;196mred\x1b[m", "red"},
	} {
		if got := Strip(tc.in); got != tc.want {
			t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOpen(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", ""},
		{"\x1b[90m", "\x1b[90m"},
		{"\x1b[1mbold\x1b[0m", ""},
		{"\x1b[1m\x1b[31mError: \x1b[0m\x1b[1mtext", "\x1b[1m"},
		{"\x1b[1m\x1b[31mx", "\x1b[1m\x1b[31m"},
		{"\x1b[31mx\x1b[m", ""},
		{"\x1b[31mx\x1b[1;0m", ""},
	} {
		if got := Open(tc.in); got != tc.want {
			t.Errorf("Open(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLines: terraform opens grey on one line and closes it two lines on
// (its rule under a plan); each line then carries its own colour.
func TestLines(t *testing.T) {
	var c Lines
	in := []string{"\x1b[90m", "────", "more\x1b[0m", "plain", "\x1b[32m+\x1b[0m done"}
	want := []string{"\x1b[90m\x1b[0m", "\x1b[90m────\x1b[0m", "\x1b[90mmore\x1b[0m", "plain", "\x1b[32m+\x1b[0m done"}
	for i, l := range in {
		if got := c.Line(l); got != want[i] {
			t.Errorf("line %d: Line(%q) = %q, want %q", i, l, got, want[i])
		}
		if Strip(c.Line("")) != "" {
			t.Fatal("an empty line gained text")
		}
	}
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{"\x1b[1mPlan:\x1b[0m", "\x1b[", "\x1b[31", "a\x1bb", "\x1b[90m\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Strip(s)
		if Has(out) {
			t.Fatalf("Strip(%q) = %q still holds an escape", s, out)
		}
		if len(out) > len(s) {
			t.Fatalf("Strip(%q) grew", s)
		}
		var c Lines
		if got := Strip(c.Line(s)); got != out {
			t.Fatalf("Strip(Line(%q)) = %q, want %q", s, got, out)
		}
	})
}
