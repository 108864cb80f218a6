package job

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// TestInitStepBuild: an init step's arguments come from its extra_args,
// substituted and read as init's, merged with the command's; its env is
// its own.
func TestInitStepBuild(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "init", ExtraArgs: []string{"-backend-config=key=${region}/state", "-upgrade"},
		Env: []stacks.EnvVar{{Key: "TF_TOKEN_app_example_com", Value: "${GITHUB_TOKEN}"}}}, "plan step 1 (init)", nil)
	in.EngineArgs = engineargs.EngineArgs{Init: engineargs.InitArgs{Reconfigure: true}}
	req, err := (&initStep{}).build(in)
	if err != nil {
		t.Fatal(err)
	}
	args, own := req.Args, req.Env
	if req.Always {
		t.Error("an init step of a plan asks to init even when current")
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
	if _, err := (&initStep{}).build(testInput(stacks.RunStep{Type: "init", ExtraArgs: []string{"-out=x"}}, "plan step 1 (init)", nil)); err == nil ||
		!strings.Contains(err.Error(), "plan step 1 (init): extra_args") {
		t.Errorf("a plan flag in init's extra_args: %v", err)
	}
}

// TestInitInvocationVersion: init knows the engine's version, and then
// runs without terraform-exec's extra `version` start.
func TestInitInvocationVersion(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "init"}, "plan step 1 (init)", nil)
	if c := in.initInvocation(engineargs.InitArgs{}, nil).Call.(*initCall); c.Version != nil || !c.checksVersion() {
		t.Errorf("no version known: %+v checks %t", c, c.checksVersion())
	}
	in.EngineVersion = version.Must(version.NewVersion("1.11.4"))
	if c := in.initInvocation(engineargs.InitArgs{}, nil).Call.(*initCall); c.Version == nil || c.checksVersion() {
		t.Errorf("a known version: %+v checks %t", c, c.checksVersion())
	}
	in.EngineVersion = version.Must(version.NewVersion("0.14.0"))
	if c := in.initInvocation(engineargs.InitArgs{}, nil).Call.(*initCall); !c.checksVersion() {
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

// TestInitCurrent: init is skipped when the recorded fingerprint is the
// current one and the data dir the record saw is there; the fingerprint
// changes with init's arguments.
func TestInitCurrent(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	fp, err := j.in.fingerprint(engineargs.InitArgs{})
	if err != nil || fp == "" {
		t.Fatalf("fingerprint %q %v", fp, err)
	}
	if other, _ := j.in.fingerprint(engineargs.InitArgs{BackendConfig: []string{"key=x"}}); other == fp {
		t.Error("init's arguments do not change the fingerprint")
	}
	if j.in.initCurrent(fp) {
		t.Error("current with no record")
	}
	record := func(dataDir bool) {
		err := j.run.State.UpdateUnit(j.ur.Spec, func(s *runstate.UnitState) { s.Init = &runstate.InitRecord{Fingerprint: fp, DataDir: dataDir} })
		if err != nil {
			t.Fatal(err)
		}
	}
	record(false)
	if !j.in.initCurrent(fp) || j.in.initCurrent("other") {
		t.Error("a record with no data dir")
	}
	record(true)
	if j.in.initCurrent(fp) {
		t.Error("current though the data dir the record saw is gone")
	}
	if err := os.MkdirAll(j.ur.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if !j.in.initCurrent(fp) {
		t.Error("not current with its data dir there")
	}
	if !j.init(context.Background(), false, false, engineargs.InitArgs{}, nil) || !j.ur.Inited || len(j.res.Steps) != 0 {
		t.Errorf("a current init ran: inited %t, steps %+v", j.ur.Inited, j.res.Steps)
	}
}

// TestWorkspaceCurrent: no engine call when the data dir has the unit's
// workspace selected, or the unit selects none.
func TestWorkspaceCurrent(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.ur.Spec.CreateAndSelectWorkspace = true
	if err := os.MkdirAll(j.ur.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if !j.workspace(context.Background(), true) || len(j.res.Steps) != 0 {
		t.Errorf("default selected: steps %+v", j.res.Steps)
	}
	j.ur.Spec.CreateAndSelectWorkspace = false
	j.ur.Spec.Workspace = "prod"
	if !j.workspace(context.Background(), true) || len(j.res.Steps) != 0 {
		t.Errorf("no workspace to select: steps %+v", j.res.Steps)
	}
}

// fakeEngine stands for the job's engine steps: it keeps the requests
// the engine kinds build, and answers each plan and apply with the next
// of planned and applied (a plan that learnt nothing, an apply that
// ended well, when none is left).
type fakeEngine struct {
	inits   []initRequest
	plans   []planRequest
	applies []applyRequest
	planned []*planResult
	applied []applyResult
}

func (f *fakeEngine) init(_ context.Context, _ *stepInput, req initRequest) error {
	f.inits = append(f.inits, req)
	return nil
}
func (f *fakeEngine) plan(_ context.Context, _ *stepInput, req planRequest) *planResult {
	f.plans = append(f.plans, req)
	if len(f.planned) == 0 {
		return nil
	}
	r := f.planned[0]
	f.planned = f.planned[1:]
	return r
}
func (f *fakeEngine) apply(_ context.Context, _ *stepInput, req applyRequest) applyResult {
	f.applies = append(f.applies, req)
	var r applyResult
	if len(f.applied) > 0 {
		r, f.applied = f.applied[0], f.applied[1:]
	}
	r.Request = req
	if r.Failed == "" || r.Failed == report.StepApply {
		r.Reports = []report.StepReport{{Name: report.StepApply, OK: r.Err == nil}}
	}
	return r
}

// TestInitStepRun: an init step hands the init it built to the engine,
// always in the init command; one it cannot build fails as init's,
// reaching no engine.
func TestInitStepRun(t *testing.T) {
	e := &fakeEngine{}
	in := testInput(stacks.RunStep{Type: "init", ExtraArgs: []string{"-upgrade"}}, "init step 1 (init)", nil)
	in.engine, in.InitAlways = e, true
	if out := (&initStep{}).run(context.Background(), in); out.Err != nil || len(e.inits) != 1 || !e.inits[0].Always || !e.inits[0].Args.Upgrade {
		t.Errorf("out %+v, inits %+v", out, e.inits)
	}
	bad := testInput(stacks.RunStep{Type: "init", Env: []stacks.EnvVar{{Key: "K", Value: "$NOPE"}}}, "plan step 1 (init)", nil)
	bad.engine = e
	out := (&initStep{}).run(context.Background(), bad)
	if out.Err == nil || out.Failed != report.StepInit || len(e.inits) != 1 {
		t.Errorf("an init that cannot be built: %+v, %d inits", out, len(e.inits))
	}
}
