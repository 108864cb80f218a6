package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/contenthash"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/stacks"
)

// stepsResult is what a job reports to the coordinator.
type stepsResult struct {
	steps       []StepReport
	err         error
	failedStep  string
	interrupted bool
	hasChanges  bool
	changes     Changes
	// changedOutputs are the outputs the plan (or the apply in one call)
	// changes, when outputsKnown; plannedOutputs the outputs' values
	// after the plan, read from its JSON.
	changedOutputs []string
	outputsKnown   bool
	plannedOutputs map[string]plannedOutput
	digest         string
	// changeSet is the digest of what the plan changes (PlanRecord).
	changeSet string
	// noSecrets: the plan's JSON marks nothing sensitive (PlanRecord).
	noSecrets bool
	// replanned: a stale saved plan was made again, and the new plan
	// waits for approval.
	replanned bool
	// fresh: the apply job planned again (a stale plan, a retry), so
	// its changes and digest are the new plan's.
	fresh bool
	// replan compares the new plan with the reviewed plan it replaced;
	// refused says why --require-reviewed-plan refused it.
	replan  *Replanned
	refused string
	// appliedEarlier: the state already held the stale saved plan's
	// changes (reviewed.go).
	appliedEarlier bool
	// applied: a jobPlanApply applied in one engine call.
	applied bool
	outputs map[string]any
	// produced are a producer's outputs, read after its apply (or its
	// plan with no changes) for its consumers.
	produced    map[string]tfexec.OutputMeta
	producedErr error
}

// job is the working state of one job of one unit.
type job struct {
	r   *runState
	ur  *unit
	res stepsResult
	// envVars are what env steps set, for the later steps.
	envVars map[string]string
	// digestKey is what the job's digest (res.digest) was computed from.
	digestKey string
}

// runJob runs one job of a unit: its steps in order, holding the unit's
// dir lock while any of them runs.
func (r *runState) runJob(ctx context.Context, ur *unit, kind jobKind) stepsResult {
	j := &job{r: r, ur: ur}
	lock, err := filelock.Acquire(ctx, r.sd.DirLockPath(ur.u.Dir), func() {
		r.con.note(fmt.Sprintf("[%s] waiting for another strata working in %s", ur.u.Name(), ur.u.Dir))
	})
	if err != nil {
		j.res.err, j.res.failedStep, j.res.interrupted = err, "lock", ctx.Err() != nil
		return j.res
	}
	defer lock.Release()
	if err := os.MkdirAll(ur.tmpDir, 0o700); err != nil {
		j.res.err, j.res.failedStep = err, "setup"
		return j.res
	}
	switch {
	case kind == jobApply:
		j.apply(ctx)
	case kind == jobPlanApply:
		j.planApply(ctx)
	case r.opt.Command == CmdInit:
		j.runWorkflow(ctx, StepInit, r.initSteps(ur))
	case r.opt.Command == CmdValidate:
		j.validate(ctx)
	case r.opt.Command == CmdOutput:
		j.output(ctx)
	default:
		j.plan(ctx)
	}
	applied := kind == jobApply || j.res.applied
	if j.res.err == nil && r.opt.Command != CmdDrift && !r.destroying() &&
		(applied || (!j.res.hasChanges && !ur.forceApply)) && ur.readsFor(applied, &j.res) {
		j.readOutputs(ctx)
	}
	return j.res
}

// failed records a failed step and reports whether the job must stop.
func (j *job) failed(ctx context.Context, step string, err error) bool {
	if err == nil {
		return false
	}
	j.res.err, j.res.failedStep = err, step
	j.res.interrupted = ctx.Err() != nil
	return true
}

// step runs one engine call as a step of the report, with the console
// block, the retries of transient failures and the one init of an "init
// required" failure.
func (j *job) step(ctx context.Context, name string, build func() invocation, retry bool) (outcome, error) {
	o, closeBlock, err := j.stepHeld(ctx, name, build, retry)
	closeBlock()
	return o, err
}

