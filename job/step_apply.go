package job

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// The apply steps of a unit's job: the saved plan applied once and the
// apply recorded in the run state, returned as a value (applyResult);
// the job folds it and decides what follows a try that failed: a retry,
// or the stale plan made again (docs/architecture.md#a-units-job).

// applyStep is an `apply` step: the unit's saved plan applied
// (engineApply).
type applyStep struct{}

// applyRequest is an apply step as built: its own env, and its retry of
// a failed apply: tries in all, the delay before the first retry, each
// later delay backoff times the one before.
type applyRequest struct {
	Env     map[string]string
	Tries   int
	Delay   time.Duration
	Backoff float64
}

// build is the apply the step asks for: one try unless its retry says
// more.
func (*applyStep) build(in *stepInput) (applyRequest, error) {
	own, err := in.ownEnv()
	if err != nil {
		return applyRequest{}, err
	}
	req := applyRequest{Env: own, Tries: 1, Delay: in.RetryDelay, Backoff: 1.5}
	if r := in.Step.Retry; r != nil {
		req.Tries, req.Backoff = r.Tries, r.Backoff
		if r.Delay != nil {
			req.Delay = *r.Delay
		}
	}
	return req, nil
}

func (k *applyStep) run(ctx context.Context, in *stepInput) stepOutput {
	req, err := k.build(in)
	if err != nil {
		return stepOutput{Err: err, Failed: report.StepApply}
	}
	r := in.engine.apply(ctx, in, req)
	return stepOutput{Reports: r.Reports, Err: r.Err, Failed: r.Failed, Apply: &r}
}

// apply applies the saved plan once (engineApply).
func (*unitEngine) apply(ctx context.Context, in *stepInput, req applyRequest) applyResult {
	return in.engineApply(ctx, req)
}

// applyResult is what one try of an apply step did, folded by the job
// (foldApply): the apply as built, the saved plan's record it consumed,
// its step reports, and how it ended: its failure, and the step that
// failed (init, workspace or apply).
type applyResult struct {
	Request applyRequest
	// Saved is the record of the plan the try applied, or tried to; nil
	// when the unit had none, or the try never reached the engine's
	// apply.
	Saved   *runstate.PlanRecord
	Reports []report.StepReport
	Err     error
	Failed  string
}

// applyInvocation is `apply` of the unit's saved plan, with own over the
// unit's environment: a saved plan takes no other argument.
func (in *stepInput) applyInvocation(own map[string]string) invocation {
	return in.invocation(report.StepApply, own, &applyPlanCall{File: in.PlanFile})
}

// engineApply applies the unit's saved plan once (extra_args never go to
// apply <planfile>), after init and the workspace when they are not
// current, and returns what it did; a plan applied is removed, unless it
// is a user's own file. What follows a try that failed, the job decides
// (foldApply).
func (in *stepInput) engineApply(ctx context.Context, req applyRequest) (r applyResult) {
	r.Request = req
	defer func() { r.Reports = *in.reports }()
	args, initEnv, err := in.unitInit()
	if err == nil {
		err = in.initUnlessCurrent(ctx, false, false, args, initEnv)
	}
	if err != nil {
		r.Err, r.Failed = err, report.StepInit
		return r
	}
	if err := in.selectWorkspace(ctx, false); err != nil {
		r.Err, r.Failed = err, report.StepWorkspace
		return r
	}
	r.Saved, r.Err = in.applyOnce(ctx, req.Env)
	switch {
	case r.Err != nil:
		r.Failed = report.StepApply
	case !in.ur.UserPlan:
		os.Remove(in.ur.PlanFile)
	}
	return r
}

// applyNext is what follows a try of an apply step.
type applyNext int

const (
	// applyEnds: the try is the step's last; its failure, if any, is
	// the step's.
	applyEnds applyNext = iota
	// applyReplans: the engine called the saved plan stale: the plan
	// is made again and, as the new plan allows, applied.
	applyReplans
	// applyRetries: the apply failed with tries left: after Delay the
	// plan is made again and, as the new plan allows, applied.
	applyRetries
)

// applyVerdict is what follows a try (applyTries.after); Stale says the
// engine called the plan stale, which is said even when that ends the
// step (a plan stale a second time).
type applyVerdict struct {
	Next  applyNext
	Stale bool
	Delay time.Duration
}

