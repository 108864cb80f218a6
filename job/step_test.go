package job

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// fakeExec stands for what runs a step's processes and OIDC exchanges:
// it keeps what it is asked to run and answers as told.
type fakeExec struct {
	procs []process
	// stdout is written to a process's stdout buffer; err is every
	// process's failure.
	stdout string
	err    error
	// The OIDC exchange: the env it was given, and its answer.
	credEnv map[string]string
	creds   *oidc.Credentials
	credErr error
}

func (f *fakeExec) process(_ context.Context, p process) (report.StepReport, error) {
	f.procs = append(f.procs, p)
	if p.stdout != nil {
		p.stdout.WriteString(f.stdout)
	}
	if f.err != nil {
		// As Run.process says it: the command, then its error.
		return report.StepReport{Name: p.name}, fmt.Errorf("%s: %w", strings.Join(p.argv, " "), f.err)
	}
	return report.StepReport{Name: p.name, OK: true}, nil
}

func (f *fakeExec) credentials(_ context.Context, _ *config.OIDCStep, env map[string]string) (*oidc.Credentials, error) {
	f.credEnv = env
	return f.creds, f.credErr
}

// testClock is a fixed clock.
func testClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// testVars are the stack variables of the test unit.
func testVars() *Vars {
	return VarsOf(&stacks.Stack{Name: "prod", Variables: []stacks.Variable{
		{Name: "region", Value: "eu-west-1"},
		{Name: "TF_VAR_size", Value: "3"},
		{Name: "token", Value: "s3cret", Sensitive: true},
	}})
}

// testInput is a unit's step input, as newJob prepares it, for st.
func testInput(st stacks.RunStep, where string, x *fakeExec) *stepInput {
	in := &stepInput{
		Stack: "prod", UnitID: "net#prod", Who: "net (prod)", Dir: "/repo/net",
		Env: map[string]string{"PATH": "/bin", "HOME": "/home/u", "STRATA_DIR": "net", "STRATA_ROOT": "/repo",
			"STRATA_PLAN_FILE": "/s/p.tfplan", "region": "eu-west-1", "STACK_VAR_REGION": "eu-west-1", "SHARED": "unit"},
		TFVarEnv: map[string]string{"TF_VAR_from_strata": "a", "TF_VAR_size": "3"},
		Set:      map[string]string{},
		Vars:     testVars(),
		Environ:  []string{"USER=me", "GITHUB_TOKEN=ghp", "SHARED=environ"},
		Engine:   "/bin/terraform", PlanFile: "/s/p.tfplan",
		Masker: console.NewMasker(), Now: testClock, exec: x,
	}
	return in.forStep(st, where, st.Type)
}

// testHookInput is a hook step's input for st.
func testHookInput(st stacks.RunStep, where string, x *fakeExec) *stepInput {
	return &stepInput{Step: st, Where: where, Name: where, Hook: true, Who: "hooks", Dir: "/repo",
		Env:     map[string]string{"PATH": "/bin", "STRATA_ROOT": "/repo", "STRATA_TMPDIR": "/tmp/s", "TF_VAR_from_strata": "a"},
		Set:     map[string]string{},
		Environ: []string{"USER=me", "GITHUB_TOKEN=ghp"},
		Masker:  console.NewMasker(), Now: testClock, exec: x}
}

