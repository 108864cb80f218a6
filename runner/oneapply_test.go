package runner

import (
	"path/filepath"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// TestApplyInOneCall: under -auto-approve a unit with nothing to review
// and no step reading its plan file is applied by one engine call, with
// the change counts and the run-state record two calls leave; a workflow
// with a run step keeps plan and apply apart.
func TestApplyInOneCall(t *testing.T) {
	config := `stacks:
  names:
    base: {tag_query: base}
    dev:
      tag_query: dev
      rules: {plan_after: [base]}
    prod: {tag_query: prod}
workflows:
  - tag_query: 'dir:prod'
    plan:
      - type: init
      - type: run
        cmd: ['test', '-f', '$STRATA_PLAN_FILE']
        run_on: failure
      - type: plan
`
	one := newE2E(t, layerRepo(t, config))
	res := one.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply: %v\n%s", statuses(res.Report), one.console.String())
	}
	for _, name := range []string{"base@default", "dev@default"} {
		u := unitByName(t, res.Report, name)
		if _, planned := stepOf(u, report.StepPlan); planned || u.Status != report.StatusApplied || u.Changes != (report.Changes{Add: 1}) {
			t.Errorf("%s: %s %v, steps %v; want applied in one call, +1", name, u.Status, u.Changes, u.Steps)
		}
	}
	if _, planned := stepOf(unitByName(t, res.Report, "prod@default"), report.StepPlan); !planned {
		t.Errorf("prod, whose workflow has a run step, was not planned apart")
	}

	// The same repository applied in two calls (each wave approved by
	// hand) records the same digests.
	two := newE2E(t, layerRepo(t, config))
	res = two.run(CmdApply, Options{Hooks: Hooks{Approve: func([]*report.UnitReport) (Answer, error) { return AnswerYes, nil }}}, stacks.Selection{})
	if _, planned := stepOf(unitByName(t, res.Report, "base@default"), report.StepPlan); !planned || res.ExitCode != 0 {
		t.Fatalf("two calls: %v", statuses(res.Report))
	}
	for _, dir := range []string{"base", "dev"} {
		a, b := journal(t, one.root, dir), journal(t, two.root, dir)
		if a.Apply == nil || b.Apply == nil || a.Apply.Digest != b.Apply.Digest || a.Apply.Result != b.Apply.Result || a.Plan != nil || b.Plan != nil {
			t.Errorf("%s: one call recorded %+v %+v, two calls %+v %+v", dir, a.Apply, a.Plan, b.Apply, b.Plan)
		}
	}
	// Nothing left to do: a plan finds no changes.
	one.console.Reset()
	res = one.run(CmdPlan, Options{}, stacks.Selection{})
	for name, st := range statuses(res.Report) {
		if st != string(report.StatusNoChanges) {
			t.Errorf("plan after: %s %s", name, st)
		}
	}
}

// stateDirOf is the state dir of the repository at root and its unit in
// dir.
func stateDirOf(t *testing.T, root, dir string) (*runstate.StateDir, *stacks.Unit) {
	t.Helper()
	p, err := stacks.Load(root, configIn(root))
	if err != nil {
		t.Fatal(err)
	}
	return &runstate.StateDir{Path: filepath.Join(root, ".strata")}, p.UnitsIn(dir)[0]
}

func journal(t *testing.T, root, dir string) *runstate.UnitState {
	t.Helper()
	sd, u := stateDirOf(t, root, dir)
	us, err := sd.ReadUnit(u)
	if err != nil {
		t.Fatal(err)
	}
	return us
}

// TestApplyInOneCallFails: a unit whose one-call apply fails is failed
// with what it was about to change, as a failed apply of a saved plan is.
func TestApplyInOneCallFails(t *testing.T) {
	e := newE2E(t, writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {\n  provisioner \"local-exec\" {\n    command = \"exit 1\"\n  }\n}\n",
	}))
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	u := unitByName(t, res.Report, "a@default")
	if _, planned := stepOf(u, report.StepPlan); planned || u.Status != report.StatusFailed || u.Changes != (report.Changes{Add: 1}) || res.ExitCode != 1 {
		t.Errorf("a: %s (%s) %v, steps %v, exit %d", u.Status, u.Reason, u.Changes, u.Steps, res.ExitCode)
	}
	if us := journal(t, e.root, "a"); us.Apply == nil || us.Apply.Result != report.StatusFailed {
		t.Errorf("journal: %+v", us.Apply)
	}
}
