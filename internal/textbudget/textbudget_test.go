package textbudget

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"within", "Error: x", 8, "Error: x"},
		{"empty", "", 4, ""},
		{"over", "abcdefgh", 4, "abcd … cut: 4 more bytes"},
		{"one byte over", "abcde", 4, "abcd … cut: 1 more byte"},
		// "é" is two bytes: the cut never splits it.
		{"on a character boundary", "abcé", 4, "abc … cut: 2 more bytes"},
		{"nothing fits", "éé", 1, " … cut: 4 more bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := Cut(c.in, c.limit)
			if got != c.want {
				t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Cut(%q, %d) is not valid UTF-8", c.in, c.limit)
			}
		})
	}
}

func TestCutLarge(t *testing.T) {
	t.Parallel()
	got := Cut(strings.Repeat("A", 200<<20), Error)
	if len(got) > Error+64 || !strings.HasSuffix(got, Note(200<<20-Error)) {
		t.Errorf("a 200 MiB text cut to %d bytes, ending %q", len(got), got[len(got)-40:])
	}
}

func TestDropped(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		n        int
		want     string
	}{
		{"nothing dropped", "abc", 0, "abc"},
		{"dropped", "abc", 5, "abc … cut: 5 more bytes"},
		// The first byte of "é" was kept, its second dropped.
		{"an unfinished character", "ab\xc3", 1, "ab … cut: 2 more bytes"},
		{"a whole character at the end", "abé", 1, "abé … cut: 1 more byte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Dropped(c.in, c.n); got != c.want {
				t.Errorf("Dropped(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
			}
		})
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"short lines", "Err\nmore\n", "Err\nmore\n"},
		{"empty", "", ""},
		{"a long line among short", "Err\nabcdefgh\nend", "Err\nabcd … cut: 4 more bytes\nend"},
		{"a long last line", "a\nabcdef", "a\nabcd … cut: 2 more bytes"},
		{"a trailing newline kept", "abcdef\n", "abcd … cut: 2 more bytes\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Lines(c.in, 4); got != c.want {
				t.Errorf("Lines(%q, 4) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