// stepHeld is step with the console block of a call that ended (not one
// that failed) left open: the caller closes it, once it has learnt what
// the block must mask (docs/behaviour.md#what-is-masked).
func (j *job) stepHeld(ctx context.Context, name string, build func() invocation, retry bool) (outcome, func(), error) {
	started := j.r.opt.Now()
	delay := j.r.opt.RetryDelay
	var (
		o    outcome
		err  error
		held = func() {}
	)
	for try := 1; ; try++ {
		inv := build()
		out := j.r.con.stepWriter(j.ur, name)
		o, err = j.r.exec.Execute(ctx, j.ur.u.ID(), inv, out, out.stderr())
		if err == nil || ctx.Err() != nil {
			held = func() { out.Close() }
			break
		}
		out.Close()
		if name != StepInit && !j.ur.inited && initRequired(err) {
			if _, ierr := j.initNow(ctx, false, j.ur.initArgs, nil); ierr != nil {
				break
			}
			continue
		}
		if !retry || !transient(err) || try >= 3 {
			break
		}
		j.r.con.note(fmt.Sprintf("[%s] %s failed with a transient error; trying again in %s", j.ur.u.Name(), name, delay))
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = delay * 3 / 2
	}
	j.res.steps = append(j.res.steps, StepReport{Name: name, StartedAt: started, FinishedAt: j.r.opt.Now(), OK: err == nil})
	return o, held, err
}

// init runs init unless the unit's data dir is current (docs/behaviour.md#steps-of-a-unit): its
// fingerprint equals the one recorded at the last successful init.
func (j *job) init(ctx context.Context, always, noBackend bool, args InitArgs, stepEnv map[string]string) bool {
	if !always && j.ur.inited {
		return true
	}
	fp, fpErr := j.fingerprint(args)
	if !always && fpErr == nil && j.initCurrent(fp) {
		j.ur.inited, j.ur.initArgs = true, args
		return true
	}
	_, err := j.initNow(ctx, noBackend, args, stepEnv)
	return !j.failed(ctx, StepInit, err)
}

func (j *job) initNow(ctx context.Context, noBackend bool, args InitArgs, stepEnv map[string]string) (outcome, error) {
	if noBackend {
		f := false
		args.Backend = &f
	}
	// Terraform's plugin cache is not safe under parallel init: inits that
	// share one never overlap, across strata processes too.
	if cache := j.engineEnv(stepEnv)["TF_PLUGIN_CACHE_DIR"]; cache != "" {
		if err := os.MkdirAll(cache, 0o755); err == nil {
			lock, err := filelock.Acquire(ctx, filepath.Join(cache, ".strata-init.lock"), nil)
			if err != nil {
				return outcome{}, err
			}
			defer lock.Release()
		}
	}
	o, err := j.step(ctx, StepInit, func() invocation {
		a := args
		return invocation{Step: StepInit, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(stepEnv), Call: initCall{Args: a, Version: j.ur.engine.Version}}
	}, true)
	if err != nil {
		return o, err
	}
	j.ur.inited = true
	j.ur.initArgs = args
	if noBackend {
		return o, nil
	}
	if fp, ferr := j.fingerprint(args); ferr == nil {
		_, statErr := os.Stat(j.ur.dataDir)
		err = j.r.sd.UpdateUnitUnsynced(j.ur.u, func(s *UnitState) {
			s.Init = &InitRecord{Fingerprint: fp, At: j.r.opt.Now().UTC(), DataDir: statErr == nil}
		})
	}
	return o, err
}

func (j *job) initCurrent(fp string) bool {
	us, err := j.r.sd.ReadUnit(j.ur.u)
	if err != nil || us.Init == nil || us.Init.Fingerprint != fp {
		return false
	}
	_, statErr := os.Stat(j.ur.dataDir)
	return statErr == nil || !us.Init.DataDir
}

func (j *job) fingerprint(args InitArgs) (string, error) {
	u := j.ur.u
	return contenthash.InitFingerprint(contenthash.FingerprintInput{
		Root: j.r.p.Root, Dir: u.Dir, ModuleDirs: j.r.p.LocalModules(u.Dir),
		Engine: j.ur.engine.Name, EngineVersion: j.ur.engine.Version.String(),
		InitArgs: initArgText(args),
	})
}

