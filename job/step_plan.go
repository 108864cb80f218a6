package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// The plan steps of a unit's job: a new plan, or in apply the saved plan
// reused (docs/behaviour.md#run-state).

// reuseBeforeWorkflow decides, before any plan step runs, whether apply
// reuses the saved plan: a reused plan's workflow (its run and env steps,
// its init) already ran when it was made, and does not run again. The
// plan is then shown, as a new one would be.
func (j *job) reuseBeforeWorkflow(ctx context.Context, steps []stacks.RunStep, us *runstate.UnitState) bool {
	if j.in.workflowEnvironment() != nil {
		return false
	}
	env, err := j.planDigest(steps)
	if err != nil || !j.reusePlan(us) {
		return false
	}
	switch {
	case j.res.HasChanges && !j.res.NoSecrets:
		// The text shows what the plan's JSON marks sensitive wherever
		// the engine does not (docs/behaviour.md#what-is-masked): read
		// it first, unless reading it when it was made found nothing.
		v, _, err := j.in.readPlan(ctx, env, true)
		if j.failed(ctx, report.StepShow, err) {
			return true
		}
		j.ur.Masker.Add(v.Secrets...)
		j.res.UnknownOutputs = UnknownOutputs(v.Outputs)
	case j.res.HasChanges:
		// Which outputs it leaves unknown, from the file alone: no
		// engine start for what only a deferred consumer's reason uses.
		if v, err := readPlanFile(j.ur.PlanFile); err == nil {
			j.res.UnknownOutputs = UnknownOutputs(v.Outputs)
		}
	}
	j.failed(ctx, report.StepShow, j.in.showText(ctx, env))
	return true
}

// planStepOf is the plan step among a unit's plan steps, with where it
// stands for messages; the default plan step when the workflow has none.
func planStepOf(steps []stacks.RunStep) (stacks.RunStep, string) {
	for i, s := range steps {
		if s.Type == report.StepPlan {
			return s, fmt.Sprintf("%s step %d (%s)", report.StepPlan, i+1, s.Type)
		}
	}
	return stacks.DefaultStep(report.StepPlan), "plan step"
}

// planDigest computes the digest the unit's plan step plans with, its
// extra_args and env included, before any step of the workflow runs;
// it returns the step's env.
func (j *job) planDigest(steps []stacks.RunStep) (map[string]string, error) {
	st, where := planStepOf(steps)
	ea, own, err := j.in.forStep(st, where, report.StepPlan).engineStep(command.Plan)
	if err != nil {
		return nil, err
	}
	_, err = j.in.prepareInputsWith(ea, tfVarsOf(own))
	return own, err
}

// planStep is a `plan` step: the workspace, then a saved plan with the
// step's extra_args and env, read as JSON when it has changes and
// recorded in the run state.
type planStep struct{}

// planRequest is a plan step as built: its engine arguments (extra_args
// merged with the command's) and its own env, TF_VAR_ values included.
type planRequest struct {
	Args engineargs.EngineArgs
	Env  map[string]string
}

// build is the plan the step asks for.
func (*planStep) build(in *stepInput) (planRequest, error) {
	ea, own, err := in.engineStep(command.Plan)
	if err != nil {
		return planRequest{}, err
	}
	return planRequest{Args: ea, Env: own}, nil
}

func (k *planStep) run(ctx context.Context, in *stepInput) stepOutput {
	req, err := k.build(in)
	if err != nil {
		return stepOutput{Err: err, Failed: report.StepPlan}
	}
	out := planOutput(in.engine.plan(ctx, in, req))
	out.Reports = *in.reports
	return out
}

// plan makes the plan and reads it (enginePlan).
func (*unitEngine) plan(ctx context.Context, in *stepInput, req planRequest) *planResult {
	return in.enginePlan(ctx, req)
}

// planOutput is the output of a plan step whose plan returned r: its
// failure, or what it learnt.
func planOutput(r *planResult) stepOutput {
	out := stepOutput{Plan: r}
	if r != nil && r.Err != nil {
		out.Err, out.Failed = r.Err, r.Failed
	}
	return out
}

// planArgs are plan's arguments: the step's (ea), the stack's targets
// after the user's, and -destroy when the command destroys.
func planArgs(ea engineargs.EngineArgs, targets []string, destroys bool) engineargs.PlanArgs {
	args := ea.Plan
	args.Targets = append(append([]string(nil), args.Targets...), targets...)
	if destroys {
		args.Destroy = true
	}
	return args
}

// planInvocation is `plan -out` to the unit's plan file with the var
// file (varFile, "" for none) and args, and own over the unit's
// environment.
func (in *stepInput) planInvocation(own map[string]string, varFile string, args engineargs.PlanArgs) invocation {
	return in.invocation(report.StepPlan, own, &planCall{Out: in.PlanFile, VarFile: varFile, Args: args})
}

