package job

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// testJob is a job of the one unit of a project whose config is yml,
// its steps' processes run by x, its console writing to out.
func testJob(t *testing.T, yml string, x *fakeExec, out *bytes.Buffer) *job {
	t.Helper()
	root := t.TempDir()
	testenv.WriteFile(t, root+"/strata.yml", yml)
	testenv.WriteFile(t, root+"/net/main.tf", "variable \"size\" { type = number }\nvariable \"region\" {}\n")
	p, err := stacks.Load(root, root+"/strata.yml")
	if err != nil {
		t.Fatal(err)
	}
	u := p.UnitsIn("net")[0]
	r := testRun(out)
	r.Project, r.Policy = p, &command.Policy{Job: command.JobPlan}
	if r.State, err = runstate.OpenStateDir(filepath.Join(root, ".strata")); err != nil {
		t.Fatal(err)
	}
	vars := VarsOf(u.Stack)
	ur := &Unit{Spec: u, Vars: vars, Dir: root + "/net", Masker: console.NewMasker(vars.Secrets()...), TmpDir: t.TempDir(),
		DataDir: root + "/net/.terraform", PlanFile: filepath.Join(r.State.Path, "plans", "net", "default.tfplan"), VarFile: filepath.Join(r.State.Path, "vars", "net.json"),
		Engine: &engines.Engine{Name: "terraform", Version: version.Must(version.NewVersion("1.11.4")), Path: "/bin/terraform"},
		Env:    UnitEnv(UnitEnvInput{Base: map[string]string{"PATH": "/bin"}, Unit: u, Vars: vars, Root: root, Engine: "terraform"})}
	j := newJob(r, ur)
	j.in.exec = x
	return j
}

const workflowYML = `dirs:
  net: {tags: [net]}
stacks:
  names:
    prod:
      tag_query: net
      variables: {region: eu-west-1, TF_VAR_size: '3'}
workflows:
  - tag_query: ''
    environment: 'env-${region}'
    plan:
      - {type: env, name: FROM_STEP, cmd: [echo, x]}
      - {type: run, cmd: [check, '${region}'], env: {SEEN: '${FROM_STEP}', ENV: '${STRATA_ENVIRONMENT}'}}
      - {type: slack}
      - {type: run, cmd: [cleanup], run_on: failure}
      - {type: run, cmd: [report], run_on: always}
`

// TestRunWorkflow: a phase's steps run in order by their kinds; what an
// env step sets reaches the later steps' environment; the workflow's
// environment is set first; a kind strata ignores is skipped; failure
// steps run only after a failure, always steps always.
func TestRunWorkflow(t *testing.T) {
	var out bytes.Buffer
	x := &fakeExec{stdout: "from-env-step\n"}
	j := testJob(t, workflowYML, x, &out)
	steps := j.run.workflowSteps(j.ur, report.StepPlan)
	j.runWorkflow(context.Background(), report.StepPlan, steps)
	if j.res.Err != nil {
		t.Fatal(j.res.Err)
	}
	var argv [][]string
	for _, p := range x.procs {
		argv = append(argv, p.argv)
	}
	if want := [][]string{{"echo", "x"}, {"check", "eu-west-1"}, {"report"}}; !reflect.DeepEqual(argv, want) {
		t.Errorf("processes = %q, want %q", argv, want)
	}
	env := envOf(x.procs[1].env)
	if env["SEEN"] != "from-env-step" || env["FROM_STEP"] != "from-env-step" || env["ENV"] != "env-eu-west-1" || env["STRATA_ENVIRONMENT"] != "env-eu-west-1" {
		t.Errorf("the run step's env: SEEN=%q FROM_STEP=%q ENV=%q", env["SEEN"], env["FROM_STEP"], env["ENV"])
	}
	if env["TF_VAR_size"] != "3" || env["TERRATEAM_ENVIRONMENT"] != "env-eu-west-1" {
		t.Errorf("TF_VAR_size=%q TERRATEAM_ENVIRONMENT=%q", env["TF_VAR_size"], env["TERRATEAM_ENVIRONMENT"])
	}
	if x.procs[0].where != "plan step 1 (env)" || x.procs[2].where != "plan step 5 (run)" {
		t.Errorf("where: %q %q", x.procs[0].where, x.procs[2].where)
	}
	if len(j.res.Steps) != 3 {
		t.Errorf("%d step reports, want 3", len(j.res.Steps))
	}
	if j.in.Set["FROM_STEP"] != "from-env-step" {
		t.Errorf("the job's Set: %v", j.in.Set)
	}
	if !strings.Contains(out.String(), "env: set FROM_STEP") {
		t.Errorf("notes: %q", out.String())
	}
}

// TestRunWorkflowFailure: after a failure only failure and always steps
// run, and the first failure stays the unit's even when one of those
// fails too.
func TestRunWorkflowFailure(t *testing.T) {
	var out bytes.Buffer
	x := &fakeExec{err: errors.New("exit status 1")}
	j := testJob(t, workflowYML, x, &out)
	j.runWorkflow(context.Background(), report.StepPlan, j.run.workflowSteps(j.ur, report.StepPlan))
	if j.res.Err == nil || j.res.FailedStep != "env" || !strings.Contains(j.res.Err.Error(), "exit status 1") {
		t.Errorf("failure: %v in %q", j.res.Err, j.res.FailedStep)
	}
	var argv []string
	for _, p := range x.procs {
		argv = append(argv, p.argv[0])
	}
	if want := []string{"echo", "cleanup", "report"}; !reflect.DeepEqual(argv, want) {
		t.Errorf("ran %q, want %q", argv, want)
	}
	if len(j.in.Set) != 2 {
		t.Errorf("a failed env step set %v", j.in.Set)
	}
}

