package job

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/tfstate"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// Run is the run's fixed context every job of it reads: set once by the
// coordinator before the first job starts and never written after, but
// for what deployedNow finds once. A job returns its Result and never
// reaches back into the coordinator.
type Run struct {
	Project *stacks.Project
	Policy  *command.Policy
	State   *runstate.StateDir
	Console *console.Console
	Exec    *Executor
	// Procs are the process groups of the run's steps, which the
	// coordinator kills on a second interrupt.
	Procs *Procs
	// TFVars are strata's TF_VAR_ values (TFVarsFromEnv).
	TFVars map[string]string
	// Destroying: the command destroys (destroy, or plan -destroy).
	Destroying bool
	// DropIn: the run is one unit's, in its dir, as the engine's own
	// command would be (docs/behaviour.md#scope).
	DropIn bool

	// Settings are the command's; a job reads those of one unit.
	Settings
	RetryDelay time.Duration
	Environ    []string
	Now        func() time.Time
	// Cost estimates plans' costs, nil when the config asks for none.
	Cost *Cost
	// Applying, ApplyRefused and MergedPullRequest are runner.Options'.
	Applying          func(u *stacks.Unit, digest string) error
	ApplyRefused      func(u *stacks.Unit) error
	MergedPullRequest func() string
	// Repo opens the project's git work tree (runner.Options'); nil opens
	// it with git.Open.
	Repo func() (*git.Repo, error)

	oidcSkip  sync.Once      // the note that oidc steps are skipped outside CI
	checkout  checkout       // the commit units record as deployed
	lockFiles lockFiles      // the lock files the engine wrote in the run
	cacheDirs sync.Map       // the plugin cache dirs the run made
	states    tfstate.Stores // the buckets states are read from
}

// Result is what a job reports to the coordinator.
type Result struct {
	Steps       []report.StepReport
	Err         error
	FailedStep  string
	Interrupted bool
	HasChanges  bool
	Changes     report.Changes
	// changedOutputs are the outputs the plan (or the apply in one call)
	// changes, when outputsKnown; plannedOutputs the outputs' values
	// after the plan, read from its JSON.
	ChangedOutputs []string
	OutputsKnown   bool
	PlannedOutputs map[string]PlannedOutput
	// UnknownOutputs are the outputs a reused saved plan leaves unknown
	// until it is applied, for the consumers it defers
	// (docs/behaviour.md#deferred-units); a new plan gives PlannedOutputs.
	UnknownOutputs []string
	Digest         string
	// changeSet is the digest of what the plan changes (PlanRecord).
	ChangeSet string
	// noSecrets: the plan's JSON marks nothing sensitive (PlanRecord).
	NoSecrets bool
	// replanned: a stale saved plan was made again, and the new plan
	// waits for approval.
	Replanned bool
	// fresh: the apply job planned again (a stale plan, a retry), so
	// its changes and digest are the new plan's.
	Fresh bool
	// replan compares the new plan with the reviewed plan it replaced;
	// refused says why --require-reviewed-plan refused it.
	Replan  *report.Replanned
	Refused string
	// Gates are the gates the plan raised, or those of the saved plan
	// reused (docs/controls.md#gates).
	Gates []report.Gate
	// Cost is the plan's estimated cost (docs/behaviour.md#cost-estimation).
	Cost *report.CostReport
	// appliedEarlier: the state already held the stale saved plan's
	// changes (reviewed.go).
	AppliedEarlier bool
	// applied: a PlanApply applied in one engine call.
	Applied bool
	Outputs map[string]any
	// produced are a producer's outputs, read after its apply (or its
	// plan with no changes) for its consumers.
	Produced    map[string]tfexec.OutputMeta
	ProducedErr error
}

// job is the working state of one job of one unit.
type job struct {
	run *Run
	ur  *Unit
	res Result
	// in is the input every step of the job starts from (forStep): the
	// unit's environment, and what its steps set so far (in.Set); the
	// job's own engine calls run in it, their reports going to res.
	in *stepInput
	// kind is what the job was asked to do (Do).
	kind Kind
	// tookCarried is the time (ms) the record of the job's last step
	// carried (tookWith), 0 when none did.
	tookCarried int64
}

