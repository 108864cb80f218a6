package runner

import (
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// startOrder is the order the run's units started their first steps in.
func startOrder(t *testing.T, res *Result) []string {
	t.Helper()
	type start struct {
		dir string
		at  report.StepReport
	}
	var starts []start
	for _, u := range res.Report.Units {
		if len(u.Steps) == 0 {
			t.Fatalf("%s ran nothing", u.Name())
		}
		starts = append(starts, start{u.Dir, u.Steps[0]})
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].at.StartedAt.Before(starts[j].at.StartedAt) })
	var out []string
	for _, s := range starts {
		out = append(out, s.dir)
	}
	return out
}

// TestScheduleByCost: with no history the ready queue counts units, so
// the longest chain starts first; once the run state knows what each unit
// took, the slowest path does. Every run records what its jobs took, and
// the report says the run's critical path and makespan.
func TestScheduleByCost(t *testing.T) {
	files := map[string]string{"strata.yml": "stacks:\n  names:\n    other: {tag_query: 'dir:a'}\n    first: {tag_query: 'dir:b'}\n    second: {tag_query: 'dir:c', rules: {plan_after: [first]}}\n"}
	for _, d := range []string{"a", "b", "c"} {
		files[d+"/main.tf"] = "output \"x\" { value = 1 }\n"
	}
	e := newE2E(t, writeRepo(t, files))
	one := Options{Settings: Settings{Parallelism: 1, AutoApprove: true}}
	res := e.run(CmdApply, one, stacks.Selection{})
	if got := startOrder(t, res); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Errorf("no history: %v, want the chain b, c after b first", got)
	}
	if s := res.Report.Schedule; s == nil || s.CriticalPathMS <= 0 || s.MakespanMS < s.CriticalPathMS {
		t.Errorf("schedule %+v: a makespan at least the critical path", s)
	}
	sd, err := runstate.OpenStateDir(filepath.Join(e.root, ".strata"))
	if err != nil {
		t.Fatal(err)
	}
	p := e.project()
	for _, u := range p.Units {
		us, err := sd.ReadUnit(u)
		if err != nil || us.Took == nil || us.Took.PlanMS+us.Took.ApplyMS <= 0 {
			t.Fatalf("%s: no time recorded: %+v %v", u.Name(), us, err)
		}
	}
	// a is slow, the chain quick: a goes first.
	took := map[string]int64{"a": 60_000, "b": 10, "c": 10}
	for _, u := range p.Units {
		if err := sd.UpdateUnit(u, func(s *runstate.UnitState) { s.Took = &runstate.TookRecord{PlanMS: took[u.Dir], ApplyMS: took[u.Dir]} }); err != nil {
			t.Fatal(err)
		}
	}
	if got := startOrder(t, e.run(CmdApply, one, stacks.Selection{})); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("a recorded slow: %v, want a first", got)
	}
}
