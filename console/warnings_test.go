package console

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestWarningsOnce: each warning is printed once per run, by its message
// (which holds a config warning's position), however many units raise it
// and whether together or one after another; several units at once are
// counted on its line, later ones after the table; the closing line
// counts the warnings printed, with those printed before the run.
func TestWarningsOnce(t *testing.T) {
	t.Parallel()
	units := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("u%02d@default", i))
		}
		return out
	}
	type raise struct {
		units []string
		msg   string
	}
	for _, tc := range []struct {
		name    string
		raises  []raise
		before  int
		printed string
		close   string
	}{
		{"none", nil, 0, "", ""},
		{"one unit", []raise{{[]string{"a@default"}, "x"}}, 0,
			"[a@default] warning: x\n", "1 warning printed\n"},
		{"the run's own", []raise{{nil, "x"}, {nil, "x"}}, 0,
			"warning: x\n", "1 warning printed\n"},
		{"twelve units at once", []raise{{units(12), "x"}}, 0,
			"warning: x (for 12 units: u00@default, u01@default, u02@default, u03@default, u04@default and 7 more)\n",
			"1 warning printed\n"},
		{"one after another", []raise{{[]string{"a@default"}, "x"}, {[]string{"b@default"}, "x"}, {[]string{"a@default"}, "x"}}, 0,
			"[a@default] warning: x\n",
			"warning printed once above, for 2 units: a@default, b@default: x\n1 warning printed\n"},
		{"two messages, same units", []raise{{units(2), "x"}, {units(2), "y"}, {units(2), "x"}}, 0,
			"warning: x (for 2 units: u00@default, u01@default)\nwarning: y (for 2 units: u00@default, u01@default)\n",
			"2 warnings printed\n"},
		{"two positions, one message", []raise{{[]string{"a@default"}, "strata.yml:3:5: x"}, {[]string{"a@default"}, "strata.yml:9:5: x"}}, 0,
			"[a@default] warning: strata.yml:3:5: x\n[a@default] warning: strata.yml:9:5: x\n", "2 warnings printed\n"},
		{"with the config's before the run", []raise{{[]string{"a@default"}, "x"}}, 2,
			"[a@default] warning: x\n", "3 warnings printed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			c := New(&out, nil, false, false)
			for _, r := range tc.raises {
				c.WarnUnits(r.msg, r.units)
			}
			if out.String() != tc.printed {
				t.Errorf("printed\n%q\nwant\n%q", out.String(), tc.printed)
			}
			var closing bytes.Buffer
			WriteWarningsClose(&closing, c.Warnings(), tc.before)
			if closing.String() != tc.close {
				t.Errorf("closing\n%q\nwant\n%q", closing.String(), tc.close)
			}
		})
	}
}

// TestWarningBoxOnce: an engine warning box several units print alike is
// printed once, counted for each unit that printed it, and named by its
// Warning line after the table.
func TestWarningBoxOnce(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := New(&out, nil, false, false)
	box := "╷\n│ Warning: Check block assertion failed\n│\n│   on main.tf line 2, in check \"x\":\n│ \n│ boom\n╵\n"
	for _, u := range []string{"a@default", "b@default"} {
		sw := c.Step(unitNamed(u), "plan")
		fmt.Fprint(sw, "Plan: 1 to add, 0 to change, 0 to destroy.\n\n"+box)
		sw.Close()
	}
	if n := strings.Count(out.String(), "Warning: Check block assertion failed"); n != 1 {
		t.Errorf("the box printed %d times, want once:\n%s", n, out.String())
	}
	var closing bytes.Buffer
	WriteWarningsClose(&closing, c.Warnings(), 0)
	want := "warning printed once above, for 2 units: a@default, b@default: Warning: Check block assertion failed\n1 warning printed\n"
	if closing.String() != want {
		t.Errorf("closing\n%q\nwant\n%q", closing.String(), want)
	}
}

// TestUnboxedWarningsCounted: an engine warning printed without a box
// (outside a terminal) is printed, and counted, each time.
func TestUnboxedWarningsCounted(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := New(&out, nil, false, false)
	for _, u := range []string{"a@default", "b@default"} {
		sw := c.Step(unitNamed(u), "plan")
		fmt.Fprint(sw, "Plan: 1 to add, 0 to change, 0 to destroy.\n\nWarning: Check block assertion failed\n\n  on main.tf line 5, in check \"always\":\n\nboom\n")
		sw.Close()
	}
	printed := strings.Count(out.String(), "] Warning: Check block assertion failed")
	var closing bytes.Buffer
	WriteWarningsClose(&closing, c.Warnings(), 0)
	if want := fmt.Sprintf("%d warnings printed\n", printed); printed != 2 || closing.String() != want {
		t.Errorf("printed %d times, closing %q, want %q", printed, closing.String(), want)
	}
}