// envOf reads a KEY=VALUE list back as a map.
func envOf(list []string) map[string]string {
	out := map[string]string{}
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// TestStepKinds: every kind a workflow names runs by a kind of the table,
// the engine's own by the engine kinds; the kinds strata ignores are not
// in it.
func TestStepKinds(t *testing.T) {
	want := map[string]stepKind{
		"init": &initStep{}, "plan": &planStep{}, "apply": &applyStep{}, "run": &runStep{}, "env": &envStep{}, "oidc": &oidcStep{},
		"checkov": &toolStep{}, "conftest": &toolStep{}, "opa": &toolStep{},
	}
	if !reflect.DeepEqual(stepKinds, want) {
		t.Errorf("stepKinds = %#v, want %#v", stepKinds, want)
	}
	for _, ignored := range []string{"gates", "gate", "slack", "drift_create_issue", ""} {
		if _, ok := stepKinds[ignored]; ok {
			t.Errorf("%q has a kind; it is accepted and ignored", ignored)
		}
	}
}

// TestLookup: a step's env and arguments see the stack variables first,
// then what earlier steps set, then strata's environment, then the
// unit's; a hook has no stack variables.
func TestLookup(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "run"}, "plan step 1 (run)", nil)
	in.Set["FROM_ENV_STEP"] = "set"
	in.Set["region"] = "shadowed"
	in.Set["USER"] = "from-step"
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"region", "eu-west-1", true},  // the stack variable wins over what a step set
		{"FROM_ENV_STEP", "set", true}, // what an env step set
		{"USER", "from-step", true},    // a step's value over strata's environment
		{"GITHUB_TOKEN", "ghp", true},  // a credential, asked for by name
		{"SHARED", "environ", true},    // strata's environment over the unit's
		{"STRATA_DIR", "net", true},    // the unit's own environment
		{"TF_VAR_size", "3", true},     // a stack variable named TF_VAR_
		{"STACK_VAR_REGION", "eu-west-1", true},
		{"NOWHERE", "", false},
	} {
		got, ok := in.lookup(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("lookup(%q) = %q %t, want %q %t", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	hook := testHookInput(stacks.RunStep{Type: "run"}, "hooks.all.pre[0]", nil)
	if _, ok := hook.lookup("region"); ok {
		t.Error("a hook sees a unit's stack variable")
	}
	if v, ok := hook.lookup("STRATA_ROOT"); !ok || v != "/repo" {
		t.Errorf("a hook's STRATA_ROOT = %q %t", v, ok)
	}
}

// TestCmdLookup: a cmd sees stack variables, their STACK_VAR_ names and
// strata's own values, never the environment nor what steps set.
func TestCmdLookup(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "run"}, "plan step 1 (run)", nil)
	in.Set["FROM_ENV_STEP"] = "x"
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"region", "eu-west-1", true},
		{"STACK_VAR_REGION", "eu-west-1", true},
		{"STRATA_DIR", "net", true},
		{"STRATA_PLAN_FILE", "/s/p.tfplan", true},
		{"STRATA_TMPDIR", "", false}, // strata's name, not set for this unit
		{"FROM_ENV_STEP", "", false},
		{"USER", "", false},
		{"PATH", "", false},
		{"GITHUB_TOKEN", "", false},
	} {
		got, ok := in.cmdLookup(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("cmdLookup(%q) = %q %t, want %q %t", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	hook := testHookInput(stacks.RunStep{Type: "run"}, "hooks.all.pre[0]", nil)
	if v, ok := hook.cmdLookup("STRATA_TMPDIR"); !ok || v != "/tmp/s" {
		t.Errorf("a hook's cmd STRATA_TMPDIR = %q %t", v, ok)
	}
	if _, ok := hook.cmdLookup("PATH"); ok {
		t.Error("a hook's cmd sees PATH")
	}
}

// TestUnknown: a unit's unknown name is a SubstitutionError naming the
// stack and where; a hook's names the hook, with the words of each place.
func TestUnknown(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "run"}, "plan step 1 (run)", nil)
	var se *SubstitutionError
	if err := in.unknown("X", "plan step 1 (run).cmd", true); !errors.As(err, &se) || se.Name != "X" || se.Stack != "prod" || se.Where != "plan step 1 (run).cmd" || !se.InCmd {
		t.Errorf("unit cmd: %#v", err)
	}
	if err := in.unknown("X", "targets", false); !errors.As(err, &se) || se.InCmd || !strings.Contains(err.Error(), "not a stack variable nor in the environment") {
		t.Errorf("unit env: %v", err)
	}
	hook := testHookInput(stacks.RunStep{Type: "run"}, "hooks.all.pre[0]", nil)
	for _, tc := range []struct {
		inCmd bool
		want  string
	}{
		{true, `unknown variable "X" in hooks.all.pre[0].cmd: a hook's cmd takes only strata's own values`},
		{false, `unknown variable "X" in hooks.all.pre[0].env.K: not set by a hook nor in the environment; write $$ for a literal $`},
	} {
		at := "hooks.all.pre[0].env.K"
		if tc.inCmd {
			at = "hooks.all.pre[0].cmd"
		}
		err := hook.unknown("X", at, tc.inCmd)
		if errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("hook (cmd %t): %v, want %q", tc.inCmd, err, tc.want)
		}
	}
}

