package runstate

import (
	"os"
	"testing"
	"time"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestUpdateUnitWritesOnlyChanges: a change that leaves a unit's record as
// it was writes nothing (no file where there was none, the same file
// where there was one); a real change is written. The same holds whether
// the write is synced or not.
func TestUpdateUnitWritesOnlyChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		scratch bool
		update  func(*StateDir, *stacks.Unit, func(*UnitState)) error
	}{
		{"synced", false, (*StateDir).UpdateUnit},
		{"unsynced", false, (*StateDir).UpdateUnitUnsynced},
		{"scratch dir", true, (*StateDir).UpdateUnit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sd, err := OpenStateDir(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			sd.Scratch = tc.scratch
			testUpdateUnit(t, sd, func(u *stacks.Unit, change func(*UnitState)) error { return tc.update(sd, u, change) })
		})
	}
}

func testUpdateUnit(t *testing.T, sd *StateDir, update func(*stacks.Unit, func(*UnitState)) error) {
	u := &stacks.Unit{Dirspace: &stacks.Dirspace{Dir: "app", Workspace: "default"}, Stack: &stacks.Stack{Name: "s"}}
	path, err := sd.unitStateFile(u)
	if err != nil {
		t.Fatal(err)
	}
	clearPlan := func(s *UnitState) { s.Plan = nil }
	if err := update(u, clearPlan); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("clearing the plan of a unit never recorded wrote %s (%v)", path, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := update(u, func(s *UnitState) { s.Apply = &ApplyRecord{Digest: "sha256:1", At: at, Result: report.StatusApplied} }); err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(path)
	if err != nil {
		t.Fatalf("an apply record was not written: %v", err)
	}
	if err := update(u, clearPlan); err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(path)
	if err != nil || !os.SameFile(st1, st2) {
		t.Errorf("a change that changed nothing replaced the record (%v)", err)
	}
	if err := update(u, func(s *UnitState) { s.Plan = &PlanRecord{Digest: "sha256:2", At: at} }); err != nil {
		t.Fatal(err)
	}
	us, err := sd.ReadUnit(u)
	if err != nil || us.Plan == nil || us.Plan.Digest != "sha256:2" || us.Apply == nil || us.Apply.Digest != "sha256:1" {
		t.Errorf("record after a plan: %+v, %v", us, err)
	}
}