func initArgText(a InitArgs) []string {
	return a.Flags()
}

// workspace selects the unit's workspace unless its data dir already has
// it; a missing workspace is created in plan and apply (docs/behaviour.md#steps-of-a-unit).
func (j *job) workspace(ctx context.Context, create bool) bool {
	ws := j.ur.u.Workspace
	if !j.ur.u.CreateAndSelectWorkspace || currentWorkspace(j.ur.dataDir) == ws {
		return true
	}
	_, err := j.step(ctx, StepWorkspace, func() invocation {
		return invocation{Step: StepWorkspace, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: workspaceCall{Name: ws}}
	}, true)
	if err != nil && create && ctx.Err() == nil && strings.Contains(errorText(err), "doesn't exist") {
		// The failed select stays in the report; the new workspace follows.
		_, err = j.step(ctx, StepWorkspace, func() invocation {
			return invocation{Step: StepWorkspace, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: workspaceCall{Name: ws, New: true}}
		}, true)
		if err == nil {
			// The report shows the workspace step once, as it ended.
			j.res.steps = append(j.res.steps[:len(j.res.steps)-2], j.res.steps[len(j.res.steps)-1])
		}
	}
	return !j.failed(ctx, StepWorkspace, err)
}

// prepareInputs computes the unit's var file content and its content
// digest.
func (j *job) prepareInputs() (varFile []byte, err error) {
	return j.prepareInputsWith(j.r.opt.EngineArgs, nil)
}

// prepareInputsWith computes the var file from strata's TF_VAR_ values,
// then those env steps and the step's env set, and the digest over the
// given engine arguments. Nothing is written: the var file exists only
// while the engine call that reads it runs (writeVarFile), since it holds
// values from strata's environment and other stacks' outputs.
func (j *job) prepareInputsWith(ea EngineArgs, stepTFVars map[string]string) (varFile []byte, err error) {
	u := j.ur.u
	fromEnvSteps := map[string]string{}
	for k, v := range j.envVars {
		if name, ok := strings.CutPrefix(k, "TF_VAR_"); ok {
			fromEnvSteps[name] = v
		}
	}
	in := varFileInput{
		Dir:          j.ur.dir,
		TFVars:       []map[string]string{j.r.tfVars, stackTFVars(u), fromEnvSteps, stepTFVars},
		Inputs:       j.ur.inputVals,
		UserVars:     ea.Plan.Vars,
		UserVarFiles: ea.Plan.VarFiles,
	}
	content, err := buildVarFile(in)
	if err != nil {
		return nil, fmt.Errorf("var file: %w", err)
	}
	// The digest leaves out what env steps set: they run as part of the
	// plan workflow, and a saved plan is reused without running it again,
	// so the reuse decision is made before they run (reuseBeforeWorkflow).
	// Their values are in the plan itself.
	digestContent := content
	if len(fromEnvSteps) > 0 {
		in.TFVars = []map[string]string{j.r.tfVars, stackTFVars(u), stepTFVars}
		if digestContent, err = buildVarFile(in); err != nil {
			return nil, fmt.Errorf("var file: %w", err)
		}
	}
	targets, err := j.targets()
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), ea.Text...), targetArgs(targets)...)
	// The files do not change while a job runs: a digest of the same
	// inputs (the reuse check, then the plan it falls back to) is read,
	// not hashed again.
	key := string(digestContent) + "\x00" + strings.Join(args, "\x00")
	if j.digestKey == key && j.res.digest != "" {
		return content, nil
	}
	j.res.digest, err = contenthash.Digest(contenthash.DigestInput{
		Root: j.r.p.Root, Dir: u.Dir, ModuleDirs: j.r.p.LocalModules(u.Dir), OtherRoots: j.r.otherRoots(u.Dir),
		FilePatterns: u.FilePatterns(), Engine: j.ur.engine.Name, EngineVersion: j.ur.engine.Version.String(),
		Workspace: u.Workspace, Stack: u.Stack.Name, Variables: variableMap(u),
		EngineArgs: args, VarFile: digestContent,
	})
	if err == nil {
		j.digestKey = key
	}
	return content, err
}

