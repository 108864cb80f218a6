package report

import (
	"strings"
	"testing"
	"time"
)

// TestMermaid: the DAG as a flowchart, a box per unit filled by its
// status, and the longest chain end to end drawn bold.
func TestMermaid(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	unit := func(dir string, order int, status Status, took time.Duration, after ...string) *UnitReport {
		u := &UnitReport{Dir: dir, Workspace: "default", Stack: "s", Status: status, Order: order, After: after}
		u.Steps = []StepReport{{Name: "plan", StartedAt: t0, FinishedAt: t0.Add(took)}}
		return u
	}
	rep := &Report{Units: []*UnitReport{
		unit("a", 0, StatusApplied, time.Second),
		unit("b", 1, StatusApplied, 5*time.Second, "a@default#s"),
		unit("c", 3, StatusFailed, time.Second, "b@default#s"),
		unit("d", 2, StatusPlanned, 2*time.Second, "a@default#s", "gone@default#s"),
		unit(`e"<x>`, 4, StatusSkipped, 0, "c@default#s"),
	}}
	// f waits for a and b, all three on the critical path: only b -> f
	// is the path's edge.
	rep2 := &Report{Units: append(append([]*UnitReport(nil), rep.Units...), unit("f", 5, StatusApplied, 3*time.Second, "a@default#s", "b@default#s"))}
	if got := rep2.Mermaid(); !strings.Contains(got, "  u0 --> u5\n  u1 ==> u5\n") || !strings.Contains(got, "  class u0,u1,u5 critical\n") {
		t.Errorf("a unit waiting for two units of the path:\n%s", got)
	}
	want := "```mermaid\nflowchart LR\n" +
		"  u0[\"a@default<br/>applied\"]:::applied\n" +
		"  u1[\"b@default<br/>applied\"]:::applied\n" +
		"  u2[\"d@default<br/>planned\"]:::planned\n" +
		"  u3[\"c@default<br/>failed\"]:::failed\n" +
		"  u4[\"e#quot;#lt;x#gt;@default<br/>skipped\"]:::skipped\n" +
		"  u0 ==> u1\n  u0 --> u2\n  u1 ==> u3\n  u3 --> u4\n"
	got := rep.Mermaid()
	if !strings.HasPrefix(got, want) {
		t.Errorf("flowchart:\n%s\nwant it to start with:\n%s", got, want)
	}
	for _, line := range []string{"  classDef failed fill:#cf222e", "  class u0,u1,u3 critical\n", "```\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("no %q in\n%s", line, got)
		}
	}
	if md := rep.Markdown(); !strings.Contains(md, "<details><summary>DAG (the critical path in bold)</summary>\n\n```mermaid") {
		t.Errorf("the summary has no DAG:\n%s", md)
	}
	// No edges, one unit, or too many units: no picture.
	for name, r := range map[string]*Report{
		"no edges": {Units: []*UnitReport{unit("a", 0, StatusApplied, 0), unit("b", 1, StatusApplied, 0)}},
		"one unit": {Units: []*UnitReport{unit("a", 0, StatusApplied, 0)}},
	} {
		if m := r.Mermaid(); m != "" {
			t.Errorf("%s: %s", name, m)
		}
	}
	big := &Report{}
	for i := range mermaidLimit + 1 {
		big.Units = append(big.Units, unit(strings.Repeat("x", i+1), i, StatusApplied, 0, "x@default#s"))
	}
	if m := big.Mermaid(); m != "" {
		t.Errorf("%d units drawn", len(big.Units))
	}
}
