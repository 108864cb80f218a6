package console

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/report"
)

// TestLongLineCut: an engine line of 1 MiB, written in pieces as a pipe
// gives it, is shown and kept cut to textbudget.Line bytes with a note of
// how much was cut, in drop-in and not; the lines around it are whole.
// A secret the cut falls inside shows none of its start.
func TestLongLineCut(t *testing.T) {
	t.Parallel()
	const secret = "hunter22-rotated"
	long := strings.Repeat("A", textbudget.Line-5) + secret + strings.Repeat("B", 1<<20)
	for _, dropIn := range []bool{false, true} {
		t.Run(fmt.Sprintf("drop-in %t", dropIn), func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			c := New(&out, &out, false, dropIn)
			c.StillEvery = 0
			ur := &Unit{Name: "app@default", Masker: NewMasker(secret)}
			w := c.Step(ur, report.StepPlan)
			io.WriteString(w, "Error: Invalid value\n")
			text := long + "\nafter\n"
			for len(text) > 0 {
				n := min(len(text), 65536)
				io.WriteString(w, text[:n])
				text = text[n:]
			}
			w.Close()
			shown, kept := out.String(), ur.Log()
			for what, s := range map[string]string{"shown": shown, "kept": kept} {
				if len(s) > 2*textbudget.Line {
					t.Errorf("%s: %d bytes, want the long line cut to %d", what, len(s), textbudget.Line)
				}
				if strings.Contains(s, "hunter") {
					t.Errorf("%s: the start of a secret shows before the cut", what)
				}
				want := "***" + textbudget.Note(len(long)-textbudget.Line)
				if !strings.Contains(s, want) || !strings.Contains(s, "Error: Invalid value\n") || !strings.Contains(s, "after\n") {
					t.Errorf("%s: want the line cut with %q, and the lines around it whole:\n%.200q … %q", what, want, s, s[max(len(s)-200, 0):])
				}
			}
		})
	}
}

// TestMaskerCut: a secret's start just before a cut's note is masked,
// whichever secret it starts; text with no note is masked as ever.
func TestMaskerCut(t *testing.T) {
	t.Parallel()
	m := NewMasker("hunter22", "s3cr3t-value")
	cases := []struct{ in, want string }{
		{"key = hunt" + textbudget.Note(4), "key = ***" + textbudget.Note(4)},
		{"key = s3cr" + textbudget.Note(8) + " and hunter22", "key = ***" + textbudget.Note(8) + " and ***"},
		{"key = hunter22" + textbudget.Note(4), "key = ***" + textbudget.Note(4)},
		{"key = plain" + textbudget.Note(4), "key = plain" + textbudget.Note(4)},
		{"hunt without a note", "hunt without a note"},
	}
	for _, c := range cases {
		if got := m.Mask(c.in); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDestroyWords: in drop-in, a destroy's apply ends with terraform
// destroy's words, in colour or not; what is kept is the engine's own, and
// an apply that is no destroy's keeps its words.
func TestDestroyWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		destroys bool
		line     string
		want     string
	}{
		{true, "Apply complete! Resources: 0 added, 0 changed, 3 destroyed.\n", "Destroy complete! Resources: 3 destroyed.\n"},
		{true, "\x1b[0m\x1b[1m\x1b[32mApply complete! Resources: 0 added, 0 changed, 1 destroyed.\x1b[0m\n", "\x1b[0m\x1b[1m\x1b[32mDestroy complete! Resources: 1 destroyed.\x1b[0m\n"},
		{false, "Apply complete! Resources: 0 added, 0 changed, 3 destroyed.\n", "Apply complete! Resources: 0 added, 0 changed, 3 destroyed.\n"},
		{true, "Apply complete! Resources: 1 added, 0 changed, 1 destroyed.\n", "Apply complete! Resources: 1 added, 0 changed, 1 destroyed.\n"},
	} {
		var out bytes.Buffer
		c := New(&out, &out, false, true)
		c.StillEvery, c.Colour = 0, true
		ur := &Unit{Name: "app@default", Masker: NewMasker(), Destroys: tc.destroys}
		w := c.Step(ur, report.StepApply)
		io.WriteString(w, tc.line)
		w.Close()
		if out.String() != tc.want {
			t.Errorf("destroys %t, %q: shown %q, want %q", tc.destroys, tc.line, out.String(), tc.want)
		}
		if kept := ur.Log(); !strings.Contains(kept, "Apply complete!") {
			t.Errorf("destroys %t: the kept output lost the engine's words: %q", tc.destroys, kept)
		}
	}
}