// Links are what a job asks of its coordinator, and tells it, while it
// runs.
type Links struct {
	// ReadsOutputs says, once the steps ended well, whether the unit's
	// outputs are read for the coordinator (a producer's, or those its
	// readers read), as a step of the job.
	ReadsOutputs func(applied bool, res *Result) bool
	// HandOff, when set, is called at most once: when the process of the
	// job's last plan or apply step ended well, before the job writes its
	// records, so the coordinator may start the next job's processes
	// meanwhile. The job starts no process after it. The coordinator
	// sets it only for a unit whose outputs nothing reads after its
	// steps (docs/architecture.md#what-a-command-costs).
	HandOff func()
}

// Do runs one job of a unit: its steps in order, holding the unit's dir
// lock while any of them runs.
func (r *Run) Do(ctx context.Context, ur *Unit, kind Kind, links Links) Result {
	j := newJob(r, ur)
	j.kind = kind
	if links.HandOff != nil {
		j.in.slot = &slot{handOff: links.HandOff}
	}
	lock, err := filelock.Acquire(ctx, r.State.DirLockPath(ur.Spec.Dir), func() {
		r.Console.UnitNote(ur.Spec.Name(), fmt.Sprintf("waiting for another strata working in %s", ur.Spec.Dir))
	})
	if err != nil {
		j.res.Err, j.res.FailedStep, j.res.Interrupted = err, "lock", ctx.Err() != nil
		return j.res
	}
	defer lock.Release()
	if err := os.MkdirAll(ur.TmpDir, 0o700); err != nil {
		j.res.Err, j.res.FailedStep = err, "setup"
		return j.res
	}
	switch {
	case kind == Apply:
		j.apply(ctx)
	case kind == PlanApply:
		j.planApply(ctx)
	case r.Policy.Job == command.JobInit:
		j.runWorkflow(ctx, report.StepInit, r.initSteps(ur))
	case r.Policy.Job == command.JobValidate:
		j.validate(ctx)
	case r.Policy.Job == command.JobOutput:
		j.output(ctx)
	case r.Policy.Job == command.JobProvidersLock:
		j.providersLock(ctx)
	default:
		j.plan(ctx)
	}
	j.recordTook(ctx, kind)
	applied := kind == Apply || j.res.Applied
	if r.DropIn && r.Policy.Applies && !applied && j.res.Err == nil && !j.res.HasChanges && !ur.ForceApply {
		// A plan with nothing to apply: no engine apply prints the end.
		j.completeNoChanges(ctx)
	}
	if j.res.Err == nil && !r.Policy.AsItStands && !r.Destroying &&
		(applied || (!j.res.HasChanges && !ur.ForceApply)) && links.ReadsOutputs(applied, &j.res) {
		j.readOutputs(ctx)
	}
	j.res.Digest = j.in.memo.digest
	return j.res
}

// newJob prepares a job of the unit: the input its steps start from.
func newJob(r *Run, ur *Unit) *job {
	j := &job{run: r, ur: ur}
	tfVarEnv := map[string]string{}
	for k, v := range r.TFVars {
		tfVarEnv["TF_VAR_"+k] = v
	}
	if ur.Vars != nil {
		for k, v := range ur.Vars.tfVars {
			tfVarEnv["TF_VAR_"+k] = v
		}
	}
	j.in = &stepInput{
		Stack: ur.Spec.Stack.Name, UnitID: ur.Spec.ID(), Who: ur.Spec.Name(), Dir: ur.Dir,
		Env: ur.Env, TFVarEnv: tfVarEnv, Set: map[string]string{}, Vars: ur.Vars, Environ: r.Environ, EngineArgs: r.EngineArgs,
		PlanFile: ur.PlanFile, Masker: ur.Masker, Display: ur.Display, Now: r.Now, exec: r, engine: &unitEngine{},
		run: r, ur: ur, memo: &digestMemo{}, reports: &j.res.Steps,
		InitAlways: r.Policy != nil && r.Policy.Job == command.JobInit, RetryDelay: r.RetryDelay,
	}
	if ur.Engine != nil {
		j.in.Engine, j.in.EngineVersion = ur.Engine.Path, ur.Engine.Version
	}
	return j
}