// TestSubst: substitution of one value and of a list, $$ as a literal $,
// and the first unknown name reported where it was written.
func TestSubst(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "plan"}, "plan step 2 (plan)", nil)
	for _, tc := range []struct{ s, want, err string }{
		{"${region}", "eu-west-1", ""},
		{"$region-x", "eu-west-1-x", ""}, // a name ends where a name's characters do
		{"${region}-x", "eu-west-1-x", ""},
		{"cost $$5", "cost $5", ""},
		{"no names", "no names", ""},
		{"${STRATA_DIR}/${NOPE}", "", `"NOPE"`},
	} {
		got, err := in.subst(tc.s, "here")
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "in here (stack prod)")):
			t.Errorf("subst(%q): error %v, want one naming %s", tc.s, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("subst(%q) = %q %v, want %q", tc.s, got, err, tc.want)
		}
	}
	all, err := in.substAll([]string{"-var=r=${region}", "-lock=false"}, "x")
	if err != nil || !reflect.DeepEqual(all, []string{"-var=r=eu-west-1", "-lock=false"}) {
		t.Errorf("substAll = %q %v", all, err)
	}
	if _, err := in.substAll([]string{"ok", "$MISSING"}, "plan step 2 (plan).extra_args"); err == nil || !strings.Contains(err.Error(), "plan step 2 (plan).extra_args") {
		t.Errorf("substAll with an unknown name: %v", err)
	}
}

// TestOwnEnv: a step's env substituted under its names, TF_VAR_ ones
// kept; an unknown name is reported at where.env.KEY; the later of two
// entries of one name wins.
func TestOwnEnv(t *testing.T) {
	st := stacks.RunStep{Type: "plan", Env: []stacks.EnvVar{
		{Key: "AWS_REGION", Value: "${region}"}, {Key: "TF_VAR_size", Value: "5"}, {Key: "A", Value: "1"}, {Key: "A", Value: "2"},
	}}
	own, err := testInput(st, "plan step 2 (plan)", nil).ownEnv()
	want := map[string]string{"AWS_REGION": "eu-west-1", "TF_VAR_size": "5", "A": "2"}
	if err != nil || !reflect.DeepEqual(own, want) {
		t.Errorf("ownEnv = %v %v, want %v", own, err, want)
	}
	st.Env = append(st.Env, stacks.EnvVar{Key: "B", Value: "$UNSET"})
	_, err = testInput(st, "plan step 2 (plan)", nil).ownEnv()
	var se *SubstitutionError
	if !errors.As(err, &se) || se.Where != "plan step 2 (plan).env.B" || se.Name != "UNSET" {
		t.Errorf("unknown in env: %v", err)
	}
	if got := tfVarsOf(own); !reflect.DeepEqual(got, map[string]string{"size": "5"}) {
		t.Errorf("tfVarsOf = %v", got)
	}
}

