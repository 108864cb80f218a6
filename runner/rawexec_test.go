package runner

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

func TestRawArgs(t *testing.T) {
	f := false
	tests := []struct {
		argv []string
		want string
	}{
		{initCall{Args: InitArgs{Extra: []string{"-var-file=/r/a.tfvars"}}}.rawArgs(),
			"init -no-color -input=false -backend=true -get=true -upgrade=false -var-file=/r/a.tfvars"},
		{initCall{Args: InitArgs{Backend: &f, Upgrade: true, Reconfigure: true, BackendConfig: []string{"key=x"}, Extra: []string{"-lockfile=readonly"}}}.rawArgs(),
			"init -no-color -input=false -backend=false -get=true -upgrade=true -reconfigure -backend-config=key=x -lockfile=readonly"},
		{planCall{Out: "/s/p", VarFile: "/s/v.json", Args: PlanArgs{Targets: []string{"a.b"}, Extra: []string{"-compact-warnings"}}}.rawArgs(),
			"plan -no-color -input=false -detailed-exitcode -out=/s/p -var-file=/s/v.json -target=a.b -compact-warnings"},
	}
	for _, tc := range tests {
		if got := strings.Join(tc.argv, " "); got != tc.want {
			t.Errorf("raw argv = %q, want %q", got, tc.want)
		}
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
