package job

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestInitStepBuild: an init step's arguments come from its extra_args,
// substituted and read as init's, merged with the command's; its env is
// its own.
func TestInitStepBuild(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "init", ExtraArgs: []string{"-backend-config=key=${region}/state", "-upgrade"},
		Env: []stacks.EnvVar{{Key: "TF_TOKEN_app_example_com", Value: "${GITHUB_TOKEN}"}}}, "plan step 1 (init)", nil)
	in.EngineArgs = engineargs.EngineArgs{Init: engineargs.InitArgs{Reconfigure: true}}
	args, own, err := initStep{}.build(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(args.BackendConfig, []string{"key=eu-west-1/state"}) || !args.Upgrade || !args.Reconfigure {
		t.Errorf("init args = %+v", args)
	}
	if !reflect.DeepEqual(own, map[string]string{"TF_TOKEN_app_example_com": "ghp"}) {
		t.Errorf("own env = %v", own)
	}
	inv := in.initInvocation(args, own)
	if got := strings.Join(inv.Args(), " "); got != "init -upgrade -reconfigure -backend-config=key=eu-west-1/state" {
		t.Errorf("init argv = %q", got)
	}
	if inv.Env["TF_TOKEN_app_example_com"] != "ghp" || inv.Step != report.StepInit || inv.Dir != "/repo/net" {
		t.Errorf("init invocation = %+v", inv)
	}
	if _, _, err := (initStep{}).build(testInput(stacks.RunStep{Type: "init", ExtraArgs: []string{"-out=x"}}, "plan step 1 (init)", nil)); err == nil ||
		!strings.Contains(err.Error(), "plan step 1 (init): extra_args") {
		t.Errorf("a plan flag in init's extra_args: %v", err)
	}
}

// TestInitInvocationVersion: init knows the engine's version, and then
// runs without terraform-exec's extra `version` start.
func TestInitInvocationVersion(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "init"}, "plan step 1 (init)", nil)
	if c := in.initInvocation(engineargs.InitArgs{}, nil).Call.(initCall); c.Version != nil || !c.checksVersion() {
		t.Errorf("no version known: %+v checks %t", c, c.checksVersion())
	}
	in.EngineVersion = version.Must(version.NewVersion("1.11.4"))
	if c := in.initInvocation(engineargs.InitArgs{}, nil).Call.(initCall); c.Version == nil || c.checksVersion() {
		t.Errorf("a known version: %+v checks %t", c, c.checksVersion())
	}
	in.EngineVersion = version.Must(version.NewVersion("0.14.0"))
	if c := in.initInvocation(engineargs.InitArgs{}, nil).Call.(initCall); !c.checksVersion() {
		t.Error("an engine before 0.15 is asked its version (init's -lock flags)")
	}
}

// TestWorkspaceInvocation: select, or new.
func TestWorkspaceInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{}, "", nil)
	in.Set["AWS_PROFILE"] = "p"
	sel, create := in.workspaceInvocation("prod", false), in.workspaceInvocation("prod", true)
	if sel.String() != "terraform workspace select prod" || create.String() != "terraform workspace new prod" {
		t.Errorf("workspace: %s / %s", sel, create)
	}
	if sel.Step != report.StepWorkspace || sel.Env["AWS_PROFILE"] != "p" {
		t.Errorf("workspace invocation: %+v", sel)
	}
}

// TestPlanArgs: plan's arguments: the step's, the stack's targets after
// the user's, -destroy when the command destroys; the step's are not
// written.
func TestPlanArgs(t *testing.T) {
	ea := engineargs.EngineArgs{Plan: engineargs.PlanArgs{Targets: []string{"module.a"}, Vars: []string{"x=1"}}}
	args := planArgs(ea, []string{"module.b"}, true)
	if !reflect.DeepEqual(args.Targets, []string{"module.a", "module.b"}) || !args.Destroy || !reflect.DeepEqual(args.Vars, []string{"x=1"}) {
		t.Errorf("plan args = %+v", args)
	}
	if !reflect.DeepEqual(ea.Plan.Targets, []string{"module.a"}) || ea.Plan.Destroy {
		t.Errorf("the step's arguments were written: %+v", ea.Plan)
	}
	if args := planArgs(engineargs.EngineArgs{}, nil, false); len(args.Targets) != 0 || args.Destroy {
		t.Errorf("no arguments: %+v", args)
	}
}

