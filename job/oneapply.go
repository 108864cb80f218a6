package job

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// Applying in one engine call. Where nobody reviews a plan (-auto-approve)
// and nothing reads its file, `plan -out` then `apply FILE` starts the
// engine, and every provider plugin, twice for what `apply` does once. A
// unit whose apply gates are open when its plan gates open is then applied
// by one `apply -auto-approve`, with the same inputs, arguments, digest
// and run-state record as the two calls would leave.

// engineStepsOnly reports whether a phase's steps are engine steps only
// (init and the phase's own), so no step reads the plan file: a run, env
// or policy step keeps the two calls. An init step of the apply phase
// with its own arguments keeps them too, since one call has one init.
func EngineStepsOnly(steps []stacks.RunStep, phase string) bool {
	n := 0
	for _, st := range steps {
		switch st.Type {
		case report.StepInit:
			if phase == report.StepApply && (len(st.ExtraArgs) > 0 || len(st.Env) > 0) {
				return false
			}
		case phase:
			n++
			if phase == report.StepApply && (len(st.Env) > 0 || st.Retry != nil) {
				return false
			}
		case "oidc", "gate", "gates", "slack", "drift_create_issue":
			// Accepted and ignored.
		default:
			return false
		}
	}
	return n == 1
}

// planApply runs the plan phase's steps with its plan step replaced by one
// apply. A plan step whose arguments terraform-exec cannot express, a
// saved plan that is current, or a reviewed plan the new one is to be
// compared with (reviewed.go: an apply in one call prints its plan, and
// saves none to read) falls back to the usual plan: the coordinator then
// applies it as usual.
func (j *job) planApply(ctx context.Context) {
	steps := j.run.workflowSteps(j.ur, report.StepPlan)
	us := j.savedRecord()
	j.takeReviewed(us)
	if j.reuseBeforeWorkflow(ctx, steps, us) {
		j.review(true)
		return
	}
	if j.ur.Reviewed != nil && j.ur.ReviewedHere {
		j.runWorkflow(ctx, report.StepPlan, steps)
		j.review(false)
		return
	}
	if j.failed(ctx, "setup", j.in.workflowEnvironment()) {
		return
	}
	for i, st := range steps {
		switch st.Type {
		case report.StepInit:
			in := j.in.forStep(st, fmt.Sprintf("plan step %d (init)", i+1), report.StepInit)
			j.fold(ctx, in, (&initStep{}).run(ctx, in))
		case report.StepPlan:
			j.applyNow(ctx, st, !slices.ContainsFunc(steps[i+1:], func(st stacks.RunStep) bool { return st.Type == report.StepInit }))
		}
		if j.res.Err != nil {
			return
		}
	}
}

// applyNowInvocation is `apply -auto-approve` with plan's var file and
// arguments, and own over the unit's environment; onPlan is called once
// the engine printed a plan with changes.
func (in *stepInput) applyNowInvocation(own map[string]string, varFile string, args engineargs.PlanArgs, onPlan func()) invocation {
	return in.invocation(report.StepApply, own, &applyNowCall{VarFile: varFile, Args: args, OnPlan: onPlan})
}

// applyNow applies without a plan file, or plans as usual when it cannot;
// last says no step of the job follows.
func (j *job) applyNow(ctx context.Context, st stacks.RunStep, last bool) {
	in := j.in.forStep(st, "plan step (plan)", report.StepPlan)
	in.last = last
	req, err := (&planStep{}).build(in)
	if j.failed(ctx, report.StepPlan, err) {
		return
	}
	pc, step, err := j.in.preparePlanCall(ctx, req)
	if j.failed(ctx, step, err) {
		return
	}
	defer pc.done()
	if len(pc.args.Extra) > 0 || pc.args.Destroy || pc.args.RefreshOnly {
		// Flags one apply cannot take (a destroy or refresh-only plan, one
		// terraform-exec cannot express) keep the usual plan; what was
		// computed for it is not computed again.
		j.fold(ctx, in, planOutput(j.in.enginePlan(ctx, req)))
		return
	}
	env, varFile, args := pc.env, pc.varFile, pc.args
	// A plan saved earlier is not what gets applied: its record goes first,
	// as any apply's does.
	if err := j.run.State.UpdateUnit(j.ur.Spec, func(s *runstate.UnitState) { s.Plan = nil }); j.failed(ctx, report.StepState, err) {
		return
	}
	os.Remove(j.ur.PlanFile)
	var onPlan func()
	if f := j.run.Applying; f != nil {
		u, digest := j.ur.Spec, j.in.memo.digest
		onPlan = func() {
			// The engine goes on meanwhile: a record that fails is a
			// warning, not a reason to stop an apply under way.
			if err := f(u, digest); err != nil {
				j.run.Console.Warn(u.Name(), fmt.Sprintf("recording that the apply starts: %v", err))
			}
		}
	}
	o, err := j.in.step(ctx, report.StepApply, in.applyNowInvocation(env, varFile, args, onPlan), false)
	result := report.StatusApplied
	switch {
	case ctx.Err() != nil && err != nil:
		result = report.StatusCancelled
	case err != nil:
		result = report.StatusFailed
	}
	j.res.HasChanges, j.res.Changes = o.HasChanges, o.Changes
	j.res.ChangedOutputs, j.res.OutputsKnown = o.ChangedOutputs, o.OutputsKnown
	var serr error
	// The job's last record carries how long it took, when the apply
	// ended well (tookWith).
	if err == nil {
		in.WithRecord = j.tookWith(PlanApply, new([]report.StepReport))
	}
	switch {
	case err != nil || o.HasChanges || j.ur.ForceApply:
		// As the two calls would: an apply is recorded when one ran
		// (a plan with no changes is never applied).
		serr = in.recordApply(ctx, runstate.ApplyRecord{Digest: j.in.memo.digest, Result: result,
			ChangedOutputs: o.ChangedOutputs, OutputsKnown: o.OutputsKnown}, !wholePlan(args))
	case wholePlan(args):
		// Nothing to change: recorded as a plan with no changes is.
		deployed := j.run.deployedNow(ctx, j.ur.Spec)
		in.handOff()
		if deployed != nil {
			serr = j.run.State.UpdateUnitUnsynced(j.ur.Spec, func(s *runstate.UnitState) {
				s.Deployed = deployed
				if in.WithRecord != nil {
					in.WithRecord(s)
				}
			})
		}
	}
	if err == nil && serr != nil {
		j.failed(ctx, report.StepState, serr)
		return
	}
	if j.failed(ctx, report.StepApply, err) {
		return
	}
	j.res.Applied = true
}