// plan runs the unit's plan steps; in apply, a saved plan still current
// is reused instead of a new plan (docs/behaviour.md#run-state).
func (j *job) plan(ctx context.Context) {
	steps := j.run.workflowSteps(j.ur, report.StepPlan)
	if !j.run.Policy.ReusesPlans {
		j.runWorkflow(ctx, report.StepPlan, steps)
		j.recordGates(ctx)
		return
	}
	us := j.savedRecord()
	j.takeReviewed(us)
	reused := j.reuseBeforeWorkflow(ctx, steps, us)
	if !reused {
		j.runWorkflow(ctx, report.StepPlan, steps)
		j.recordGates(ctx)
	}
	j.review(reused)
}

// apply runs the unit's apply steps.
func (j *job) apply(ctx context.Context) {
	j.runWorkflow(ctx, report.StepApply, j.run.workflowSteps(j.ur, report.StepApply))
}

func (j *job) validate(ctx context.Context) {
	initialised := false
	if _, err := os.Stat(j.ur.DataDir); err == nil {
		initialised = true
	}
	if !initialised && !j.init(ctx, true, true, j.run.EngineArgs.Init, nil) {
		return
	}
	_, err := j.in.step(ctx, report.StepValidate, j.in.invocation(report.StepValidate, nil, &validateCall{Args: j.run.EngineArgs.Command}), true)
	j.failed(ctx, report.StepValidate, err)
}

func (j *job) output(ctx context.Context) {
	args, env, err := j.in.unitInit()
	if j.failed(ctx, report.StepInit, err) {
		return
	}
	outs, step, err := j.engineOutputs(ctx, args, env)
	if j.failed(ctx, step, err) {
		return
	}
	j.res.Outputs = outputsJSON(outs, j.run.ShowSensitive)
}

// engineOutputs runs init (when needed), the workspace selection and
// output -json; sensitive values join the unit's masker. On failure it
// returns the step that failed, leaving the job's own error to the caller.
func (j *job) engineOutputs(ctx context.Context, initArgs engineargs.InitArgs, initEnv map[string]string) (map[string]tfexec.OutputMeta, string, error) {
	if !j.init(ctx, false, false, initArgs, initEnv) || !j.workspace(ctx, false) {
		err, step := j.res.Err, j.res.FailedStep
		j.res.Err, j.res.FailedStep = nil, ""
		return nil, step, err
	}
	o, err := j.in.step(ctx, report.StepOutput, j.in.invocation(report.StepOutput, nil, &outputCall{}), true)
	if err != nil {
		return nil, report.StepOutput, err
	}
	for _, out := range o.Outputs {
		if out.Sensitive {
			j.ur.Masker.Add(JSONString(out.Value))
		}
	}
	return o.Outputs, "", nil
}

// workflowEnvironment exports the matching workflow's environment,
// substituted, as STRATA_ENVIRONMENT (and TERRATEAM_ENVIRONMENT) to every
// step.
func (in *stepInput) workflowEnvironment() error {
	environment, ok := in.run.Project.EnvironmentFor(in.ur.Spec)
	if !ok {
		return nil
	}
	v, err := in.subst(environment, "the workflow's environment")
	if err != nil {
		return err
	}
	in.Set["STRATA_ENVIRONMENT"] = v
	in.Set["TERRATEAM_ENVIRONMENT"] = v
	return nil
}

