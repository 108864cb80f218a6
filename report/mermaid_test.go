package report

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMermaid: the DAG as a flowchart, a box per unit filled by its
// status, and the longest chain end to end drawn bold.
func TestMermaid(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	// unit ran from start to end seconds into the run; nothing when end
	// is zero.
	unit := func(dir string, order int, status Status, start, end int, after ...string) *UnitReport {
		u := &UnitReport{Dir: dir, Workspace: "default", Stack: "s", Status: status, Order: order, After: after}
		if end > 0 {
			u.Steps = []StepReport{{Name: "plan", StartedAt: t0.Add(time.Duration(start) * time.Second), FinishedAt: t0.Add(time.Duration(end) * time.Second)}}
		}
		return u
	}
	rep := &Report{Units: []*UnitReport{
		unit("a", 0, StatusApplied, 0, 1),
		unit("b", 1, StatusApplied, 1, 6, "a@default#s"),
		unit("c", 3, StatusFailed, 6, 7, "b@default#s"),
		unit("d", 2, StatusPlanned, 1, 3, "a@default#s", "gone@default#s"),
		unit(`e"<x>`, 4, StatusSkipped, 0, 0, "c@default#s"),
	}}
	// f waits for a and b, all three on the critical path: only b -> f
	// is the path's edge.
	rep2 := &Report{Units: append(append([]*UnitReport(nil), rep.Units...), unit("f", 5, StatusApplied, 6, 9, "a@default#s", "b@default#s"))}
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
	// A class per status drawn, none for the others.
	if n := strings.Count(got, "classDef "); n != 4+1 || strings.Contains(got, "classDef no_changes") {
		t.Errorf("%d classes (want the 4 statuses drawn and critical):\n%s", n, got)
	}
	if md := rep.Markdown(); !strings.Contains(md, "<details><summary>DAG (the critical path in bold)</summary>\n\n```mermaid") {
		t.Errorf("the summary has no DAG:\n%s", md)
	}
	// No edges, one unit, or too many units: no picture.
	for name, r := range map[string]*Report{
		"no edges": {Units: []*UnitReport{unit("a", 0, StatusApplied, 0, 0), unit("b", 1, StatusApplied, 0, 0)}},
		"one unit": {Units: []*UnitReport{unit("a", 0, StatusApplied, 0, 0)}},
	} {
		if m := r.Mermaid(); m != "" {
			t.Errorf("%s: %s", name, m)
		}
	}
	big := &Report{}
	for i := range mermaidLimit + 1 {
		big.Units = append(big.Units, unit(strings.Repeat("x", i+1), i, StatusApplied, 0, 0, "x@default#s"))
	}
	if m := big.Mermaid(); m != "" {
		t.Errorf("%d units drawn", len(big.Units))
	}
}

