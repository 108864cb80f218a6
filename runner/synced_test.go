package runner

import (
	"testing"

	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestSyncedRecordsOfAnApply: of an apply's records, only the one that
// takes a saved plan out of reuse before its engine starts is synced (a
// plan is applied at most once, whatever crashes); what the apply did is
// recorded unsynced, as a plan's and an init's are. Not parallel: it
// counts the process's synced writes.
func TestSyncedRecordsOfAnApply(t *testing.T) {
	dirs := []string{"a", "b", "c"}
	root := writeRepo(t, sameUnits(variableUnit, dirs...))
	e := newE2E(t, root)
	run := func(command string, auto bool, want report.Status) int64 {
		t.Helper()
		before := atomicfile.Synced()
		res := e.run(command, Options{Settings: Settings{AutoApprove: auto, Parallelism: 2}}, stacks.Selection{})
		n := atomicfile.Synced() - before
		for name, st := range statuses(res.Report) {
			if st != string(want) {
				t.Fatalf("%s: %s %s\n%s", command, name, st, e.console.String())
			}
		}
		return n
	}
	// The first command writes the state dir's .gitignore and the
	// engine's identity, once.
	run(CmdPlan, false, report.StatusPlanned)
	e.env = append(e.env, "TF_VAR_v=2")
	if n := run(CmdPlan, false, report.StatusPlanned); n != 0 {
		t.Errorf("a plan synced %d writes, want none", n)
	}
	if n := run(CmdApply, true, report.StatusApplied); n != int64(len(dirs)) {
		t.Errorf("the apply of %d saved plans synced %d writes, want one a unit (its plan taken out of reuse)", len(dirs), n)
	}
	// A plan and apply in one call, with no saved plan to take out.
	e.env = append(e.env, "TF_VAR_v=3")
	if n := run(CmdApply, true, report.StatusApplied); n != 0 {
		t.Errorf("applies in one call synced %d writes, want none", n)
	}
	for _, d := range dirs {
		if us := journal(t, root, d); us.Apply == nil || us.Apply.Result != report.StatusApplied || us.Plan != nil {
			t.Errorf("%s: recorded %+v, plan %+v", d, us.Apply, us.Plan)
		}
	}
}
