package runner

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestOutputOnlyChange: a plan that changes only an output is planned and
// counts it (its JSON read by one show step; a plan without changes shows
// nothing), and its apply ends applied, whether the saved plan is applied
// or the unit is applied in one call.
func TestOutputOnlyChange(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {}\noutput \"o\" {\n  value = \"v1\"\n}\n",
	})
	main := filepath.Join(root, "a", "main.tf")
	e := newE2E(t, root)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if u := unitByName(t, res.Report, "a@default"); u.Status != report.StatusApplied || u.Changes != (report.Changes{Add: 1, Outputs: 1}) {
		t.Fatalf("first apply: %s %+v\n%s", u.Status, u.Changes, e.console.String())
	}
	replaceIn(t, main, "v1", "v2")
	res = e.run(CmdPlan, Options{Settings: Settings{DetailedExitCode: true}}, stacks.Selection{})
	u := unitByName(t, res.Report, "a@default")
	if u.Status != report.StatusPlanned || u.Changes != (report.Changes{Outputs: 1}) || res.ExitCode != 2 {
		t.Fatalf("plan: %s %+v exit %d\n%s", u.Status, u.Changes, res.ExitCode, e.console.String())
	}
	// The plan file is read for its changed outputs; no show -json.
	if _, shown := stepOf(u, report.StepShow); shown {
		t.Errorf("the plan was read with show -json: steps %v", u.Steps)
	}
	if us := journal(t, root, "a"); us.Plan == nil || !reflect.DeepEqual(us.Plan.ChangedOutputs, []string{"o"}) || !us.Plan.OutputsKnown {
		t.Errorf("plan record: %+v", us.Plan)
	}
	// The saved plan is reused and applied: two calls.
	res = e.run(CmdApply, Options{Hooks: Hooks{Approve: func([]*report.UnitReport) (Answer, error) { return AnswerYes, nil }}}, stacks.Selection{})
	if u := unitByName(t, res.Report, "a@default"); u.Status != report.StatusApplied || u.Changes != (report.Changes{Outputs: 1}) || res.ExitCode != 0 {
		t.Fatalf("apply of the saved plan: %s %+v exit %d\n%s", u.Status, u.Changes, res.ExitCode, e.console.String())
	}
	// Applied in one call.
	replaceIn(t, main, "v2", "v3")
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	u = unitByName(t, res.Report, "a@default")
	if _, planned := stepOf(u, report.StepPlan); planned || u.Status != report.StatusApplied || u.Changes != (report.Changes{Outputs: 1}) {
		t.Fatalf("apply in one call: %s %+v, steps %v\n%s", u.Status, u.Changes, u.Steps, e.console.String())
	}
	if us := journal(t, root, "a"); us.Apply == nil || us.Apply.Result != report.StatusApplied {
		t.Errorf("apply record: %+v", us.Apply)
	}
	if got := outputsOf(t, e, "a")["o"]; got != `"v3"` {
		t.Errorf("output o = %s after the apply", got)
	}
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	u = unitByName(t, res.Report, "a@default")
	if _, shown := stepOf(u, report.StepShow); u.Status != report.StatusNoChanges || shown {
		t.Errorf("plan after: %s, steps %v", u.Status, u.Steps)
	}
}

// TestFlagsTerraformExecCannotExpress: an init step's -var-file and a plan
// step's -compact-warnings, which terraform-exec has no option for, reach
// the engine; the plan still reports its changes.
func TestFlagsTerraformExecCannotExpress(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `workflows:
  - tag_query: ''
    plan:
      - type: init
        extra_args: ['-var-file=init.tfvars']
      - type: plan
        extra_args: ['-compact-warnings', '-var-file=init.tfvars']
`,
		"app/main.tf":     "variable \"region\" {\n  type = string\n}\nresource \"terraform_data\" \"x\" {\n  input = var.region\n}\n",
		"app/init.tfvars": "region = \"eu-west-1\"\n",
	})
	e := newE2E(t, root)
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	u := unitByName(t, res.Report, "app@default")
	if u.Status != report.StatusPlanned || u.Changes != (report.Changes{Add: 1}) {
		t.Fatalf("app: %s (%s) %v\n%s", u.Status, u.Reason, u.Changes, e.console.String())
	}
	if !strings.Contains(e.console.String(), `+ input  = "eu-west-1"`) {
		t.Errorf("the plan did not read the var file:\n%s", e.console.String())
	}
	// The flags reach init: terraform refuses these two together.
	root = writeRepo(t, map[string]string{
		"strata.yml":  "workflows:\n  - tag_query: ''\n    plan:\n      - type: init\n        extra_args: ['-reconfigure', '-migrate-state']\n      - type: plan\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	e = newE2E(t, root)
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	u = unitByName(t, res.Report, "app@default")
	if u.Status != report.StatusFailed || !strings.HasPrefix(u.Reason, "init failed") || !strings.Contains(e.console.String(), "-migrate-state") {
		t.Errorf("app: %s (%s)\n%s", u.Status, u.Reason, e.console.String())
	}
}