// runWorkflow runs a phase's steps in order, each by its kind
// (stepKinds), and folds what each returns. After a failure only steps
// with run_on: failure or always run; the first failure is the unit's.
func (j *job) runWorkflow(ctx context.Context, phase string, steps []stacks.RunStep) {
	if j.failed(ctx, "setup", j.in.workflowEnvironment()) {
		return
	}
	for i, st := range steps {
		where := fmt.Sprintf("%s step %d (%s)", phase, i+1, st.Type)
		failedBefore := j.res.Err != nil
		if !runsOn(st.RunOn, failedBefore) {
			continue
		}
		if ctx.Err() != nil && !failedBefore {
			j.failed(ctx, st.Type, ctx.Err())
			return
		}
		kind, ok := stepKinds[st.Type]
		if !ok {
			// gates, slack, drift_create_issue: Terrateam's own;
			// accepted and ignored.
			continue
		}
		prev, prevStep := j.res.Err, j.res.FailedStep
		in := j.in.forStep(st, where, st.Type)
		if i == len(steps)-1 && !failedBefore && (phase == report.StepPlan && j.kind == Plan || phase == report.StepApply && j.kind == Apply) {
			in.WithRecord = j.tookWith(j.kind, in.reports)
			in.last = !j.outputFollows()
		}
		j.fold(ctx, in, kind.run(ctx, in))
		if failedBefore && j.res.Err != prev && prev != nil {
			// A failure step that fails keeps the first failure as the
			// unit's reason.
			j.res.Err, j.res.FailedStep = prev, prevStep
		}
	}
}

// outputFollows says the job's workflow may be followed by the engine's
// output: a drop-in apply whose plan finds nothing to change ends with
// it, as terraform's apply does (completeNoChanges), so its plan step is
// not the job's last process.
func (j *job) outputFollows() bool {
	return j.kind == Plan && j.run.DropIn && j.run.Policy.Applies
}

// runsOn says whether a step with run_on runOn runs, failed saying an
// earlier step failed.
func runsOn(runOn string, failed bool) bool {
	switch {
	case runOn == "always":
	case runOn == "failure" && failed:
	case runOn == "success" && !failed:
	default:
		return false
	}
	return true
}

// fold takes what a step returned into the job: its reports, the values
// it sets and masks, the gate it raised, and its failure; an apply's try
// is folded by foldApply, which decides what follows it.
func (j *job) fold(ctx context.Context, in *stepInput, out stepOutput) {
	if out.Apply != nil {
		j.foldApply(ctx, in, out)
		return
	}
	j.res.Steps = append(j.res.Steps, out.Reports...)
	j.foldPlan(out.Plan)
	if out.NoToken {
		j.run.noteNoToken()
	}
	if len(out.Secrets) > 0 {
		j.ur.Masker.Add(out.Secrets...)
	}
	maps.Copy(j.in.Set, out.Set)
	if out.Gate != nil {
		j.res.Gates = append(j.res.Gates, *out.Gate)
		j.run.Console.UnitNote(j.ur.Spec.Name(), report.GatedReason([]report.Gate{*out.Gate}))
	}
	if out.Note != "" && out.Err == nil {
		j.run.Console.UnitNote(j.ur.Spec.Name(), out.Note)
	}
	j.failed(ctx, cmp.Or(out.Failed, in.Name), out.Err)
}

// foldPlan takes a plan step's result into the unit's result.
func (j *job) foldPlan(r *planResult) {
	if r == nil {
		return
	}
	if r.Cost != nil {
		j.res.Cost = r.Cost
	}
	if r.Err != nil {
		return
	}
	if r.SavedTo != "" && j.res.Err == nil {
		// After the plan's block, as terraform ends a plan -out.
		j.savedPlanWords(r.SavedTo)
	}
	v := r.View
	j.res.HasChanges, j.res.Changes, j.res.ChangeSet = r.HasChanges, v.Changes, v.ChangeSet
	j.res.ChangedOutputs, j.res.OutputsKnown, j.res.PlannedOutputs = v.ChangedOutputs, true, v.Outputs
	j.res.NoSecrets = r.HasChanges && len(v.Secrets) == 0
}

// failed records a failed step and reports whether the job must stop.
func (j *job) failed(ctx context.Context, step string, err error) bool {
	if err == nil {
		return false
	}
	j.res.Err, j.res.FailedStep = err, step
	j.res.Interrupted = ctx.Err() != nil
	return true
}