// TestEngineEnv: an engine call's environment is the unit's, under what
// earlier steps set, under the step's own; no TF_VAR_ value reaches it.
func TestEngineEnv(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "plan"}, "plan step 2 (plan)", nil)
	in.Set["SHARED"] = "step"
	in.Set["TF_VAR_x"] = "no"
	in.Set["FROM_ENV"] = "1"
	env := in.engineEnv(map[string]string{"FROM_ENV": "own", "TF_VAR_size": "9", "AWS_PROFILE": "p"})
	for k, want := range map[string]string{"PATH": "/bin", "SHARED": "step", "FROM_ENV": "own", "AWS_PROFILE": "p", "STRATA_DIR": "net"} {
		if env[k] != want {
			t.Errorf("engineEnv[%s] = %q, want %q", k, env[k], want)
		}
	}
	for k := range env {
		if strings.HasPrefix(k, "TF_VAR_") {
			t.Errorf("engineEnv holds %s", k)
		}
	}
	if _, ok := env["USER"]; ok {
		t.Error("strata's own environment reached an engine call past the unit's")
	}
	if in.Env["SHARED"] != "unit" {
		t.Error("engineEnv wrote the unit's environment")
	}
}

// TestProcessEnv: a process's environment holds what an engine's does and
// the TF_VAR_ values, each level over the one before: strata's and the
// stack's, then what steps set, then the step's own.
func TestProcessStepEnv(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "run"}, "plan step 1 (run)", nil)
	in.Set["TF_VAR_size"] = "4"
	in.Set["SHARED"] = "step"
	env := envOf(in.processEnv(map[string]string{"TF_VAR_from_strata": "own", "X": "1"}))
	want := map[string]string{"TF_VAR_from_strata": "own", "TF_VAR_size": "4", "SHARED": "step", "X": "1", "PATH": "/bin", "STRATA_ROOT": "/repo"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("processEnv[%s] = %q, want %q", k, env[k], v)
		}
	}
	list := in.processEnv(nil)
	for i := 1; i < len(list); i++ {
		if list[i-1] > list[i] {
			t.Fatalf("processEnv is not sorted: %q before %q", list[i-1], list[i])
		}
	}
}

// TestInvocation: an engine call is built from the input alone: the
// engine, the unit's dir, the engine environment with the step's own.
func TestInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "plan"}, "plan step 2 (plan)", nil)
	inv := in.invocation(report.StepShow, map[string]string{"A": "1", "TF_VAR_b": "2"}, &showCall{File: in.PlanFile})
	if inv.Step != "show" || inv.Engine != "/bin/terraform" || inv.Dir != "/repo/net" || inv.String() != "terraform show -json /s/p.tfplan" {
		t.Errorf("invocation = %+v (%s)", inv, inv)
	}
	if inv.Env["A"] != "1" || inv.Env["PATH"] != "/bin" {
		t.Errorf("invocation env = %v", inv.Env)
	}
	if _, ok := inv.Env["TF_VAR_b"]; ok {
		t.Error("a TF_VAR_ value reached an engine call's environment")
	}
	inv.Env["A"] = "changed"
	if again := in.invocation(report.StepShow, map[string]string{"A": "1"}, &showCall{}); again.Env["A"] != "1" {
		t.Error("two invocations share an environment")
	}
}

// TestForStep: a step's input is a copy: its step, where and name are its
// own; what steps set is shared.
func TestForStep(t *testing.T) {
	base := testInput(stacks.RunStep{}, "", nil)
	a := base.forStep(stacks.RunStep{Type: "run"}, "plan step 1 (run)", "run")
	b := base.forStep(stacks.RunStep{Type: "env"}, "plan step 2 (env)", "env")
	if a.Step.Type != "run" || a.Where != "plan step 1 (run)" || a.Name != "run" || b.Name != "env" || base.Name != "" {
		t.Errorf("forStep: %q %q %q / %q", a.Step.Type, a.Where, a.Name, b.Name)
	}
	a.Set["X"] = "1"
	if b.Set["X"] != "1" {
		t.Error("what one step set is not seen by the next")
	}
}