// writeVarFile writes the unit's var file for one engine call and returns
// its path ("" when there is nothing to write) and the function that
// removes it when the call ends.
func (j *job) writeVarFile(content []byte) (string, func(), error) {
	if content == nil {
		os.Remove(j.ur.varFile)
		return "", func() {}, nil
	}
	// The file lives for one call: a crash leaves nothing to keep.
	if err := writeStateFile(j.ur.varFile, content, false); err != nil {
		return "", func() {}, err
	}
	return j.ur.varFile, func() { os.Remove(j.ur.varFile) }, nil
}

func targetArgs(targets []string) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = "-target=" + t
	}
	return out
}

// plan runs the unit's plan steps; in apply, a saved plan still current
// is reused instead of a new plan (docs/behaviour.md#run-state).
func (j *job) plan(ctx context.Context) {
	steps := j.r.workflowSteps(j.ur, StepPlan)
	if j.r.opt.Command != CmdApply {
		j.runWorkflow(ctx, StepPlan, steps)
		return
	}
	j.takeReviewed()
	reused := j.reuseBeforeWorkflow(ctx, steps)
	if !reused {
		j.runWorkflow(ctx, StepPlan, steps)
	}
	j.review(reused)
}

// reuseBeforeWorkflow decides, before any plan step runs, whether apply
// reuses the saved plan: a reused plan's workflow (its run and env steps,
// its init) already ran when it was made, and does not run again. The
// plan is then shown, as a new one would be.
func (j *job) reuseBeforeWorkflow(ctx context.Context, steps []stacks.RunStep) bool {
	st := stacks.DefaultStep(StepPlan)
	for _, s := range steps {
		if s.Type == StepPlan {
			st = s
			break
		}
	}
	if j.workflowEnvironment() != nil {
		return false
	}
	ea, env, tfVars, err := j.engineStepArgs(CmdPlan, st, "plan step")
	if err != nil {
		return false
	}
	if _, err := j.prepareInputsWith(ea, tfVars); err != nil || !j.reusePlan() {
		return false
	}
	if j.res.hasChanges && !j.res.noSecrets {
		// The text shows what the plan's JSON marks sensitive wherever
		// the engine does not (docs/behaviour.md#what-is-masked): read
		// it first, unless reading it when it was made found nothing.
		planJSON, err := j.showJSON(ctx, env)
		if j.failed(ctx, StepShow, err) {
			return true
		}
		v, err := readPlanJSON(planJSON)
		if j.failed(ctx, StepShow, err) {
			return true
		}
		j.ur.masker.Add(v.Secrets...)
	}
	_, err = j.step(ctx, StepShow, func() invocation {
		return invocation{Step: StepShow, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(env), Call: showCall{File: j.ur.planFile, Text: true}}
	}, true)
	j.failed(ctx, StepShow, err)
	return true
}