// recordGates adds the gates the plan workflow raised to the saved
// plan's record: a gated step runs after the plan step that saved it, and
// the apply that reuses the plan waits for their approval
// (docs/controls.md#gates).
func (j *job) recordGates(ctx context.Context) {
	if len(j.res.Gates) == 0 || j.res.Err != nil {
		return
	}
	err := j.run.State.UpdateUnit(j.ur.Spec, func(s *runstate.UnitState) {
		if s.Plan != nil && s.Plan.Digest == j.in.memo.digest {
			s.Plan.Gates = j.res.Gates
		}
	})
	j.failed(ctx, report.StepState, err)
}

// recordTook records how long a job that ended well took, for the
// scheduler of later runs (docs/architecture.md#ready-queue): a plan job's
// steps, an apply job's, and a plan and apply in one call as the apply's.
// The job's last record (a plan's, an apply's) usually carries it already
// (tookWith), and then the record is neither read nor written here.
func (j *job) recordTook(ctx context.Context, kind Kind) {
	if j.res.Err != nil || j.tookCarried != 0 && j.tookCarried == tookMS(j.res.Steps) {
		// The last step's record carries this time already: nothing to
		// read or write again.
		return
	}
	change := j.tookChange(kind, j.res.Steps)
	if change == nil {
		return
	}
	err := j.run.State.UpdateUnitUnsynced(j.ur.Spec, change)
	j.failed(ctx, report.StepState, err)
}

// tookChange is the change recordTook makes to the unit's record for a
// job of the kind whose steps so far are steps, nil when it records
// nothing: a job of another command than plan and apply, one with no
// steps, a plan reused. A job that plans and applies in one call records
// an apply's time only when it applied; when it made the usual plan
// instead (oneapply.go), a plan's.
func (j *job) tookChange(kind Kind, steps []report.StepReport) func(*runstate.UnitState) {
	if len(steps) == 0 || j.run.Policy.Job != command.JobPlan {
		return nil
	}
	has := func(name string) bool {
		return slices.ContainsFunc(steps, func(s report.StepReport) bool { return s.Name == name })
	}
	applied := kind == Apply || kind == PlanApply && has(report.StepApply)
	if !applied && !has(report.StepPlan) {
		// A saved plan reused: what a plan takes is not known here.
		return nil
	}
	took := tookMS(steps)
	// A time within a quarter of the one recorded leaves the record as
	// it is, and then nothing is written: the scheduler needs the rough
	// size of a unit, and most jobs take about what they took last time.
	set := func(ms *int64) {
		if d := *ms - took; *ms == 0 || 4*max(d, -d) > *ms {
			*ms = took
		}
	}
	return func(s *runstate.UnitState) {
		if s.Took == nil {
			s.Took = &runstate.TookRecord{}
		}
		if applied {
			set(&s.Took.ApplyMS)
		} else {
			set(&s.Took.PlanMS)
		}
	}
}

// tookWith is the took change the record a job's last step writes when
// it ends well (a plan's record, an apply's) carries, so that the job
// writes its record once where it wrote it twice
// (docs/architecture.md#what-a-command-costs): the job's steps before
// this one and own, the step's reports, which hold its engine call by
// the time it writes its record. recordTook then finds the same time
// recorded and writes nothing.
func (j *job) tookWith(kind Kind, own *[]report.StepReport) func(*runstate.UnitState) {
	return func(s *runstate.UnitState) {
		steps := append(slices.Clip(j.res.Steps), *own...)
		if change := j.tookChange(kind, steps); change != nil {
			change(s)
			j.tookCarried = tookMS(steps)
		}
	}
}

// tookMS is how long steps took, first start to last end, in ms (at
// least 1).
func tookMS(steps []report.StepReport) int64 {
	first, last := report.Span(steps)
	return max(last.Sub(first).Milliseconds(), 1)
}

// UnknownOutputs are the names of the outputs a plan leaves unknown until
// it is applied, in order.
func UnknownOutputs(outs map[string]PlannedOutput) []string {
	var names []string
	for n, o := range outs {
		if !o.Known {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
