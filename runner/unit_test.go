package runner

import (
	"testing"

	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

func TestApprovalWave(t *testing.T) {
	// The approval wave: no/yes/all answers decide the units' fate. Here the
	// coordinator's bookkeeping is checked without engines.
	r := &runState{p: &stacks.Project{}, opt: Options{Hooks: Hooks{Approve: func([]*report.UnitReport) (Answer, error) { return AnswerAll, nil }}}}
	a := &unitRun{unit: &unit{Unit: &job.Unit{Spec: &stacks.Unit{Dirspace: &stacks.Dirspace{Dir: "a", Workspace: "default"}, Stack: &stacks.Stack{Name: "s"}}}}, phase: phasePlanned}
	r.units = []*unitRun{a}
	if !r.askWave() || !a.approved || !r.approveAll {
		t.Errorf("all: approved %t approveAll %t", a.approved, r.approveAll)
	}
	b := &unitRun{unit: &unit{Unit: &job.Unit{Spec: a.Spec}}, phase: phasePlanned}
	r.units = []*unitRun{b}
	r.opt.Approve = func([]*report.UnitReport) (Answer, error) { return AnswerNo, nil }
	if !r.askWave() || b.approved || !b.declined {
		t.Errorf("no: approved %t denied %t", b.approved, b.declined)
	}
	if r.askWave() {
		t.Error("a denied unit is not asked about again")
	}
}