// TestPlanInvocation: plan writes the unit's plan file, strata's var file
// before the user's, and its env leaves TF_VAR_ values to the var file.
func TestPlanInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "plan"}, "plan step 2 (plan)", nil)
	in.Set["TF_VAR_from_env_step"] = "x"
	inv := in.planInvocation(map[string]string{"TF_VAR_size": "9", "AWS_REGION": "eu"}, "/s/vars.json",
		engineargs.PlanArgs{VarFiles: []string{"mine.tfvars"}, Targets: []string{"a.b"}, Destroy: true})
	if got := inv.String(); got != "terraform plan -out=/s/p.tfplan -var-file=/s/vars.json -var-file=mine.tfvars -target=a.b -destroy" {
		t.Errorf("plan = %q", got)
	}
	if inv.Env["AWS_REGION"] != "eu" {
		t.Errorf("plan env: %v", inv.Env)
	}
	for k := range inv.Env {
		if strings.HasPrefix(k, "TF_VAR_") {
			t.Errorf("plan env holds %s", k)
		}
	}
	if got := in.planInvocation(nil, "", engineargs.PlanArgs{}).String(); got != "terraform plan -out=/s/p.tfplan" {
		t.Errorf("a plan with no var file: %q", got)
	}
}

// TestPlanStepOf: the workflow's plan step, where it stands; the default
// one when it has none.
func TestPlanStepOf(t *testing.T) {
	steps := []stacks.RunStep{{Type: "init"}, {Type: "run"}, {Type: "plan", ExtraArgs: []string{"-refresh=false"}}, {Type: "plan"}}
	st, where := planStepOf(steps)
	if where != "plan step 3 (plan)" || !reflect.DeepEqual(st.ExtraArgs, []string{"-refresh=false"}) {
		t.Errorf("planStepOf = %+v %q", st, where)
	}
	st, where = planStepOf([]stacks.RunStep{{Type: "run"}})
	if where != "plan step" || st.Type != "plan" || st.RunOn != "success" {
		t.Errorf("no plan step: %+v %q", st, where)
	}
}

// TestApplyInvocation: a saved plan is applied with no other argument,
// whatever the step's extra_args; its env over the unit's.
func TestApplyInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "apply", ExtraArgs: []string{"-parallelism=2"}}, "apply step 2 (apply)", nil)
	own, err := in.ownEnv()
	if err != nil {
		t.Fatal(err)
	}
	inv := in.applyInvocation(map[string]string{"A": "1"})
	if inv.String() != "terraform apply /s/p.tfplan" || inv.Env["A"] != "1" || inv.Step != report.StepApply || len(own) != 0 {
		t.Errorf("apply = %s %v", inv, inv.Env)
	}
	now := in.applyNowInvocation(nil, "/s/v.json", engineargs.PlanArgs{Targets: []string{"a.b"}}, nil)
	if now.String() != "terraform apply -auto-approve -var-file=/s/v.json -target=a.b" || now.Step != report.StepApply {
		t.Errorf("apply in one call = %s", now)
	}
	called := false
	c := in.applyNowInvocation(nil, "", engineargs.PlanArgs{}, func() { called = true }).Call.(applyNowCall)
	c.OnPlan()
	if !called {
		t.Error("the call does not carry OnPlan")
	}
}

// TestShowInvocation: show -json of the saved plan, or show as people
// read it.
func TestShowInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{}, "", nil)
	if got := in.showInvocation(nil, false).String(); got != "terraform show -json /s/p.tfplan" {
		t.Errorf("show json = %q", got)
	}
	text := in.showInvocation(map[string]string{"K": "v"}, true)
	if text.String() != "terraform show /s/p.tfplan" || text.Env["K"] != "v" || text.Step != report.StepShow {
		t.Errorf("show text = %s", text)
	}
	if !text.Call.checksVersion() || in.showInvocation(nil, false).Call.checksVersion() {
		t.Error("only the text show goes through terraform-exec's version check")
	}
}

// TestLockInvocation: providers lock with the platforms and mirror given.
func TestLockInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{}, "", nil)
	inv := in.lockInvocation(engineargs.LockArgs{Platforms: []string{"linux_amd64", "darwin_arm64"}, Providers: []string{"hashicorp/null"}}, map[string]string{"M": "1"})
	if got := inv.String(); got != "terraform providers lock -platform=linux_amd64 -platform=darwin_arm64 hashicorp/null" {
		t.Errorf("lock = %q", got)
	}
	if inv.Env["M"] != "1" || inv.Step != report.StepLock || inv.Call.checksVersion() {
		t.Errorf("lock invocation: %+v", inv)
	}
}