// targets are the stack's targets, substituted.
func (j *job) targets() ([]string, error) {
	out := make([]string, len(j.ur.u.Stack.Targets))
	for i, t := range j.ur.u.Stack.Targets {
		v, err := j.subst(t, "targets")
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
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
	o, closeBlock, err := j.stepHeld(ctx, StepPlan, func() invocation {
		return invocation{Step: StepPlan, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(env),
			Call: planCall{Out: j.ur.planFile, VarFile: varFile, Args: args}}
	}, true)
	// The plan's block is printed once its JSON has given the values it
	// marks sensitive, or when reading it failed.
	defer closeBlock()
	if j.failed(ctx, StepPlan, err) {
		return
	}
	j.res.hasChanges, j.res.changes, j.res.changeSet = o.HasChanges, Changes{}, ""
	j.res.changedOutputs, j.res.outputsKnown, j.res.plannedOutputs = nil, true, nil
	// A saved plan holds every value the plan saw, secrets included.
	if err := os.Chmod(j.ur.planFile, 0o600); j.failed(ctx, StepPlan, err) {
		return
	}
	if out := j.r.opt.PlanOut; out != "" {
		if err := copyFile(j.ur.planFile, out); j.failed(ctx, StepPlan, err) {
			return
		}
	}
	// A plan with changes is read as JSON for its counts and outputs; one
	// without (detailed exit code 0) needs no other engine call, unless
	// --plan-json asks for its JSON. Either way the plan is shown once.
	if o.HasChanges || j.r.opt.PlanJSON != "" {
		planJSON, err := j.showJSON(ctx, env)
		if j.failed(ctx, StepShow, err) {
			return
		}
		if o.HasChanges {
			v, err := readPlanJSON(planJSON)
			if j.failed(ctx, StepShow, err) {
				return
			}
			j.res.changes, j.res.changedOutputs, j.res.plannedOutputs = v.Changes, v.ChangedOutputs, v.Outputs
			j.res.changeSet, j.res.noSecrets = v.ChangeSet, len(v.Secrets) == 0
			j.ur.masker.Add(v.Secrets...)
		}
		if dir := j.r.opt.PlanJSON; dir != "" && j.failed(ctx, StepShow, j.writePlanJSON(dir, planJSON)) {
			return
		}
	}
	rel, _ := filepath.Rel(j.r.sd.Path, j.ur.planFile)
	var deployed *DeployedRecord
	if j.r.opt.Command == CmdApply && !o.HasChanges && wholePlan(args) {
		// Nothing to change: what is deployed is this content.
		deployed = j.r.deployedNow(ctx, j.ur.u)
	}
	err = j.r.sd.UpdateUnitUnsynced(j.ur.u, func(s *UnitState) {
		s.Plan = &PlanRecord{Digest: j.res.digest, File: filepath.ToSlash(rel), HasChanges: o.HasChanges, Changes: j.res.changes,
			Destroy: args.Destroy, Partial: !wholePlan(args), At: j.r.opt.Now().UTC(), ChangedOutputs: j.res.changedOutputs, OutputsKnown: true,
			Command: j.r.opt.Command, Review: j.r.opt.PullRequest, ChangeSet: j.res.changeSet, NoSecrets: j.res.noSecrets}
		if deployed != nil {
			s.Deployed = deployed
		}
	})
	j.failed(ctx, StepState, err)
}

// showJSON runs `show -json` of the unit's saved plan, as a step of its
// own.
func (j *job) showJSON(ctx context.Context, env map[string]string) ([]byte, error) {
	o, err := j.step(ctx, StepShow, func() invocation {
		return invocation{Step: StepShow, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(env), Call: showCall{File: j.ur.planFile}}
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
	ea, env, tfVars, err := j.engineStepArgs(CmdPlan, st, where)
	if j.failed(ctx, StepPlan, err) {
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
	if j.r.opt.Command == CmdDestroy {
		args.Destroy = true
	}
	return planInputs{env: env, varFile: varFile, args: args, done: removeVarFile}, true
}

// reusePlan takes the saved plan when its digest is the current one and no
// unit this one plans after was applied since it was made.
func (j *job) reusePlan() bool {
	us, err := j.r.sd.ReadUnit(j.ur.u)
	if err != nil || us.Plan == nil || us.Plan.Digest != j.res.digest || us.Plan.Destroy {
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
	j.res.changedOutputs, j.res.outputsKnown = us.Plan.ChangedOutputs, us.Plan.OutputsKnown || !us.Plan.HasChanges
	j.r.con.note(fmt.Sprintf("[%s] reusing the plan saved at %s", j.ur.u.Name(), us.Plan.At.Format(time.RFC3339)))
	return true
}

// apply runs the unit's apply steps.
func (j *job) apply(ctx context.Context) {
	j.runWorkflow(ctx, StepApply, j.r.workflowSteps(j.ur, StepApply))
}

// applyStep applies the unit's saved plan (extra_args never go to apply
// <planfile>). A plan the engine calls stale is discarded and made again,
// and the new one is applied only when nobody has to look at it first (or
// it has no changes); with retry enabled, a failed apply re-plans and tries
// again on the same terms. A new plan is compared with the reviewed plan
// (reviewed.go); a stale plan whose new plan has no changes was applied
// earlier (appliedEarlier).
func (j *job) applyStep(ctx context.Context, st stacks.RunStep, where string) {
	env, _, err := j.stepEnv(st, where)
	if j.failed(ctx, StepApply, err) {
		return
	}
	if !j.init(ctx, false, false, j.ur.initArgs, nil) || !j.workspace(ctx, false) {
		return
	}
	tries, delay, backoff := 1, j.r.opt.RetryDelay, 1.5
	if r := st.Retry; r != nil {
		tries, backoff = r.Tries, r.Backoff
		if r.Delay != nil {
			delay = *r.Delay
		}
	}
	auto := j.r.opt.AutoApprove || j.ur.autoApply
	stalePlans := 0
	for try := 1; ; try++ {
		var saved *PlanRecord
		saved, err = j.applyOnce(ctx, env)
		if err == nil || ctx.Err() != nil || j.ur.userPlan {
			// A user's own plan file (apply FILE) is theirs: strata
			// never makes another in its place, as terraform would not.
			break
		}
		stale := strings.Contains(errorText(err), "Saved plan is stale")
		if stale {
			stalePlans++
			j.r.con.note(fmt.Sprintf("[%s] the saved plan is stale (the state changed since it was made); planning again", j.ur.u.Name()))
		}
		if (!stale && try >= tries) || stalePlans > 1 {
			break
		}
		if !stale {
			j.r.con.note(fmt.Sprintf("[%s] apply failed; retrying (%d of %d) in %s", j.ur.u.Name(), try+1, tries, delay))
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
			delay = time.Duration(float64(delay) * backoff)
		}
		// A stale or failed apply needs a new plan.
		j.res.err, j.res.failedStep = nil, ""
		j.planStep(ctx, stacks.DefaultStep(StepPlan), where)
		if j.res.err != nil {
			return
		}
		j.res.fresh = true
		if stale && saved != nil && saved.HasChanges && !j.res.hasChanges {
			j.appliedEarlier(ctx, saved)
			return
		}
		if j.r.opt.Command == CmdApply && !j.r.destroying() {
			j.compareReviewed()
			if j.refuseUnreviewed(false) {
				return
			}
		}
		if !auto && j.res.hasChanges {
			if stale {
				j.res.replanned = true
				return
			}
			j.failed(ctx, StepApply, fmt.Errorf("%w; a new plan is saved for review", err))
			return
		}
	}
	if err == nil && !j.ur.userPlan {
		os.Remove(j.ur.planFile)
	}
	j.failed(ctx, StepApply, err)
}

// applyOnce applies the saved plan once, recording the apply in the run
// state, and returns the plan's record. The plan record is cleared before
// the engine starts: a plan is applied at most once, and an apply that
// fails, is interrupted or never reports back (strata killed) leaves no
// plan to be reused.
func (j *job) applyOnce(ctx context.Context, env map[string]string) (*PlanRecord, error) {
	digest, partial := "", false
	var changed []string
	known := false
	var saved *PlanRecord
	if err := j.r.sd.UpdateUnit(j.ur.u, func(s *UnitState) {
		if s.Plan != nil {
			digest, partial = s.Plan.Digest, s.Plan.Partial
			changed, known = s.Plan.ChangedOutputs, s.Plan.OutputsKnown || !s.Plan.HasChanges
			saved = s.Plan
		}
		s.Plan = nil
	}); err != nil {
		j.res.steps = append(j.res.steps, StepReport{Name: StepApply, StartedAt: j.r.opt.Now(), FinishedAt: j.r.opt.Now()})
		return nil, err
	}
	if f := j.r.opt.Applying; f != nil && saved != nil && saved.HasChanges {
		if err := f(j.ur.u, digest); err != nil {
			j.res.steps = append(j.res.steps, StepReport{Name: StepApply, StartedAt: j.r.opt.Now(), FinishedAt: j.r.opt.Now()})
			return saved, fmt.Errorf("not applied: recording that the apply starts: %w", err)
		}
	}
	_, err := j.step(ctx, StepApply, func() invocation {
		return invocation{Step: StepApply, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(env), Call: applyPlanCall{File: j.ur.planFile}}
	}, false)
	result := StatusApplied
	if j.r.destroying() {
		result = StatusDestroyed
	}
	switch {
	case ctx.Err() != nil && err != nil:
		result = StatusCancelled
	case err != nil:
		result = StatusFailed
	}
	if serr := j.recordApply(ctx, ApplyRecord{Digest: digest, Result: result, ChangedOutputs: changed, OutputsKnown: known}, partial); serr != nil {
		if err == nil {
			// The apply happened; only its record is missing.
			return saved, fmt.Errorf("the apply succeeded, but %w", serr)
		}
		return saved, fmt.Errorf("%w; and %v", err, serr)
	}
	return saved, err
}

// recordApply records an apply of the unit's plan in its run state, now,
// with the commit it deployed when it applied the whole unit (not partial)
// and clears the plan record: an apply consumes its plan.
func (j *job) recordApply(ctx context.Context, a ApplyRecord, partial bool) error {
	var deployed *DeployedRecord
	if a.Result == StatusApplied && !partial {
		deployed = j.r.deployedNow(ctx, j.ur.u)
	}
	a.At, a.Destroy = j.r.opt.Now().UTC(), j.r.destroying()
	return j.r.sd.UpdateUnit(j.ur.u, func(s *UnitState) {
		s.Plan = nil
		s.Apply = &a
		if deployed != nil {
			s.Deployed = deployed
		}
	})
}

func (j *job) validate(ctx context.Context) {
	initialised := false
	if _, err := os.Stat(j.ur.dataDir); err == nil {
		initialised = true
	}
	if !initialised && !j.init(ctx, true, true, j.r.opt.EngineArgs.Init, nil) {
		return
	}
	_, err := j.step(ctx, StepValidate, func() invocation {
		return invocation{Step: StepValidate, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: validateCall{Args: j.r.opt.EngineArgs.Command}}
	}, true)
	j.failed(ctx, StepValidate, err)
}

func (j *job) output(ctx context.Context) {
	outs, step, err := j.engineOutputs(ctx, j.r.opt.EngineArgs.Init)
	if j.failed(ctx, step, err) {
		return
	}
	j.res.outputs = outputsJSON(outs, j.r.opt.ShowSensitive)
}

// engineOutputs runs init (when needed), the workspace selection and
// output -json; sensitive values join the unit's masker. On failure it
// returns the step that failed, leaving the job's own error to the caller.
func (j *job) engineOutputs(ctx context.Context, initArgs InitArgs) (map[string]tfexec.OutputMeta, string, error) {
	if !j.init(ctx, false, false, initArgs, nil) || !j.workspace(ctx, false) {
		err, step := j.res.err, j.res.failedStep
		j.res.err, j.res.failedStep = nil, ""
		return nil, step, err
	}
	o, err := j.step(ctx, StepOutput, func() invocation {
		return invocation{Step: StepOutput, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: outputCall{}}
	}, true)
	if err != nil {
		return nil, StepOutput, err
	}
	for _, out := range o.Outputs {
		if out.Sensitive {
			j.ur.masker.Add(jsonString(out.Value))
		}
	}
	return o.Outputs, "", nil
}

// otherRoots lists the dirs of other root modules below dir (and below its
// local modules), which the content digest leaves out.
func (r *runState) otherRoots(dir string) []string {
	out := r.p.RootsBelow(dir)
	for _, m := range r.p.LocalModules(dir) {
		out = append(out, r.p.RootsBelow(m)...)
	}
	return out
}

// variableMap is a unit's effective stack variables.
func variableMap(u *stacks.Unit) map[string]string {
	m := make(map[string]string, len(u.Stack.Variables))
	for _, v := range u.Stack.Variables {
		m[v.Name] = v.Value
	}
	return m
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