// TestProcessTemplate: a step's process names the step, runs in its dir,
// and says whose it is; a hook's stdout goes where stderr goes.
func TestProcessTemplate(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "run"}, "plan step 1 (run)", nil)
	p := in.process([]string{"echo"}, []string{"A=1"})
	if p.name != "run" || p.where != "plan step 1 (run)" || p.dir != "/repo/net" || p.who != "net (prod)" || p.unitID != "net#prod" || p.errSide || p.masker != in.Masker {
		t.Errorf("process = %+v", p)
	}
	h := testHookInput(stacks.RunStep{Type: "run"}, "hooks.all.pre[0]", nil).process([]string{"echo"}, nil)
	if h.name != "hooks.all.pre[0]" || h.dir != "/repo" || h.who != "hooks" || h.unitID != "" || !h.errSide {
		t.Errorf("hook process = %+v", h)
	}
}

// TestEngineArgs: an engine step's extra_args, substituted, are read as
// its command's and merged with the command's engine arguments; bad ones
// name the step.
func TestEngineArgs(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "plan", ExtraArgs: []string{"-var=region=${region}", "-parallelism=3"},
		Env: []stacks.EnvVar{{Key: "TF_VAR_x", Value: "1"}}}, "plan step 2 (plan)", nil)
	in.EngineArgs = engineargs.EngineArgs{Plan: engineargs.PlanArgs{Targets: []string{"a.b"}}}
	ea, own, err := in.engineStep("plan")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ea.Plan.Vars, []string{"region=eu-west-1"}) || ea.Plan.Parallelism != 3 || !reflect.DeepEqual(ea.Plan.Targets, []string{"a.b"}) {
		t.Errorf("plan args = %+v", ea.Plan)
	}
	if own["TF_VAR_x"] != "1" {
		t.Errorf("own env = %v", own)
	}
	none := testInput(stacks.RunStep{Type: "plan"}, "plan step 2 (plan)", nil)
	none.EngineArgs = in.EngineArgs
	if ea, _, err := none.engineStep("plan"); err != nil || !reflect.DeepEqual(ea, in.EngineArgs) {
		t.Errorf("no extra_args: %+v %v", ea, err)
	}
	bad := testInput(stacks.RunStep{Type: "init", ExtraArgs: []string{"${nope}"}}, "plan step 1 (init)", nil)
	if _, _, err := bad.engineStep("init"); err == nil || !strings.Contains(err.Error(), "plan step 1 (init).extra_args") {
		t.Errorf("unknown name in extra_args: %v", err)
	}
	envFirst := testInput(stacks.RunStep{Type: "init", ExtraArgs: []string{"${nope}"}, Env: []stacks.EnvVar{{Key: "K", Value: "$alsonope"}}}, "w", nil)
	if _, _, err := envFirst.engineStep("init"); err == nil || !strings.Contains(err.Error(), `"alsonope"`) {
		t.Errorf("the env is read before extra_args: %v", err)
	}
}

// TestNoProcessAfterHandOff: a job's last step hands its worker slot on
// once, and a job that handed its slot on starts no engine: the call
// fails, saying why, and nothing runs.
func TestNoProcessAfterHandOff(t *testing.T) {
	handOffs := 0
	in := testInput(stacks.RunStep{Type: report.StepApply}, "apply step 1 (apply)", &fakeExec{})
	in.run = &Run{Now: testClock}
	in.slot = &slot{handOff: func() { handOffs++ }}
	in.handOff()
	if handOffs != 0 {
		t.Fatalf("a step that is not the job's last handed the slot on")
	}
	in.last = true
	in.handOff()
	in.handOff()
	if handOffs != 1 {
		t.Fatalf("%d hand-offs, want one", handOffs)
	}
	_, err := in.step(context.Background(), report.StepApply, invocation{Step: report.StepApply, Engine: "/nonexistent/terraform", Dir: t.TempDir(), Call: &applyNowCall{}}, false)
	if err == nil || !strings.Contains(err.Error(), "apply would start after the job handed its worker slot on") {
		t.Fatalf("engine call after the hand-off: %v", err)
	}
	if len(*in.reports) != 1 || (*in.reports)[0].OK {
		t.Errorf("the call is reported as a failed step: %+v", *in.reports)
	}
}
