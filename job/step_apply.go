package job

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// The apply steps of a unit's job: the saved plan applied, planned again
// when stale, and the apply recorded in the run state.

// apply runs the unit's apply steps.
func (j *job) apply(ctx context.Context) {
	j.runWorkflow(ctx, report.StepApply, j.run.workflowSteps(j.ur, report.StepApply))
}

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
func (applyStep) build(in *stepInput) (applyRequest, error) {
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

func (k applyStep) run(ctx context.Context, in *stepInput) stepOutput {
	req, err := k.build(in)
	if err != nil {
		return stepOutput{Err: err, Failed: report.StepApply}
	}
	in.engine.engineApply(ctx, req)
	return stepOutput{}
}

// applyInvocation is `apply` of the unit's saved plan, with own over the
// unit's environment: a saved plan takes no other argument.
func (in *stepInput) applyInvocation(own map[string]string) invocation {
	return in.invocation(report.StepApply, own, applyPlanCall{File: in.PlanFile})
}

// engineApply applies the unit's saved plan (extra_args never go to apply
// <planfile>). A plan the engine calls stale is discarded and made again,
// and the new one is applied only when nobody has to look at it first (or
// it has no changes); with retry enabled, a failed apply re-plans and tries
// again on the same terms. A new plan is compared with the reviewed plan
// (reviewed.go); a stale plan whose new plan has no changes was applied
// earlier (appliedEarlier).
func (j *job) engineApply(ctx context.Context, req applyRequest) {
	env := req.Env
	args, initEnv, err := j.unitInit()
	if j.failed(ctx, report.StepInit, err) || !j.init(ctx, false, false, args, initEnv) || !j.workspace(ctx, false) {
		return
	}
	tries, delay, backoff := req.Tries, req.Delay, req.Backoff
	auto := j.run.AutoApprove || j.ur.AutoApply
	replan, replanWhere := planStepOf(j.run.workflowSteps(j.ur, report.StepPlan))
	stalePlans := 0
	for try := 1; ; try++ {
		var saved *runstate.PlanRecord
		saved, err = j.applyOnce(ctx, env)
		if err == nil || ctx.Err() != nil || j.ur.UserPlan {
			// A user's own plan file (apply FILE) is theirs: strata
			// never makes another in its place, as terraform would not.
			break
		}
		stale := stalePlan(err)
		if stale {
			stalePlans++
			j.run.Console.UnitNote(j.ur.Spec.Name(), "the saved plan is stale (the state changed since it was made); planning again")
		}
		if (!stale && try >= tries) || stalePlans > 1 {
			break
		}
		if !stale {
			j.run.Console.UnitNote(j.ur.Spec.Name(), fmt.Sprintf("apply failed; retrying (%d of %d) in %s", try+1, tries, delay))
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
			delay = time.Duration(float64(delay) * backoff)
		}
		// A stale or failed apply needs a new plan, made as the
		// workflow's plan step makes it.
		j.res.Err, j.res.FailedStep = nil, ""
		in := j.in.forStep(replan, replanWhere, report.StepPlan)
		j.fold(ctx, in, planStep{}.run(ctx, in))
		if j.res.Err != nil {
			return
		}
		j.res.Fresh = true
		if stale && saved != nil && saved.HasChanges && !j.res.HasChanges {
			j.appliedEarlier(ctx, saved)
			return
		}
		if j.run.Policy.ReusesPlans && !j.run.Destroying {
			j.compareReviewed()
			if j.refuseUnreviewed(false) {
				return
			}
		}
		if !auto && j.res.HasChanges {
			if stale {
				j.res.Replanned = true
				return
			}
			j.failed(ctx, report.StepApply, fmt.Errorf("%w; a new plan is saved for review", err))
			return
		}
	}
	if err == nil && !j.ur.UserPlan {
		os.Remove(j.ur.PlanFile)
	}
	j.failed(ctx, report.StepApply, err)
}

// applyOnce applies the saved plan once, recording the apply in the run
// state, and returns the plan's record. The plan record is cleared before
// the engine starts: a plan is applied at most once, and an apply that
// fails, is interrupted or never reports back (strata killed) leaves no
// plan to be reused.
func (j *job) applyOnce(ctx context.Context, env map[string]string) (*runstate.PlanRecord, error) {
	var saved *runstate.PlanRecord
	if err := j.run.State.UpdateUnit(j.ur.Spec, func(s *runstate.UnitState) { saved, s.Plan = s.Plan, nil }); err != nil {
		j.res.Steps = append(j.res.Steps, report.StepReport{Name: report.StepApply, StartedAt: j.run.Now(), FinishedAt: j.run.Now()})
		return nil, err
	}
	started := false
	if f := j.run.Applying; f != nil && saved != nil && saved.HasChanges {
		if err := f(j.ur.Spec, saved.Digest); err != nil {
			j.res.Steps = append(j.res.Steps, report.StepReport{Name: report.StepApply, StartedAt: j.run.Now(), FinishedAt: j.run.Now()})
			return saved, fmt.Errorf("not applied: recording that the apply starts: %w", err)
		}
		started = true
	}
	_, err := j.step(ctx, report.StepApply, func() invocation {
		return j.in.applyInvocation(env)
	}, false)
	if f := j.run.ApplyRefused; started && f != nil && stalePlan(err) {
		// The engine refused the plan before changing anything: the
		// record that the apply started is withdrawn. Should that fail,
		// the unit fails rather than plan again.
		if werr := f(j.ur.Spec); werr != nil {
			err = fmt.Errorf("the saved plan is stale, and withdrawing the record that its apply started failed: %v", werr)
		}
	}
	result := report.StatusApplied
	if j.run.Destroying {
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
	if serr := j.recordApply(ctx, a, partial); serr != nil {
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
func (j *job) recordApply(ctx context.Context, a runstate.ApplyRecord, partial bool) error {
	var deployed *runstate.DeployedRecord
	if a.Result == report.StatusApplied && !partial {
		deployed = j.run.deployedNow(ctx, j.ur.Spec)
	}
	a.At, a.Destroy = j.run.Now().UTC(), j.run.Destroying
	return j.run.State.UpdateUnit(j.ur.Spec, func(s *runstate.UnitState) {
		s.Plan = nil
		s.Apply = &a
		if deployed != nil {
			s.Deployed = deployed
		}
	})
}
