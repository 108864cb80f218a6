package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// TestPrepareInputs: the var file holds strata's, the stack's, env
// steps' and the step's TF_VAR_ values for declared variables; the
// digest changes with the step's values and arguments, not with what env
// steps set (a reused plan's workflow does not run again).
func TestPrepareInputs(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	content, err := j.in.prepareInputsWith(engineargs.EngineArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var vars map[string]any
	if err := json.Unmarshal(content, &vars); err != nil || vars["size"] != float64(3) || len(vars) != 1 {
		t.Fatalf("var file %s: %v", content, err)
	}
	digest := j.in.memo.digest
	if len(digest) < 16 {
		t.Fatalf("digest %q", digest)
	}
	j.in.Set["TF_VAR_region"] = "from-env-step"
	content, err = j.in.prepareInputsWith(engineargs.EngineArgs{}, nil)
	if err != nil || !strings.Contains(string(content), `"region": "from-env-step"`) || j.in.memo.digest != digest {
		t.Errorf("an env step's value: %s, digest %q (was %q), %v", content, j.in.memo.digest, digest, err)
	}
	if _, err := j.in.prepareInputsWith(engineargs.EngineArgs{}, map[string]string{"size": "5"}); err != nil || j.in.memo.digest == digest {
		t.Errorf("the step's own TF_VAR_ value does not change the digest: %v", err)
	}
	stepDigest := j.in.memo.digest
	if _, err := j.in.prepareInputsWith(engineargs.EngineArgs{Text: []string{"-refresh=false"}}, map[string]string{"size": "5"}); err != nil || j.in.memo.digest == stepDigest {
		t.Errorf("the engine arguments do not change the digest: %v", err)
	}
	if _, err := j.in.prepareInputsWith(engineargs.EngineArgs{}, nil); err != nil || j.in.memo.digest != digest {
		t.Errorf("the same inputs, another digest: %q, want %q", j.in.memo.digest, digest)
	}
}

// TestTargets: the stack's targets, substituted, as -target arguments.
func TestTargets(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.ur.Spec.Stack.Targets = []string{"module.${region}", "aws_s3_bucket.b"}
	targets, err := j.in.targets()
	if err != nil || strings.Join(targetArgs(targets), " ") != "-target=module.eu-west-1 -target=aws_s3_bucket.b" {
		t.Errorf("targets = %q %v", targets, err)
	}
	j.ur.Spec.Stack.Targets = []string{"${nope}"}
	if _, err := j.in.targets(); err == nil || !strings.Contains(err.Error(), `"nope" in targets`) {
		t.Errorf("an unknown name in targets: %v", err)
	}
	if _, err := j.in.prepareInputs(); err == nil {
		t.Error("the digest was computed over targets that could not be read")
	}
}

// TestWriteVarFile: the var file is written 0600 for one call and emptied
// after it, its name kept for the next; a link planted at its path is
// replaced, never written through; no content removes one left over.
func TestWriteVarFile(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	path, empty, err := j.in.writeVarFile([]byte(`{"a": 1}`))
	if err != nil || path != j.ur.VarFile {
		t.Fatalf("writeVarFile = %q %v", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("var file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"a": 1}` {
		t.Errorf("during the call the var file holds %q", b)
	}
	empty()
	if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
		t.Errorf("after the call the var file holds %q (%v), want it empty", b, err)
	}

	// A shorter content after a longer one leaves nothing of the longer.
	_, empty, err = j.in.writeVarFile([]byte(`{}`))
	if b, _ := os.ReadFile(path); err != nil || string(b) != `{}` {
		t.Errorf("rewritten: %q %v", b, err)
	}
	empty()

	// A link planted at the var file's path: the file it points to is
	// neither written nor emptied.
	target := filepath.Join(t.TempDir(), "main.tf")
	os.WriteFile(target, []byte("tracked"), 0o644)
	os.Remove(path)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	_, empty, err = j.in.writeVarFile([]byte(`{"secret": "s"}`))
	if err != nil {
		t.Fatal(err)
	}
	empty()
	if b, _ := os.ReadFile(target); string(b) != "tracked" {
		t.Errorf("the link's target holds %q", b)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v %v", fi, err)
	}

	os.WriteFile(j.ur.VarFile, []byte("old"), 0o600)
	path, empty, err = j.in.writeVarFile(nil)
	empty()
	if path != "" || err != nil {
		t.Errorf("no content: %q %v", path, err)
	}
	if _, err := os.Stat(j.ur.VarFile); !os.IsNotExist(err) {
		t.Error("an old var file was left")
	}
}

// savedPlan records a saved plan of the job's unit made at, with the
// job's digest, and writes its file.
func savedPlan(t *testing.T, j *job, at time.Time, change func(*runstate.PlanRecord)) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(j.ur.PlanFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.ur.PlanFile, []byte("plan"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runstate.PlanRecord{Digest: j.in.memo.digest, HasChanges: true, Changes: report.Changes{Add: 1}, At: at, Command: "plan",
		ChangeSet: "cs", OutputsKnown: true, ChangedOutputs: []string{"id"}, Gates: []report.Gate{{Token: "g"}}}
	if change != nil {
		change(p)
	}
	if err := j.run.State.UpdateUnit(j.ur.Spec, func(s *runstate.UnitState) { s.Plan = p }); err != nil {
		t.Fatal(err)
	}
}

// TestReusePlan: a saved plan is reused when its digest is current, it is
// no destroy plan, its file is there and no unit planned before it was
// applied since; its record gives the job's result.
func TestReusePlan(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		change func(*runstate.PlanRecord)
		noFile bool
		after  *runstate.ApplyRecord
		want   bool
	}{
		{name: "current", want: true},
		{name: "another digest", change: func(p *runstate.PlanRecord) { p.Digest = "other" }},
		{name: "destroy", change: func(p *runstate.PlanRecord) { p.Destroy = true }},
		{name: "no file", noFile: true},
		{name: "a predecessor applied since", after: &runstate.ApplyRecord{At: at.Add(time.Hour), Result: report.StatusApplied}},
		{name: "a predecessor applied before", after: &runstate.ApplyRecord{At: at.Add(-time.Hour), Result: report.StatusApplied}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			j := testJob(t, workflowYML, &fakeExec{}, &out)
			j.in.memo.digest = "d1"
			savedPlan(t, j, at, tc.change)
			if tc.noFile {
				os.Remove(j.ur.PlanFile)
			}
			if tc.after != nil {
				pred := &stacks.Unit{Dirspace: &stacks.Dirspace{Dir: "other", Workspace: "default"}, Stack: j.ur.Spec.Stack}
				if err := j.run.State.UpdateUnit(pred, func(s *runstate.UnitState) { s.Apply = tc.after }); err != nil {
					t.Fatal(err)
				}
				j.ur.PlanAfter = [][]*stacks.Unit{{pred}}
			}
			us, err := j.run.State.ReadUnit(j.ur.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := j.reusePlan(us); got != tc.want {
				t.Fatalf("reusePlan = %t, want %t", got, tc.want)
			}
			if !tc.want {
				if j.res.HasChanges || out.Len() != 0 {
					t.Errorf("a plan not reused set %+v, said %q", j.res, out.String())
				}
				return
			}
			if !j.res.HasChanges || j.res.Changes != (report.Changes{Add: 1}) || j.res.ChangeSet != "cs" || len(j.res.Gates) != 1 || !j.res.OutputsKnown {
				t.Errorf("result = %+v", j.res)
			}
			if !strings.Contains(out.String(), "reusing the plan saved at 2026-01-01T00:00:00Z") {
				t.Errorf("notes: %q", out.String())
			}
		})
	}
	var out bytes.Buffer
	if j := testJob(t, workflowYML, &fakeExec{}, &out); j.reusePlan(nil) || j.reusePlan(&runstate.UnitState{}) {
		t.Error("no record, or no plan, reused")
	}
}

// TestRecordGates: the gates the plan workflow raised join the saved
// plan's record, when it is the job's plan.
func TestRecordGates(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.in.memo.digest = "d1"
	savedPlan(t, j, testClock(), func(p *runstate.PlanRecord) { p.Gates = nil })
	j.res.Gates = []report.Gate{{Step: "plan step 3 (run)", Token: "sec"}}
	j.recordGates(context.Background())
	us, err := j.run.State.ReadUnit(j.ur.Spec)
	if err != nil || len(us.Plan.Gates) != 1 || us.Plan.Gates[0].Token != "sec" {
		t.Errorf("gates recorded: %+v %v", us.Plan, err)
	}
	j.in.memo.digest = "other"
	j.res.Gates = append(j.res.Gates, report.Gate{Token: "two"})
	j.recordGates(context.Background())
	if us, _ := j.run.State.ReadUnit(j.ur.Spec); len(us.Plan.Gates) != 1 {
		t.Errorf("gates recorded on another plan: %+v", us.Plan.Gates)
	}
}

// TestWritePlanJSON: the plan's JSON lands under the dir by the unit's
// dir and workspace (and stack when the dir is shared), 0600.
func TestWritePlanJSON(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	dir := t.TempDir()
	if err := j.in.writePlanJSON(dir, []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "net", "default.json"))
	if err != nil || string(b) != `{"x":1}` {
		t.Errorf("plan JSON: %q %v", b, err)
	}
	j.ur.Spec.Shared = true
	if err := j.in.writePlanJSON(dir, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "net", "default#prod.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a shared dir's plan JSON: %v %v", fi, err)
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

// TestPlanStepRun: a plan step hands the plan it built to the engine:
// its extra_args merged with the command's, its env with TF_VAR_ values;
// one it cannot build fails as plan's.
func TestPlanStepRun(t *testing.T) {
	e := &fakeEngine{}
	in := testInput(stacks.RunStep{Type: "plan", ExtraArgs: []string{"-var=r=${region}"}, Env: []stacks.EnvVar{{Key: "TF_VAR_size", Value: "4"}}},
		"plan step 2 (plan)", nil)
	in.engine = e
	in.EngineArgs = engineargs.EngineArgs{Plan: engineargs.PlanArgs{Parallelism: 2}}
	if out := (&planStep{}).run(context.Background(), in); out.Err != nil || len(e.plans) != 1 {
		t.Fatalf("out %+v, plans %+v", out, e.plans)
	}
	req := e.plans[0]
	if !reflect.DeepEqual(req.Args.Plan.Vars, []string{"r=eu-west-1"}) || req.Args.Plan.Parallelism != 2 || req.Env["TF_VAR_size"] != "4" {
		t.Errorf("plan request = %+v", req)
	}
	bad := testInput(stacks.RunStep{Type: "plan", ExtraArgs: []string{"-upgrade"}}, "plan step 2 (plan)", nil)
	bad.engine = e
	if out := (&planStep{}).run(context.Background(), bad); out.Err == nil || out.Failed != report.StepPlan || len(e.plans) != 1 {
		t.Errorf("a plan that cannot be built: %+v", out)
	}
	learnt := &planResult{HasChanges: true}
	e.planned = []*planResult{learnt, {Err: errors.New("state locked"), Failed: report.StepState}}
	if out := (&planStep{}).run(context.Background(), in); out.Err != nil || out.Plan != learnt {
		t.Errorf("a plan's result is the step's: %+v", out)
	}
	if out := (&planStep{}).run(context.Background(), in); out.Err == nil || out.Failed != report.StepState || out.Plan == nil || out.Plan.Err != out.Err {
		t.Errorf("a plan's failure is the step's, under the step that failed: %+v", out)
	}
}
