package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the final table, grouped by stack: unit, status,
// changes, duration, reason, and why each unit is in the run when some
// unit is for more than being selected (docs/behaviour.md#console-output).
func (rep *Report) WriteTable(w io.Writer) {
	rep.writeTable(w)
}

// WriteColourTable is WriteTable with each status in its colour, for a
// terminal (docs/behaviour.md#console-output). The colours go in after
// the columns are laid out, so they move nothing.
func (rep *Report) WriteColourTable(w io.Writer) {
	var b strings.Builder
	rep.writeTable(&b)
	lines := strings.SplitAfter(b.String(), "\n")
	col := strings.Index(lines[0], "STATUS")
	for i, l := range lines {
		if i > 0 && col >= 0 && col < len(l) {
			end := col + strings.IndexByte(l[col:]+" ", ' ')
			if code, ok := statusANSI[Status(l[col:end])]; ok {
				l = l[:col] + "\x1b[" + code + "m" + l[col:end] + "\x1b[0m" + l[end:]
			}
		}
		io.WriteString(w, l)
	}
}

// statusANSI are the terminal colours of the statuses: red for what
// failed or was refused, green for what changed, yellow for what waits.
var statusANSI = map[Status]string{
	StatusFailed: "31", StatusDenied: "31", StatusMissing: "31",
	StatusApplied: "32", StatusDestroyed: "32", StatusSucceeded: "32",
	StatusPlanned: "33", StatusBlocked: "33", StatusDeferred: "33",
	StatusSkipped: "90", StatusCancelled: "90",
}

func (rep *Report) writeTable(w io.Writer) {
	if len(rep.Units) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// Why a unit is in the run, when some unit is for more than being
	// selected (docs/behaviour.md#changed-units), as the summary says it.
	showWhy := rep.hasWhy()
	// Time spent waiting at a prompt or for apply gates is apart from
	// the units' own running time, when some unit waited.
	showWaited := false
	for _, u := range rep.Units {
		if u.waited() != "-" {
			showWaited = true
		}
	}
	head := "STACK\tUNIT\tSTATUS\tCHANGES\tDURATION"
	if showWaited {
		head += "\tWAITED"
	}
	head += "\tREASON"
	if showWhy {
		head += "\tWHY"
	}
	fmt.Fprintln(tw, head)
	// A warning many units carry is told once, at the first of them in
	// run order, with how many carry it.
	carry := map[string]int{}
	for _, u := range rep.Units {
		for _, w := range u.Warnings {
			carry[w]++
		}
	}
	told := map[string]bool{}
	for _, u := range rep.runOrder() {
		changes := "-"
		if u.Changes != (Changes{}) {
			changes = u.Changes.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s", strings.Join(u.StackPath, "/"), u.Name(), u.Status, changes, u.duration())
		if showWaited {
			fmt.Fprintf(tw, "\t%s", u.waited())
		}
		fmt.Fprintf(tw, "\t%s", u.tableNote(carry, told))
		if showWhy {
			// A reason may be empty: the column stays in its place.
			fmt.Fprintf(tw, "\t%s", u.Why)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// runOrder is the units in the order the run went: by layer, then by
// when each started; a unit that ran nothing comes after those of its
// layer that ran, in the DAG's order.
func (rep *Report) runOrder() []*UnitReport {
	units := append([]*UnitReport(nil), rep.Units...)
	sort.SliceStable(units, func(i, j int) bool {
		a, b := units[i], units[j]
		if a.Layer != b.Layer {
			return a.Layer < b.Layer
		}
		sa, _ := Span(a.Steps)
		sb, _ := Span(b.Steps)
		switch {
		case sa.IsZero() != sb.IsZero():
			return !sa.IsZero()
		case !sa.Equal(sb):
			return sa.Before(sb)
		}
		return a.Order < b.Order
	})
	return units
}

// tableNote is the unit's reason and the warnings not told yet in the
// table, each with the count of units carrying it when more than one.
func (u *UnitReport) tableNote(carry map[string]int, told map[string]bool) string {
	parts := make([]string, 0, 1+len(u.Warnings))
	if u.Reason != "" {
		parts = append(parts, u.Reason)
	}
	for _, w := range u.Warnings {
		if told[w] {
			continue
		}
		told[w] = true
		if n := carry[w]; n > 1 {
			w += fmt.Sprintf(" (for %d units)", n)
		}
		parts = append(parts, "warning: "+w)
	}
	return strings.Join(parts, "; ")
}