// TestCriticalPathWaited: the critical path links only units that waited
// for the one before. A plan does not wait for an apply_after producer's
// apply, a blocked unit runs nothing, and a unit whose plan ran early but
// whose apply waited counts from the producer's end; the path is never
// longer than the run.
func TestCriticalPathWaited(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	step := func(name string, from, to float64) StepReport {
		return StepReport{Name: name, StartedAt: at(from), FinishedAt: at(to)}
	}
	unit := func(dir string, order int, steps []StepReport, after ...string) *UnitReport {
		return &UnitReport{Dir: dir, Workspace: "default", Stack: "s", Status: StatusPlanned, Order: order, After: after, Steps: steps}
	}
	for _, tc := range []struct {
		name  string
		units []*UnitReport
		want  []string // the path, first to last
		took  time.Duration
	}{
		{
			name: "an edge not waited on",
			units: []*UnitReport{
				unit("base", 0, []StepReport{step("plan", 0, 2), step("apply", 2, 3)}),
				unit("dev", 1, []StepReport{step("plan", 3, 4)}, "base@default#s"),
				// prod plans at once: its edge from dev is apply_after.
				unit("prod", 2, []StepReport{step("plan", 0, 2.5)}, "dev@default#s"),
			},
			want: []string{"base", "dev"},
			took: 4 * time.Second,
		},
		{
			name: "through a unit that ran nothing",
			units: []*UnitReport{
				unit("a", 0, []StepReport{step("plan", 0, 1)}),
				unit("blocked", 1, nil, "a@default#s"),
				unit("c", 2, []StepReport{step("plan", 5, 6)}, "blocked@default#s"),
			},
			want: []string{"a"},
			took: time.Second,
		},
		{
			name: "a plan early, its apply after the producer's",
			units: []*UnitReport{
				unit("a", 0, []StepReport{step("plan", 0, 1), step("apply", 2, 6)}),
				unit("b", 1, []StepReport{step("plan", 0, 1.5), step("apply", 6, 7)}, "a@default#s"),
			},
			want: []string{"a", "b"},
			took: 7 * time.Second,
		},
	} {
		path, took := criticalPath(tc.units)
		var got []string
		for _, u := range tc.units {
			if _, on := path[u.ID()]; on {
				got = append(got, u.Dir)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || took != tc.took {
			t.Errorf("%s: path %v taking %s, want %v taking %s", tc.name, got, took, tc.want, tc.took)
		}
		_, last := Span(tc.units[0].Steps)
		for _, u := range tc.units {
			if _, f := Span(u.Steps); f.After(last) {
				last = f
			}
		}
		if took > last.Sub(t0) {
			t.Errorf("%s: a path of %s in a run of %s", tc.name, took, last.Sub(t0))
		}
	}
}

// TestMermaidStackEdges: a unit waiting for stacks (AfterStacks) puts the
// units in a subgraph per stack and each rule is one edge between two
// subgraphs, bold when the critical path goes over it; unit edges stay
// edges between units.
func TestMermaidStackEdges(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var units []*UnitReport
	for i, stack := range []string{"base", "staging", "prod"} {
		var after []string
		if i > 0 {
			after = []string{[]string{"base", "staging"}[i-1]}
		}
		for j := range 7 {
			u := &UnitReport{Dir: fmt.Sprintf("%s/u%d", stack, j), Workspace: "default", Stack: stack, Status: StatusApplied,
				Order: i*7 + j, AfterStacks: after,
				Steps: []StepReport{{Name: "apply", StartedAt: t0.Add(time.Duration(10*i) * time.Second), FinishedAt: t0.Add(time.Duration(10*i+1+j) * time.Second)}}}
			units = append(units, u)
		}
	}
	// An edge between two units of staging.
	units[8].After = []string{"staging/u0@default#staging"}
	got := (&Report{Units: units}).Mermaid()
	for _, want := range []string{
		"  subgraph s0[\"base\"]\n    u0[\"base/u0@default<br/>applied\"]:::applied\n",
		"    u20[\"prod/u6@default<br/>applied\"]:::applied\n  end\n",
		"  u7 --> u8\n  s0 ==> s1\n  s1 ==> s2\n  classDef",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if n := strings.Count(got, "subgraph "); n != 3 {
		t.Errorf("%d subgraphs, want 3", n)
	}
	if n := strings.Count(got, "-->") + strings.Count(got, "==>"); n != 3 {
		t.Errorf("%d edges, want the unit edge and the 2 stack edges:\n%s", n, got)
	}
	// The path: base's longest unit, staging's, prod's.
	if !strings.Contains(got, "  class u6,u13,u20 critical\n") {
		t.Errorf("critical path over the stack edges:\n%s", got)
	}
	// With no edge but the rules, there is still a picture.
	units[8].After = nil
	if got := (&Report{Units: units}).Mermaid(); !strings.Contains(got, "  s0 ==> s1\n  s1 ==> s2\n") {
		t.Errorf("stack edges only:\n%s", got)
	}
}

// TestCriticalPathOverStacks: a unit waiting for whole stacks
// (AfterStacks) gets the chain it would get waiting for each of their
// units (After), on runs drawn at random from a fixed seed.
func TestCriticalPathOverStacks(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rnd := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		var byStack, expanded []*UnitReport
		nStacks := 1 + rnd.IntN(4)
		order := 0
		for s := range nStacks {
			stack := fmt.Sprintf("s%d", s)
			var after []string
			for p := range s {
				if rnd.IntN(2) == 0 {
					after = append(after, fmt.Sprintf("s%d", p))
				}
			}
			for i := range 1 + rnd.IntN(5) {
				u := &UnitReport{Dir: fmt.Sprintf("%s/u%d", stack, i), Workspace: "default", Stack: stack, Order: order, AfterStacks: after}
				order++
				if rnd.IntN(6) > 0 {
					start := rnd.IntN(20)
					mid, end := start+rnd.IntN(10), 0
					end = mid + 1 + rnd.IntN(10)
					u.Steps = []StepReport{{Name: "plan", StartedAt: at(start), FinishedAt: at(mid)}, {Name: "apply", StartedAt: at(mid + rnd.IntN(3)), FinishedAt: at(end)}}
				}
				byStack = append(byStack, u)
			}
		}
		for _, u := range byStack {
			e := *u
			e.AfterStacks = nil
			for _, v := range byStack {
				if slices.Contains(u.AfterStacks, v.Stack) {
					e.After = append(e.After, v.ID())
				}
			}
			expanded = append(expanded, &e)
		}
		_, got := criticalPath(byStack)
		_, want := criticalPath(expanded)
		if got != want {
			t.Fatalf("run %d: over stacks %s, over units %s", run, got, want)
		}
	}
}

// TestEndsToldApart: applied, destroyed and succeeded each have a colour
// of their own, here and on the graph page.
func TestEndsToldApart(t *testing.T) {
	t.Parallel()
	fill := map[Status]string{}
	for _, c := range statusColours {
		fill[c.status] = c.fill
	}
	if fill[StatusApplied] == fill[StatusDestroyed] || fill[StatusApplied] == fill[StatusSucceeded] || fill[StatusDestroyed] == fill[StatusSucceeded] {
		t.Errorf("applied %s, destroyed %s, succeeded %s", fill[StatusApplied], fill[StatusDestroyed], fill[StatusSucceeded])
	}
}