// applyTries counts an apply step's tries for the job, which asks it
// what follows each: a failed apply is tried again while its retry has
// tries left, each delay backoff times the one before; a stale plan is
// made again once, whatever the tries. A user's own plan file (apply
// FILE) is theirs: strata never makes another in its place, as
// terraform would not.
type applyTries struct {
	req        applyRequest
	try, stale int
	delay      time.Duration
}

func newApplyTries(req applyRequest) *applyTries {
	return &applyTries{req: req, delay: req.Delay}
}

// after counts the try that returned r and says what follows it;
// cancelled says the run was interrupted.
func (t *applyTries) after(r *applyResult, cancelled, userPlan bool) applyVerdict {
	t.try++
	if r.Err == nil || r.Failed != report.StepApply || cancelled || userPlan {
		return applyVerdict{Next: applyEnds}
	}
	if stalePlan(r.Err) {
		t.stale++
		if t.stale > 1 {
			return applyVerdict{Next: applyEnds, Stale: true}
		}
		return applyVerdict{Next: applyReplans, Stale: true}
	}
	if t.try >= t.req.Tries {
		return applyVerdict{Next: applyEnds}
	}
	v := applyVerdict{Next: applyRetries, Delay: t.delay}
	t.delay = time.Duration(float64(t.delay) * t.req.Backoff)
	return v
}

// foldApply takes an apply step's tries into the job: each try's
// reports, then what follows it (applyTries.after): the end, with the
// try's failure as the step's; or, for a stale plan or a retry, the
// workflow's plan step again (replan) and, as the new plan allows, the
// apply step again.
func (j *job) foldApply(ctx context.Context, in *stepInput, out stepOutput) {
	tries := newApplyTries(out.Apply.Request)
	for {
		j.res.Steps = append(j.res.Steps, out.Reports...)
		r := out.Apply
		if r == nil {
			// The step again could not be built.
			j.failed(ctx, cmp.Or(out.Failed, in.Name), out.Err)
			return
		}
		v := tries.after(r, ctx.Err() != nil, j.ur.UserPlan)
		if v.Stale {
			j.run.Console.UnitNote(j.ur.Spec.Name(), "the saved plan is stale (the state changed since it was made); planning again")
		}
		if v.Next == applyEnds {
			j.failed(ctx, r.Failed, r.Err)
			return
		}
		if v.Next == applyRetries {
			j.run.Console.UnitNote(j.ur.Spec.Name(), fmt.Sprintf("apply failed; retrying (%d of %d) in %s", tries.try+1, tries.req.Tries, v.Delay))
			select {
			case <-ctx.Done():
			case <-time.After(v.Delay):
			}
		}
		if !j.replan(ctx, r.Saved, v.Stale, r.Err) {
			return
		}
		in = in.forStep(in.Step, in.Where, in.Name)
		out = (&applyStep{}).run(ctx, in)
	}
}

// replan makes the plan again in place of a saved plan an apply found
// stale or failed to apply, as the workflow's plan step makes it, and
// reports whether the new plan is applied now. It is not when the plan
// failed; when the stale plan's changes are already in the state
// (appliedEarlier); when --require-reviewed-plan refuses it after its
// comparison with the reviewed plan; or when it has changes and someone
// has to look at them first: a stale plan's new plan then waits for
// approval (Replanned), and a failed apply fails saying so.
func (j *job) replan(ctx context.Context, saved *runstate.PlanRecord, stale bool, applyErr error) bool {
	j.res.Err, j.res.FailedStep = nil, ""
	st, where := planStepOf(j.run.workflowSteps(j.ur, report.StepPlan))
	in := j.in.forStep(st, where, report.StepPlan)
	j.fold(ctx, in, (&planStep{}).run(ctx, in))
	if j.res.Err != nil {
		return false
	}
	j.res.Fresh = true
	if stale && saved != nil && saved.HasChanges && !j.res.HasChanges {
		j.appliedEarlier(ctx, saved)
		return false
	}
	if j.run.Policy.ReusesPlans && !j.run.Destroying {
		j.compareReviewed()
		if j.refuseUnreviewed(false) {
			return false
		}
	}
	if auto := j.run.AutoApprove || j.ur.AutoApply; auto || !j.res.HasChanges {
		return true
	}
	if stale {
		j.res.Replanned = true
		return false
	}
	j.failed(ctx, report.StepApply, fmt.Errorf("%w; a new plan is saved for review", applyErr))
	return false
}