// TestRunWorkflowSubstitution: a workflow's environment naming an unknown
// variable fails the job at setup, before any step.
func TestRunWorkflowSubstitution(t *testing.T) {
	var out bytes.Buffer
	x := &fakeExec{}
	j := testJob(t, strings.Replace(workflowYML, "env-${region}", "${nowhere}", 1), x, &out)
	j.runWorkflow(context.Background(), report.StepPlan, j.run.workflowSteps(j.ur, report.StepPlan))
	var se *SubstitutionError
	if !errors.As(j.res.Err, &se) || se.Name != "nowhere" || se.Where != "the workflow's environment" || j.res.FailedStep != "setup" || len(x.procs) != 0 {
		t.Errorf("err %v step %q, %d processes", j.res.Err, j.res.FailedStep, len(x.procs))
	}
}

// TestRunWorkflowInterrupted: an interrupted job fails at its next step,
// and no step runs after it.
func TestRunWorkflowInterrupted(t *testing.T) {
	var out bytes.Buffer
	x := &fakeExec{}
	j := testJob(t, workflowYML, x, &out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j.runWorkflow(ctx, report.StepPlan, j.run.workflowSteps(j.ur, report.StepPlan))
	if !errors.Is(j.res.Err, context.Canceled) || !j.res.Interrupted || j.res.FailedStep != "env" {
		t.Errorf("err %v interrupted %t step %q", j.res.Err, j.res.Interrupted, j.res.FailedStep)
	}
	if len(x.procs) != 0 {
		t.Errorf("processes: %+v", x.procs)
	}
}

// TestFold: what a step returns lands in the job: its reports, its
// values for the later steps, its secrets in the unit's masker, its gate
// with a note, its failure under its name.
func TestFold(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	in := j.in.forStep(stacks.RunStep{Type: "run"}, "plan step 2 (run)", "run")
	j.fold(context.Background(), in, stepOutput{
		Reports: []report.StepReport{{Name: "run", OK: true}},
		Set:     map[string]string{"A": "1"}, Secrets: []string{"hunter22"},
		Gate: &report.Gate{Step: "plan step 2 (run)", Token: "g"}, Note: "a note",
	})
	if len(j.res.Steps) != 1 || j.in.Set["A"] != "1" || len(j.res.Gates) != 1 || j.res.Err != nil {
		t.Errorf("res: %+v, set %v", j.res, j.in.Set)
	}
	if strings.Contains(j.ur.Masker.Mask("pw hunter22"), "hunter22") {
		t.Error("a secret a step returned is not masked")
	}
	if !strings.Contains(out.String(), "a note") {
		t.Errorf("notes: %q", out.String())
	}
	j.fold(context.Background(), in, stepOutput{Err: errors.New("boom"), Failed: "checkov", Note: "not said"})
	if j.res.FailedStep != "checkov" || j.res.Err.Error() != "boom" || strings.Contains(out.String(), "not said") {
		t.Errorf("a failure: %q %v; notes %q", j.res.FailedStep, j.res.Err, out.String())
	}
	j.res.Err = nil
	j.fold(context.Background(), in, stepOutput{Err: errors.New("x")})
	if j.res.FailedStep != "run" {
		t.Errorf("a failure is named by the step: %q", j.res.FailedStep)
	}
}

// TestNewJob: the job's input holds the unit's environment, its stack
// variables' TF_VAR_ values and strata's under their TF_VAR_ names, and
// runs its engine steps through the unit's engine.
func TestNewJob(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	in := j.in
	if in.Stack != "prod" || in.UnitID != j.ur.Spec.ID() || in.Dir != j.ur.Dir || in.Vars != j.ur.Vars || in.Masker != j.ur.Masker {
		t.Errorf("input: %+v", in)
	}
	if want := map[string]string{"TF_VAR_from_strata": "a", "TF_VAR_size": "3"}; !reflect.DeepEqual(in.TFVarEnv, want) {
		t.Errorf("TFVarEnv = %v, want %v", in.TFVarEnv, want)
	}
	if _, ok := in.engine.(*unitEngine); !ok || in.Set == nil || len(in.Set) != 0 {
		t.Errorf("engine %v set %v", in.engine, in.Set)
	}
	// The job's own engine calls report into its result; a step's into
	// its own output, which the job folds.
	if in.reports != &j.res.Steps || in.run != j.run || in.ur != j.ur || in.memo == nil {
		t.Errorf("the job's own calls: reports %p (result %p), run %p, unit %p", in.reports, &j.res.Steps, in.run, in.ur)
	}
	if st := in.forStep(stacks.DefaultStep("plan"), "plan step", "plan"); st.reports == in.reports || len(*st.reports) != 0 || st.memo != in.memo {
		t.Errorf("a step's input shares the job's reports or not its digest")
	}
	if in.Env["STRATA_STACK"] != "prod" {
		t.Errorf("the unit's env: %v", in.Env)
	}
}
