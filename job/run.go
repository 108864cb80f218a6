package job

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/filelock"
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

	oidcSkip  sync.Once      // the note that oidc steps are skipped outside CI
	checkout  checkout       // the commit units record as deployed
	lockFiles lockFiles      // the lock files the engine wrote in the run
	cacheDirs sync.Map       // the plugin cache dirs the run made
	states    tfstate.Stores // the buckets states are read from
}

// Do runs one job of a unit: its steps in order, holding the unit's dir
// lock while any of them runs. Once the steps ended well, readsOutputs
// says whether the unit's outputs are read for the coordinator (a
// producer's, or those its readers read), as a step of the job.
func (r *Run) Do(ctx context.Context, ur *Unit, kind Kind, readsOutputs func(applied bool, res *Result) bool) Result {
	j := newJob(r, ur)
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
		(applied || (!j.res.HasChanges && !ur.ForceApply)) && readsOutputs(applied, &j.res) {
		j.readOutputs(ctx)
	}
	j.res.Digest = j.in.memo.digest
	return j.res
}

// otherRoots lists the dirs of other root modules below dir (and below its
// local modules), which the content digest leaves out.
func (r *Run) otherRoots(dir string) []string {
	out := r.Project.RootsBelow(dir)
	for _, m := range r.Project.LocalModules(dir) {
		out = append(out, r.Project.RootsBelow(m)...)
	}
	return out
}

// recordTook records how long a job that ended well took, for the
// scheduler of later runs (docs/architecture.md#ready-queue): a plan job's
// steps, an apply job's, and a plan and apply in one call as the apply's.
func (j *job) recordTook(ctx context.Context, kind Kind) {
	if j.res.Err != nil || len(j.res.Steps) == 0 || j.run.Policy.Job != command.JobPlan {
		return
	}
	if kind == Plan && !slices.ContainsFunc(j.res.Steps, func(s report.StepReport) bool { return s.Name == report.StepPlan }) {
		// A saved plan reused: what a plan takes is not known here.
		return
	}
	first, last := report.Span(j.res.Steps)
	took := max(last.Sub(first).Milliseconds(), 1)
	// A time within a quarter of the one recorded leaves the record as
	// it is, and then nothing is written: the scheduler needs the rough
	// size of a unit, and most jobs take about what they took last time.
	set := func(ms *int64) {
		if d := *ms - took; *ms == 0 || 4*max(d, -d) > *ms {
			*ms = took
		}
	}
	err := j.run.State.UpdateUnitUnsynced(j.ur.Spec, func(s *runstate.UnitState) {
		if s.Took == nil {
			s.Took = &runstate.TookRecord{}
		}
		if kind == Plan {
			set(&s.Took.PlanMS)
		} else {
			set(&s.Took.ApplyMS)
		}
	})
	j.failed(ctx, report.StepState, err)
}