// applyOnce applies the saved plan once, recording the apply in the run
// state, and returns the plan's record. The plan record is cleared before
// the engine starts: a plan is applied at most once, and an apply that
// fails, is interrupted or never reports back (strata killed) leaves no
// plan to be reused.
func (in *stepInput) applyOnce(ctx context.Context, env map[string]string) (*runstate.PlanRecord, error) {
	var saved *runstate.PlanRecord
	notStarted := func() {
		*in.reports = append(*in.reports, report.StepReport{Name: report.StepApply, StartedAt: in.run.Now(), FinishedAt: in.run.Now()})
	}
	if err := in.run.State.UpdateUnit(in.ur.Spec, func(s *runstate.UnitState) { saved, s.Plan = s.Plan, nil }); err != nil {
		notStarted()
		return nil, err
	}
	started := false
	if f := in.run.Applying; f != nil && saved != nil && saved.HasChanges {
		if err := f(in.ur.Spec, saved.Digest); err != nil {
			notStarted()
			return saved, fmt.Errorf("not applied: recording that the apply starts: %w", err)
		}
		started = true
	}
	_, err := in.step(ctx, report.StepApply, in.applyInvocation(env), false)
	if f := in.run.ApplyRefused; started && f != nil && stalePlan(err) {
		// The engine refused the plan before changing anything: the
		// record that the apply started is withdrawn. Should that fail,
		// the unit fails rather than plan again.
		if werr := f(in.ur.Spec); werr != nil {
			err = fmt.Errorf("the saved plan is stale, and withdrawing the record that its apply started failed: %v", werr)
		}
	}
	result := report.StatusApplied
	if in.run.Destroying {
		result = report.StatusDestroyed
	}
	switch {
	case ctx.Err() != nil && err != nil:
		result = report.StatusCancelled
	case err != nil:
		result = report.StatusFailed
	}
	a, partial := runstate.ApplyRecord{Result: result}, false
	if saved != nil {
		a, partial = saved.Applied(result), saved.Partial
	}
	if serr := in.recordApply(ctx, a, partial); serr != nil {
		if err == nil {
			// The apply happened; only its record is missing.
			return saved, fmt.Errorf("the apply succeeded, but %w", serr)
		}
		return saved, fmt.Errorf("%w; and %v", err, serr)
	}
	return saved, err
}

// stalePlan reports whether the engine refused a saved plan as stale (the
// state changed since it was made).
func stalePlan(err error) bool {
	return strings.Contains(ErrorText(err), "Saved plan is stale")
}

// recordApply records an apply of the unit's plan in its run state, now,
// with the commit it deployed when it applied the whole unit (not partial)
// and clears the plan record: an apply consumes its plan.
//
// The record is not synced. What makes a plan applied at most once is
// the synced record that took the plan out of reuse before the engine
// started (applyOnce, applyNow); this one says what the apply did, and a
// machine's crash that loses it leaves the record before, which asks for
// more work, never less: a plan again, an init again, a unit counted as
// changed (docs/architecture.md#what-a-command-costs).
func (in *stepInput) recordApply(ctx context.Context, a runstate.ApplyRecord, partial bool) error {
	var deployed *runstate.DeployedRecord
	if a.Result == report.StatusApplied && !partial {
		deployed = in.run.deployedNow(ctx, in.ur.Spec)
	}
	a.At, a.Destroy = in.run.Now().UTC(), in.run.Destroying
	ok := a.Result == report.StatusApplied || a.Result == report.StatusDestroyed
	if ok {
		in.handOff()
	}
	return in.run.State.UpdateUnitUnsynced(in.ur.Spec, func(s *runstate.UnitState) {
		s.Plan = nil
		s.Apply = &a
		if deployed != nil {
			s.Deployed = deployed
		}
		if ok && in.WithRecord != nil {
			in.WithRecord(s)
		}
	})
}
