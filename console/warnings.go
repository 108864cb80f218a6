package console

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/strata-iac/strata/internal/diagnostics"
	"github.com/strata-iac/strata/report"
)

// A run's warnings are printed once each, however many units raise them
// (docs/behaviour.md#console-output): strata's own by their message (a
// config warning's message holds its position), the engine's warning
// boxes by their text. One raised by several units at once is printed
// with how many; one that more units raise after it was printed is
// recounted after the final table, and the count there is the count of
// warnings printed.

// Warning is one warning of the run as printed: its text and the units
// that raised it, in the order they did.
type Warning struct {
	Text  string
	Units []string
	// Shown is how many of Units the printed line named or counted.
	Shown int
}

// mostNamed is how many units a warning's line names before "and N more".
const mostNamed = 5

// Warn prints a warning raised by unit ("" for the run), the first time
// its message is raised in the run; later, only the unit is counted.
func (c *Console) Warn(unit, msg string) {
	c.WarnUnits(msg, []string{unit})
}

// WarnUnits prints a warning that units raise together, once, with how
// many when they are several: "warning: msg (for 12 units: a, b, c, d, e
// and 7 more)".
func (c *Console) WarnUnits(msg string, units []string) {
	units = slices.DeleteFunc(slices.Clone(units), func(u string) bool { return u == "" })
	c.mu.Lock()
	w, first := c.raise(msg, units)
	c.mu.Unlock()
	if !first {
		return
	}
	switch len(units) {
	case 0:
		c.Note("warning: " + msg)
	case 1:
		c.UnitNote(units[0], "warning: "+msg)
	default:
		c.Note(fmt.Sprintf("warning: %s (for %s)", msg, namedUnits(units)))
	}
	c.mu.Lock()
	w.Shown = len(units)
	c.mu.Unlock()
}

// raise records that units raised the warning keyed and shown as text,
// and says whether it is the first time in the run. Callers hold c.mu.
func (c *Console) raise(text string, units []string) (*Warning, bool) {
	if w := c.warnings[text]; w != nil {
		for _, u := range units {
			if !slices.Contains(w.Units, u) {
				w.Units = append(w.Units, u)
			}
		}
		return w, false
	}
	w := &Warning{Text: text, Units: units}
	c.warnings[text] = w
	c.warningOrder = append(c.warningOrder, w)
	return w, true
}

// unboxed counts an engine warning printed without a box (the engine
// draws none outside a terminal), by its "Warning: …" line. Where it ends
// cannot be told, so it is printed, and counted, each time. Callers hold
// c.mu.
func (c *Console) unboxed(unit, line string) {
	c.warningOrder = append(c.warningOrder, &Warning{Text: line, Units: []string{unit}, Shown: 1})
}

// Warnings are the warnings printed in the run, in the order they were.
func (c *Console) Warnings() []Warning {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Warning, len(c.warningOrder))
	for i, w := range c.warningOrder {
		out[i] = *w
		out[i].Units = slices.Clone(w.Units)
	}
	return out
}

// namedUnits is "12 units: a, b, c, d, e and 7 more".
func namedUnits(units []string) string {
	names := strings.Join(units[:min(len(units), mostNamed)], ", ")
	if len(units) > mostNamed {
		names += fmt.Sprintf(" and %d more", len(units)-mostNamed)
	}
	return report.CountOf(len(units), "unit") + ": " + names
}

// WriteWarningsClose ends a run's output: each warning printed above
// that more units raised after it was printed, with all of them, then
// how many warnings the run printed, before counting those printed
// before it ran (the config's). Nothing when there were none.
func WriteWarningsClose(w io.Writer, ws []Warning, before int) {
	for _, x := range ws {
		if len(x.Units) > max(x.Shown, 1) {
			fmt.Fprintf(w, "warning printed once above, for %s: %s\n", namedUnits(x.Units), firstLine(x.Text))
		}
	}
	if n := len(ws) + before; n > 0 {
		fmt.Fprintf(w, "%s printed\n", report.CountOf(n, "warning"))
	}
}

// firstLine is what names a warning in one line: an engine box's
// "Warning: …" line, else its first line.
func firstLine(text string) string {
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if t := diagnostics.Unboxed(l); strings.HasPrefix(t, "Warning: ") {
			return t
		}
	}
	return lines[0]
}
