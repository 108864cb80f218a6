package console

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/ansi"
	"github.com/strata-iac/strata/report"
)

// plannedInColour is what terraform plan prints at a terminal: colour
// that spans lines (the grey rule), a blank line that only resets, and
// the warning box every call prints.
const plannedInColour = "\x1b[1m  # terraform_data.x\x1b[0m will be created\n" +
	"\x1b[0m  \x1b[32m+\x1b[0m\x1b[0m resource \"terraform_data\" \"x\" {\n" +
	"      \x1b[32m+\x1b[0m\x1b[0m input  = \"s3cret\"\n" +
	"    }\n" +
	"\x1b[0m\n" +
	"\x1b[1mPlan:\x1b[0m 1 to add, 0 to change, 0 to destroy.\n" +
	"\x1b[90m\n" +
	"────\x1b[0m\n"

const warningInColour = "\x1b[33m╷\x1b[0m\x1b[0m\n" +
	"\x1b[33m│\x1b[0m \x1b[0m\x1b[1m\x1b[33mWarning: \x1b[0m\x1b[0m\x1b[1mUnable to open CLI configuration file\x1b[0m\n" +
	"\x1b[33m╵\x1b[0m\x1b[0m\n"

// TestColourShownKeptPlain: at a terminal in colour, each line of a
// unit's block is in the engine's colours and stands alone after its
// prefix; the unit's log, which the report and summary keep, is plain;
// a repeated coloured warning box is printed once.
func TestColourShownKeptPlain(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, nil, false, false)
	c.StillEvery, c.Colour = 0, true
	ur := &Unit{Name: "app@default", Masker: NewMasker("s3cret")}
	for range 2 {
		w := c.Step(ur, report.StepPlan)
		io.WriteString(w.Stderr(), warningInColour)
		io.WriteString(w, plannedInColour)
		w.Close()
	}
	got := out.String()
	want := "[app@default] \x1b[33m╷\x1b[0m\x1b[0m\n" +
		"[app@default] \x1b[33m│\x1b[0m \x1b[0m\x1b[1m\x1b[33mWarning: \x1b[0m\x1b[0m\x1b[1mUnable to open CLI configuration file\x1b[0m\n" +
		"[app@default] \x1b[33m╵\x1b[0m\x1b[0m\n" +
		"[app@default] \x1b[1m  # terraform_data.x\x1b[0m will be created\n" +
		"[app@default] \x1b[0m  \x1b[32m+\x1b[0m\x1b[0m resource \"terraform_data\" \"x\" {\n" +
		"[app@default]       \x1b[32m+\x1b[0m\x1b[0m input  = \"***\"\n" +
		"[app@default]     }\n" +
		"[app@default] \n" +
		"[app@default] \x1b[1mPlan:\x1b[0m 1 to add, 0 to change, 0 to destroy.\n" +
		"[app@default] \n" +
		"[app@default] \x1b[90m────\x1b[0m\n"
	// The second block is the first without the warning box.
	_, plan, _ := strings.Cut(want, "\x1b[33m╵\x1b[0m\x1b[0m\n")
	if got != want+plan {
		t.Errorf("printed\n%q\nwant\n%q", got, want+plan)
	}
	if n := strings.Count(got, "Warning: "); n != 1 {
		t.Errorf("the warning box printed %d times, want once:\n%q", n, got)
	}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "[app@default] ") {
			t.Errorf("a line without its plain prefix: %q", l)
		}
		if ansi.Open(l) != "" {
			t.Errorf("a line leaves colour open: %q", l)
		}
	}
	log := ur.Log()
	if ansi.Has(log) || !strings.Contains(log, "Plan: 1 to add") || !strings.Contains(log, `input  = "***"`) {
		t.Errorf("the unit's log is not plain and masked:\n%q", log)
	}
}

// TestNoColourStripsEngineColour: without colour the console prints no
// escape, whatever the engine printed.
func TestNoColourStripsEngineColour(t *testing.T) {
	for _, dropIn := range []bool{false, true} {
		var out bytes.Buffer
		c := New(&out, &out, false, dropIn)
		c.StillEvery = 0
		ur := &Unit{Name: "app@default", Masker: NewMasker("s3cret")}
		w := c.Step(ur, report.StepPlan)
		io.WriteString(w, plannedInColour)
		w.Close()
		if ansi.Has(out.String()) || !strings.Contains(out.String(), "Plan: 1 to add") {
			t.Errorf("drop-in %t: printed %q", dropIn, out.String())
		}
	}
}

// TestColourMaskedFirst: a secret that a colour code splits is masked all
// the same, on a line then shown without colour; a secret whole in a
// coloured line is masked and the line keeps its colour. In drop-in too.
func TestColourMaskedFirst(t *testing.T) {
	const split = "  \x1b[32m+\x1b[0m key = \"hun\x1b[1mter22\x1b[0m\"\n"
	const whole = "  \x1b[32m+\x1b[0m key = \"hunter22\"\n"
	for _, dropIn := range []bool{false, true} {
		var out bytes.Buffer
		c := New(&out, &out, false, dropIn)
		c.StillEvery, c.Colour = 0, true
		ur := &Unit{Name: "app@default", Masker: NewMasker("hunter22")}
		w := c.Step(ur, report.StepApply)
		io.WriteString(w, split)
		io.WriteString(w, whole)
		w.Close()
		got := out.String()
		if strings.Contains(ansi.Strip(got), "hunter22") || strings.Count(got, `key = "***"`) != 2 {
			t.Fatalf("drop-in %t: a secret shows:\n%q", dropIn, got)
		}
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != 2 || ansi.Has(lines[0]) || !strings.Contains(lines[1], "\x1b[32m+\x1b[0m key = \"***\"") {
			t.Errorf("drop-in %t: want the split line plain and the other in colour:\n%q", dropIn, got)
		}
	}
}
