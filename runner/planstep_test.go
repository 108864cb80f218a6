package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// A unit's plan step, with its extra_args, is how the unit plans wherever
// strata plans it or asks what it would plan with.

// planStepWorkflow gives stack base a plan step with its own extra_args.
const planStepWorkflow = `workflows:
  - tag_query: 'stack_name:base'
    plan:
      - type: init
      - type: plan
        extra_args: ['%s']
`

// TestStaleReplanKeepsPlanStep: the new plan that replaces a stale saved
// plan is made by the workflow's plan step: its -target keeps out what
// the saved plan kept out, and an auto-approved apply applies no more.
func TestStaleReplanKeepsPlanStep(t *testing.T) {
	e := newE2E(t, layerRepo(t, "stacks:\n  names:\n    base: {tag_query: base}\n"+strings.Replace(planStepWorkflow, "%s", "-target=terraform_data.this", 1)))
	writeFileT(t, filepath.Join(e.root, "base", "other.tf"), "resource \"terraform_data\" \"other\" {\n  input = \"untargeted\"\n}\n")
	base := stacks.Selection{Stacks: []string{"base"}}
	if res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, base); res.ExitCode != 0 {
		t.Fatalf("first apply: %v\n%s", statuses(res.Report), e.console.String())
	}
	editFileT(t, filepath.Join(e.root, "base", "main.tf"), `"base"`, `"base-2"`)
	e.run(CmdPlan, Options{}, base)
	terraformIn(t, e, "base", "apply", "-auto-approve", "-input=false", "-target=terraform_data.this")
	editFileT(t, filepath.Join(e.root, "base", "terraform.tfstate"), `"base-2"`, `"drifted"`)
	e.console.Reset()
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, base)
	if res.ExitCode != 0 || !strings.Contains(e.console.String(), "the saved plan is stale") {
		t.Fatalf("apply of a stale plan: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	if state := readFile(t, filepath.Join(e.root, "base", "terraform.tfstate")); strings.Contains(state, `"other"`) {
		t.Errorf("the new plan dropped the plan step's -target: terraform_data.other was applied\n%s", e.console.String())
	}
}

// TestExternalGatePlanStep: a gate outside the run whose plan step has
// extra_args opens once it is applied, as one without them does: what it
// would plan with now is asked with the step's arguments, as its apply
// recorded them.
func TestExternalGatePlanStep(t *testing.T) {
	e := newE2E(t, layerRepo(t, `stacks:
  names:
    base: {tag_query: base}
    dev:
      tag_query: dev
      rules: {plan_after: [base]}
`+strings.Replace(planStepWorkflow, "%s", "-parallelism=3", 1)))
	p, _ := stacks.Load(e.root, configIn(e.root))
	base, dev := p.UnitsIn("base")[0], p.UnitsIn("dev")[0]
	e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"base"}})
	res, err := Execute(context.Background(), p, &stacks.Run{Units: []stacks.RunUnit{{Unit: dev, Why: "selected"}}},
		Options{Settings: Settings{Command: CmdPlan}, Extra: Extra{Environ: e.env, External: []*stacks.Unit{base}}, Output: Output{Console: &e.console}})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res.Report); got["dev@default"] != string(report.StatusPlanned) {
		t.Errorf("after base is applied: %v", got)
	}
}