// TestEngineStepsOnly: a phase applies in one call only when its steps
// are the engine's (and ignored ones), with one step of the phase, and
// an apply step with no env or retry, an init with no arguments.
func TestEngineStepsOnly(t *testing.T) {
	retry := &stacks.RetryPolicy{Tries: 2}
	for _, tc := range []struct {
		name  string
		steps []stacks.RunStep
		phase string
		want  bool
	}{
		{"default plan", []stacks.RunStep{{Type: "init"}, {Type: "plan"}}, "plan", true},
		{"default apply", []stacks.RunStep{{Type: "init"}, {Type: "apply"}}, "apply", true},
		{"plan with oidc and gates", []stacks.RunStep{{Type: "oidc"}, {Type: "init"}, {Type: "plan"}, {Type: "gates"}, {Type: "slack"}}, "plan", true},
		{"a run step", []stacks.RunStep{{Type: "init"}, {Type: "plan"}, {Type: "run"}}, "plan", false},
		{"an env step", []stacks.RunStep{{Type: "env"}, {Type: "plan"}}, "plan", false},
		{"a policy step", []stacks.RunStep{{Type: "plan"}, {Type: "checkov"}}, "plan", false},
		{"no plan step", []stacks.RunStep{{Type: "init"}}, "plan", false},
		{"two plan steps", []stacks.RunStep{{Type: "plan"}, {Type: "plan"}}, "plan", false},
		{"plan step with env", []stacks.RunStep{{Type: "plan", Env: []stacks.EnvVar{{Key: "A"}}}}, "plan", true},
		{"apply with env", []stacks.RunStep{{Type: "apply", Env: []stacks.EnvVar{{Key: "A"}}}}, "apply", false},
		{"apply with retry", []stacks.RunStep{{Type: "apply", Retry: retry}}, "apply", false},
		{"apply's init with args", []stacks.RunStep{{Type: "init", ExtraArgs: []string{"-upgrade"}}, {Type: "apply"}}, "apply", false},
		{"apply's init with env", []stacks.RunStep{{Type: "init", Env: []stacks.EnvVar{{Key: "A"}}}, {Type: "apply"}}, "apply", false},
		{"plan's init with args", []stacks.RunStep{{Type: "init", ExtraArgs: []string{"-upgrade"}}, {Type: "plan"}}, "plan", true},
		{"a plan step in apply", []stacks.RunStep{{Type: "plan"}, {Type: "apply"}}, "apply", false},
	} {
		if got := EngineStepsOnly(tc.steps, tc.phase); got != tc.want {
			t.Errorf("%s: EngineStepsOnly = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestStalePlan: the engine's refusal of a stale saved plan, and nothing
// else.
func TestStalePlan(t *testing.T) {
	for msg, want := range map[string]bool{
		"exit status 1\n\nError: Saved plan is stale\n\nThe given plan file can no longer be applied": true,
		"Error: Failed to load plan file":                   false,
		"Error: Error acquiring the state lock":             false,
		"":                                                  false,
		"wrapped: exit status 1: Error: Saved plan is stale": true,
	} {
		var err error
		if msg != "" {
			err = errorString(msg)
		}
		if got := stalePlan(err); got != want {
			t.Errorf("stalePlan(%q) = %t, want %t", msg, got, want)
		}
	}
}

// errorString is an error with a fixed text.
type errorString string

func (e errorString) Error() string { return string(e) }

// TestWholePlan: a targeted, refresh-only or destroy plan deploys part of
// a unit.
func TestWholePlan(t *testing.T) {
	f := false
	for _, tc := range []struct {
		args engineargs.PlanArgs
		want bool
	}{
		{engineargs.PlanArgs{}, true},
		{engineargs.PlanArgs{Vars: []string{"a=1"}, Refresh: &f, Parallelism: 2}, true},
		{engineargs.PlanArgs{Targets: []string{"a.b"}}, false},
		{engineargs.PlanArgs{RefreshOnly: true}, false},
		{engineargs.PlanArgs{Destroy: true}, false},
		{engineargs.PlanArgs{Replace: []string{"a.b"}}, true},
	} {
		if got := wholePlan(tc.args); got != tc.want {
			t.Errorf("wholePlan(%+v) = %t, want %t", tc.args, got, tc.want)
		}
	}
}