// planResult is what a plan step learnt of the plan it made, folded
// into the unit's result by the job (foldPlan): whether it changes
// anything, and what reading it gave (counts, changed and planned
// outputs, change set, the strings it marks sensitive); or its failure,
// and the step that failed (setup, workspace, plan, show, state), which
// the plan step returns as its own.
type planResult struct {
	HasChanges bool
	View       planView
	// Cost is the plan's estimate (nil when none is asked for); SavedTo
	// the user's copy of the plan (-out), which the job names once the
	// plan's block ends.
	Cost    *report.CostReport
	SavedTo string
	Err     error
	Failed  string
}

// enginePlan runs a plan step's plan and returns what it learnt, or its
// failure.
func (in *stepInput) enginePlan(ctx context.Context, req planRequest) *planResult {
	fail := func(step string, err error) *planResult { return &planResult{Err: err, Failed: step} }
	pc, step, err := in.preparePlanCall(ctx, req)
	if err != nil {
		return fail(step, err)
	}
	defer pc.done()
	env, varFile, args := pc.env, pc.varFile, pc.args
	if err := os.MkdirAll(filepath.Dir(in.ur.PlanFile), 0o700); err != nil {
		return fail("setup", err)
	}
	o, closeBlock, err := in.stepHeld(ctx, report.StepPlan, in.planInvocation(env, varFile, args), true)
	// The plan's block is printed once reading the plan has given the
	// values it marks sensitive, or when reading it failed.
	defer closeBlock()
	if err != nil {
		return fail(report.StepPlan, err)
	}
	r := &planResult{HasChanges: o.HasChanges}
	// A saved plan holds every value the plan saw, secrets included.
	if err := os.Chmod(in.ur.PlanFile, 0o600); err != nil {
		return fail(report.StepPlan, err)
	}
	if out := in.run.PlanOut; out != "" {
		if err := copyFile(in.ur.PlanFile, out); err != nil {
			return fail(report.StepPlan, err)
		}
		r.SavedTo = out
	}
	// A plan with changes is read for its counts, outputs and secrets
	// from its file; one without (detailed exit code 0) needs nothing.
	// The engine is started again, for show -json, only when something
	// needs the plan's JSON itself (--plan-json, a cost estimate) or the
	// file cannot be read (docs/architecture.md#what-a-command-costs).
	if o.HasChanges || in.run.PlanJSON != "" {
		v, planJSON, err := in.readPlan(ctx, env, o.HasChanges)
		if err != nil {
			return fail(report.StepShow, err)
		}
		if o.HasChanges {
			r.View = v
			in.ur.Masker.Add(v.Secrets...)
			if planJSON != nil {
				r.Cost = in.estimateCost(ctx, planJSON)
			}
		}
		if dir := in.run.PlanJSON; dir != "" {
			if err := in.writePlanJSON(dir, planJSON); err != nil {
				return fail(report.StepShow, err)
			}
		}
	}
	rel, _ := filepath.Rel(in.run.State.Path, in.ur.PlanFile)
	var deployed *runstate.DeployedRecord
	if in.run.Policy.ReusesPlans && !o.HasChanges && wholePlan(args) {
		// Nothing to change: what is deployed is this content.
		deployed = in.run.deployedNow(ctx, in.ur.Spec)
	}
	in.handOff()
	v := r.View
	noSecrets := o.HasChanges && len(v.Secrets) == 0
	err = in.run.State.UpdateUnitUnsynced(in.ur.Spec, func(s *runstate.UnitState) {
		s.Plan = &runstate.PlanRecord{Digest: in.memo.digest, File: filepath.ToSlash(rel), HasChanges: o.HasChanges, Changes: v.Changes,
			Destroy: args.Destroy, Partial: !wholePlan(args), At: in.run.Now().UTC(), ChangedOutputs: v.ChangedOutputs, OutputsKnown: true,
			Command: in.run.Command, Review: in.run.PullRequest, ChangeSet: v.ChangeSet, NoSecrets: noSecrets, Gates: in.Gates}
		if deployed != nil {
			s.Deployed = deployed
		}
		if in.WithRecord != nil {
			in.WithRecord(s)
		}
	})
	if err != nil {
		return fail(report.StepState, err)
	}
	return r
}

