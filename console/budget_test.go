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
