package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// The plan steps of a unit's job: a new plan, or in apply the saved plan
// reused (docs/behaviour.md#run-state).

// plan runs the unit's plan steps; in apply, a saved plan still current
// is reused instead of a new plan (docs/behaviour.md#run-state).
func (j *job) plan(ctx context.Context) {
	steps := j.r.workflowSteps(j.ur, report.StepPlan)
	if !j.r.policy.ReusesPlans {
		j.runWorkflow(ctx, report.StepPlan, steps)
		return
	}
	us := j.savedRecord()
	j.takeReviewed(us)
	reused := j.reuseBeforeWorkflow(ctx, steps, us)
	if !reused {
		j.runWorkflow(ctx, report.StepPlan, steps)
	}
	j.review(reused)
}

// reuseBeforeWorkflow decides, before any plan step runs, whether apply
// reuses the saved plan: a reused plan's workflow (its run and env steps,
// its init) already ran when it was made, and does not run again. The
// plan is then shown, as a new one would be.
func (j *job) reuseBeforeWorkflow(ctx context.Context, steps []stacks.RunStep, us *runstate.UnitState) bool {
	st := stacks.DefaultStep(report.StepPlan)
	for _, s := range steps {
		if s.Type == report.StepPlan {
			st = s
			break
		}
	}
	if j.workflowEnvironment() != nil {
		return false
	}
	ea, env, tfVars, err := j.engineStepArgs(command.Plan, st, "plan step")
	if err != nil {
		return false
	}
	if _, err := j.prepareInputsWith(ea, tfVars); err != nil || !j.reusePlan(us) {
		return false
	}
	if j.res.hasChanges && !j.res.noSecrets {
		// The text shows what the plan's JSON marks sensitive wherever
		// the engine does not (docs/behaviour.md#what-is-masked): read
		// it first, unless reading it when it was made found nothing.
		planJSON, err := j.showJSON(ctx, env)
		if j.failed(ctx, report.StepShow, err) {
			return true
		}
		v, err := readPlanJSON(planJSON)
		if j.failed(ctx, report.StepShow, err) {
			return true
		}
		j.ur.masker.Add(v.Secrets...)
	}
	_, err = j.step(ctx, report.StepShow, func() invocation {
		return invocation{Step: report.StepShow, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(env), Call: showCall{File: j.ur.planFile, Text: true}}
	}, true)
	j.failed(ctx, report.StepShow, err)
	return true
}

// planStep runs workspace and plan with the step's extra_args and env.
func (j *job) planStep(ctx context.Context, st stacks.RunStep, where string) {
	pc, ok := j.preparePlanCall(ctx, st, where)
	if !ok {
		return
	}
	defer pc.done()
	env, varFile, args := pc.env, pc.varFile, pc.args
	if err := os.MkdirAll(filepath.Dir(j.ur.planFile), 0o700); j.failed(ctx, "setup", err) {
		return
	}
	o, closeBlock, err := j.stepHeld(ctx, report.StepPlan, func() invocation {
		return invocation{Step: report.StepPlan, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(env),
			Call: planCall{Out: j.ur.planFile, VarFile: varFile, Args: args}}
	}, true)
	// The plan's block is printed once its JSON has given the values it
	// marks sensitive, or when reading it failed.
	defer closeBlock()
	if j.failed(ctx, report.StepPlan, err) {
		return
	}
	j.res.hasChanges, j.res.changes, j.res.changeSet = o.HasChanges, report.Changes{}, ""
	j.res.changedOutputs, j.res.outputsKnown, j.res.plannedOutputs = nil, true, nil
	// A saved plan holds every value the plan saw, secrets included.
	if err := os.Chmod(j.ur.planFile, 0o600); j.failed(ctx, report.StepPlan, err) {
		return
	}
	if out := j.r.opt.PlanOut; out != "" {
		if err := copyFile(j.ur.planFile, out); j.failed(ctx, report.StepPlan, err) {
			return
		}
	}
	// A plan with changes is read as JSON for its counts and outputs; one
	// without (detailed exit code 0) needs no other engine call, unless
	// --plan-json asks for its JSON. Either way the plan is shown once.
	if o.HasChanges || j.r.opt.PlanJSON != "" {
		planJSON, err := j.showJSON(ctx, env)
		if j.failed(ctx, report.StepShow, err) {
			return
		}
		if o.HasChanges {
			v, err := readPlanJSON(planJSON)
			if j.failed(ctx, report.StepShow, err) {
				return
			}
			j.res.changes, j.res.changedOutputs, j.res.plannedOutputs = v.Changes, v.ChangedOutputs, v.Outputs
			j.res.changeSet, j.res.noSecrets = v.ChangeSet, len(v.Secrets) == 0
			j.ur.masker.Add(v.Secrets...)
		}
		if dir := j.r.opt.PlanJSON; dir != "" && j.failed(ctx, report.StepShow, j.writePlanJSON(dir, planJSON)) {
			return
		}
	}
	rel, _ := filepath.Rel(j.r.sd.Path, j.ur.planFile)
	var deployed *runstate.DeployedRecord
	if j.r.policy.ReusesPlans && !o.HasChanges && wholePlan(args) {
		// Nothing to change: what is deployed is this content.
		deployed = j.r.deployedNow(ctx, j.ur.u)
	}
	err = j.r.sd.UpdateUnitUnsynced(j.ur.u, func(s *runstate.UnitState) {
		s.Plan = &runstate.PlanRecord{Digest: j.res.digest, File: filepath.ToSlash(rel), HasChanges: o.HasChanges, Changes: j.res.changes,
			Destroy: args.Destroy, Partial: !wholePlan(args), At: j.r.opt.Now().UTC(), ChangedOutputs: j.res.changedOutputs, OutputsKnown: true,
			Command: j.r.opt.Command, Review: j.r.opt.PullRequest, ChangeSet: j.res.changeSet, NoSecrets: j.res.noSecrets}
		if deployed != nil {
			s.Deployed = deployed
		}
	})
	j.failed(ctx, report.StepState, err)
}