// readPlan reads the unit's saved plan: from its file when it can and
// nothing needs the plan's JSON, else from `show -json`, which it also
// returns. hasChanges says the plan changes something: one that does
// not is read only for its JSON. A reviewed plan recorded with a change
// set of show -json's form is compared in that form
// (docs/behaviour.md#saved-plans).
func (in *stepInput) readPlan(ctx context.Context, env map[string]string, hasChanges bool) (planView, []byte, error) {
	var v planView
	var fileErr error
	if hasChanges {
		v, fileErr = readPlanFile(in.ur.PlanFile)
		if fileErr == nil && in.ur.Reviewed != nil && changeSetForm(in.ur.Reviewed.ChangeSet) == "json" {
			fileErr = errReviewedAsJSON
		}
	}
	wantsJSON := in.run.PlanJSON != "" || (hasChanges && in.run.Cost != nil && in.run.Cost.path != "")
	if fileErr == nil && !wantsJSON {
		return v, nil, nil
	}
	if fileErr != nil && !errors.Is(fileErr, errReviewedAsJSON) {
		in.run.Console.UnitNote(in.ur.Spec.Name(), fmt.Sprintf("the plan file is read with show -json: %v", fileErr))
	}
	planJSON, err := in.showJSON(ctx, env)
	if err != nil {
		return planView{}, nil, err
	}
	if hasChanges && fileErr != nil {
		if v, err = readPlanJSON(planJSON); err != nil {
			return planView{}, nil, err
		}
	}
	return v, planJSON, nil
}

// errReviewedAsJSON: the reviewed plan's change set was computed from
// show -json, by a strata that did not read plan files.
var errReviewedAsJSON = errors.New("the reviewed plan's change set is of show -json's form")

// planInputs are what a plan (or an apply without a plan file) is called
// with: the step's environment, the var file written for the call, and
// plan's arguments with the stack's targets.
type planInputs struct {
	env     map[string]string
	varFile string
	args    engineargs.PlanArgs
	done    func() // removes the var file
}

// preparePlanCall computes a plan's var file and content digest, selects
// the workspace and writes the var file; on failure it returns the step
// that failed (setup, workspace) and its error.
func (in *stepInput) preparePlanCall(ctx context.Context, req planRequest) (planInputs, string, error) {
	ea, env := req.Args, req.Env
	varContent, err := in.prepareInputsWith(ea, tfVarsOf(env))
	if err != nil {
		return planInputs{}, "setup", err
	}
	if err := in.selectWorkspace(ctx, true); err != nil {
		return planInputs{}, report.StepWorkspace, err
	}
	varFile, removeVarFile, err := in.writeVarFile(varContent)
	if err != nil {
		return planInputs{}, "setup", err
	}
	targets, _ := in.targets()
	args := planArgs(ea, targets, in.run.Policy.Destroys)
	return planInputs{env: env, varFile: varFile, args: args, done: removeVarFile}, "", nil
}

// savedRecord is the unit's record as an apply's plan job starts, read
// once for the reviewed plan and the plan to reuse; nil when unreadable.
func (j *job) savedRecord() *runstate.UnitState {
	us, _ := j.run.State.ReadUnit(j.ur.Spec)
	return us
}

// reusePlan takes the saved plan of the unit's record us when its digest
// is the current one and no unit this one plans after was applied since
// it was made.
func (j *job) reusePlan(us *runstate.UnitState) bool {
	if us == nil || us.Plan == nil || us.Plan.Digest != j.in.memo.digest || us.Plan.Destroy {
		return false
	}
	if _, err := os.Stat(j.ur.PlanFile); err != nil {
		return false
	}
	for _, group := range j.ur.PlanAfter {
		for _, p := range group {
			ps, err := j.run.State.ReadUnit(p)
			if err != nil || (ps.Apply != nil && ps.Apply.At.After(us.Plan.At)) {
				return false
			}
		}
	}
	j.res.HasChanges, j.res.Changes, j.res.ChangeSet = us.Plan.HasChanges, us.Plan.Changes, us.Plan.ChangeSet
	j.res.NoSecrets, j.res.Gates = us.Plan.NoSecrets, us.Plan.Gates
	j.res.ChangedOutputs, j.res.OutputsKnown = us.Plan.ChangedOutputs, us.Plan.KnowsOutputs()
	j.run.Console.UnitNote(j.ur.Spec.Name(), fmt.Sprintf("reusing the plan saved at %s", us.Plan.At.Format(time.RFC3339)))
	return true
}

// writePlanJSON writes show -json of the saved plan to
// DIR/<dir>/<workspace>[#stack].json for policy tools (--plan-json).
func (in *stepInput) writePlanJSON(dir string, planJSON []byte) error {
	u := in.ur.Spec
	name := u.Workspace
	if u.Shared {
		name += "#" + u.Stack.Name
	}
	path, err := safepath.Join(dir, u.Dir, name+".json")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// Plan JSON holds the plan's values, secrets included.
	return atomicfile.Write(path, planJSON, 0o600)
}

// copyFile copies a saved plan to where the user asked for it, 0600
// whatever the file there had before.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return atomicfile.Write(dst, b, 0o600)
}
