package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/contenthash"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// stepsResult is what a job reports to the coordinator.
type stepsResult struct {
	steps       []report.StepReport
	err         error
	failedStep  string
	interrupted bool
	hasChanges  bool
	changes     report.Changes
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
	replan  *report.Replanned
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
		r.con.Note(fmt.Sprintf("[%s] waiting for another strata working in %s", ur.u.Name(), ur.u.Dir))
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
	case r.policy.Job == command.JobInit:
		j.runWorkflow(ctx, report.StepInit, r.initSteps(ur))
	case r.policy.Job == command.JobValidate:
		j.validate(ctx)
	case r.policy.Job == command.JobOutput:
		j.output(ctx)
	default:
		j.plan(ctx)
	}
	applied := kind == jobApply || j.res.applied
	if j.res.err == nil && !r.policy.AsItStands && !r.destroying() &&
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
		out := j.r.con.Step(j.ur.display, name)
		o, err = j.r.exec.Execute(ctx, j.ur.u.ID(), inv, out, out.Stderr())
		if err == nil || ctx.Err() != nil {
			held = func() { out.Close() }
			break
		}
		out.Close()
		if name != report.StepInit && !j.ur.inited && initRequired(err) {
			if _, ierr := j.initNow(ctx, false, j.ur.initArgs, nil); ierr != nil {
				break
			}
			continue
		}
		if !retry || !transient(err) || try >= 3 {
			break
		}
		j.r.con.Note(fmt.Sprintf("[%s] %s failed with a transient error; trying again in %s", j.ur.u.Name(), name, delay))
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = delay * 3 / 2
	}
	j.res.steps = append(j.res.steps, report.StepReport{Name: name, StartedAt: started, FinishedAt: j.r.opt.Now(), OK: err == nil})
	return o, held, err
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
	if err := runstate.WriteFile(j.ur.varFile, content, false); err != nil {
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

func (j *job) validate(ctx context.Context) {
	initialised := false
	if _, err := os.Stat(j.ur.dataDir); err == nil {
		initialised = true
	}
	if !initialised && !j.init(ctx, true, true, j.r.opt.EngineArgs.Init, nil) {
		return
	}
	_, err := j.step(ctx, report.StepValidate, func() invocation {
		return invocation{Step: report.StepValidate, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: validateCall{Args: j.r.opt.EngineArgs.Command}}
	}, true)
	j.failed(ctx, report.StepValidate, err)
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
	o, err := j.step(ctx, report.StepOutput, func() invocation {
		return invocation{Step: report.StepOutput, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: outputCall{}}
	}, true)
	if err != nil {
		return nil, report.StepOutput, err
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