// showJSON runs `show -json` of the unit's saved plan, as a step of its
// own.
func (j *job) showJSON(ctx context.Context, env map[string]string) ([]byte, error) {
	o, err := j.step(ctx, report.StepShow, func() invocation {
		return invocation{Step: report.StepShow, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(env), Call: showCall{File: j.ur.planFile}}
	}, true)
	return o.PlanJSON, err
}

// planInputs are what a plan (or an apply without a plan file) is called
// with: the step's environment, the var file written for the call, and
// plan's arguments with the stack's targets.
type planInputs struct {
	env     map[string]string
	varFile string
	args    PlanArgs
	done    func() // removes the var file
}

// preparePlanCall reads a plan step's arguments and env, computes the var
// file and the content digest, selects the workspace and writes the var
// file; ok is false when the job failed on the way.
func (j *job) preparePlanCall(ctx context.Context, st stacks.RunStep, where string) (planInputs, bool) {
	ea, env, tfVars, err := j.engineStepArgs(command.Plan, st, where)
	if j.failed(ctx, report.StepPlan, err) {
		return planInputs{}, false
	}
	varContent, err := j.prepareInputsWith(ea, tfVars)
	if j.failed(ctx, "setup", err) || !j.workspace(ctx, true) {
		return planInputs{}, false
	}
	varFile, removeVarFile, err := j.writeVarFile(varContent)
	if j.failed(ctx, "setup", err) {
		return planInputs{}, false
	}
	args := ea.Plan
	targets, _ := j.targets()
	args.Targets = append(append([]string(nil), args.Targets...), targets...)
	if j.r.policy.Destroys {
		args.Destroy = true
	}
	return planInputs{env: env, varFile: varFile, args: args, done: removeVarFile}, true
}

// savedRecord is the unit's record as an apply's plan job starts, read
// once for the reviewed plan and the plan to reuse; nil when unreadable.
func (j *job) savedRecord() *runstate.UnitState {
	us, _ := j.r.sd.ReadUnit(j.ur.u)
	return us
}

// reusePlan takes the saved plan of the unit's record us when its digest
// is the current one and no unit this one plans after was applied since
// it was made.
func (j *job) reusePlan(us *runstate.UnitState) bool {
	if us == nil || us.Plan == nil || us.Plan.Digest != j.res.digest || us.Plan.Destroy {
		return false
	}
	if _, err := os.Stat(j.ur.planFile); err != nil {
		return false
	}
	for _, p := range j.ur.planAfter {
		ps, err := j.r.sd.ReadUnit(p)
		if err != nil || (ps.Apply != nil && ps.Apply.At.After(us.Plan.At)) {
			return false
		}
	}
	j.res.hasChanges, j.res.changes, j.res.changeSet = us.Plan.HasChanges, us.Plan.Changes, us.Plan.ChangeSet
	j.res.noSecrets = us.Plan.NoSecrets
	j.res.changedOutputs, j.res.outputsKnown = us.Plan.ChangedOutputs, us.Plan.KnowsOutputs()
	j.r.con.Note(fmt.Sprintf("[%s] reusing the plan saved at %s", j.ur.u.Name(), us.Plan.At.Format(time.RFC3339)))
	return true
}

// writePlanJSON writes show -json of the saved plan to
// DIR/<dir>/<workspace>[#stack].json for policy tools (--plan-json).
func (j *job) writePlanJSON(dir string, planJSON []byte) error {
	u := j.ur.u
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
