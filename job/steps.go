package job

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/contenthash"
	"github.com/strata-iac/strata/internal/diagnostics"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

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
}

// newJob prepares a job of the unit: the input its steps start from.
func newJob(r *Run, ur *Unit) *job {
	j := &job{run: r, ur: ur}
	tfVarEnv := map[string]string{}
	for k, v := range r.TFVars {
		tfVarEnv["TF_VAR_"+k] = v
	}
	if ur.Vars != nil {
		for k, v := range ur.Vars.TFVars() {
			tfVarEnv["TF_VAR_"+k] = v
		}
	}
	j.in = &stepInput{
		Stack: ur.Spec.Stack.Name, UnitID: ur.Spec.ID(), Who: ur.Spec.Name(), Dir: ur.Dir,
		Env: ur.Env, TFVarEnv: tfVarEnv, Set: map[string]string{}, Vars: ur.Vars, Environ: r.Environ, EngineArgs: r.EngineArgs,
		PlanFile: ur.PlanFile, Masker: ur.Masker, Display: ur.Display, Now: r.Now, exec: r, engine: unitEngine{},
		run: r, ur: ur, memo: &digestMemo{}, reports: &j.res.Steps,
		InitAlways: r.Policy != nil && r.Policy.Job == command.JobInit, RetryDelay: r.RetryDelay,
	}
	if ur.Engine != nil {
		j.in.Engine, j.in.EngineVersion = ur.Engine.Path, ur.Engine.Version
	}
	return j
}

// step runs inv, one engine call built by its step (the …Invocation
// functions), as a step of the report, with the console block, the
// retries of transient failures and the one init of an "init required"
// failure; each try runs the same invocation, so nothing here calls back
// into the step that built it.
func (in *stepInput) step(ctx context.Context, name string, inv invocation, retry bool) (outcome, error) {
	o, closeBlock, err := in.stepHeld(ctx, name, inv, retry)
	closeBlock()
	return o, err
}

// stepHeld is step with the console block of a call that ended (not one
// that failed) left open: the caller closes it, once it has learnt what
// the block must mask (docs/behaviour.md#what-is-masked).
func (in *stepInput) stepHeld(ctx context.Context, name string, inv invocation, retry bool) (outcome, func(), error) {
	o, rep, held, err := in.call(ctx, name, inv, retry)
	*in.reports = append(*in.reports, rep)
	return o, held, err
}

// call is stepHeld returning the call's step report instead of taking it
// into the job's result: an apply's engine call returns it in its
// applyResult, for the job to fold.
func (in *stepInput) call(ctx context.Context, name string, inv invocation, retry bool) (outcome, report.StepReport, func(), error) {
	started := in.run.Now()
	delay := in.run.RetryDelay
	var (
		o    outcome
		err  error
		held = func() {}
	)
	ctx, span := in.stepSpan(ctx, name)
	defer func() { tracing.End(span, spanFailure(in.ur.Masker, err)) }()
	for try := 1; ; try++ {
		out := in.run.Console.Step(in.ur.Display, name)
		o, err = in.run.Exec.Execute(ctx, in.ur.Spec.ID(), inv, out, out.Stderr())
		if err == nil || ctx.Err() != nil {
			held = func() { out.Close() }
			break
		}
		out.Close()
		if name != report.StepInit && !in.ur.Inited && initRequired(err) {
			args, env, ierr := in.unitInit()
			if ierr == nil {
				_, ierr = in.initNow(ctx, false, args, env)
			}
			if ierr != nil {
				break
			}
			continue
		}
		if !retry || !transient(err) || try >= 3 {
			break
		}
		in.run.Console.UnitNote(in.ur.Spec.Name(), fmt.Sprintf("%s failed with a transient error; trying again in %s", name, delay))
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = delay * 3 / 2
	}
	return o, report.StepReport{Name: name, StartedAt: started, FinishedAt: in.run.Now(), OK: err == nil}, held, err
}

// stepSpan starts a step's span, a child of its unit's
// (docs/behaviour.md#traces).
func (in *stepInput) stepSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	return tracing.Span(ctx, name, attribute.String("strata.step", name), attribute.String("strata.unit.id", in.ur.Spec.ID()))
}

// spanFailure is what a failed step's span says: the first error the
// engine reported, or the error's first line, masked as the report is.
func spanFailure(m *console.Masker, err error) string {
	if err == nil {
		return ""
	}
	text := m.Mask(ErrorText(err))
	if reason := diagnostics.FailureReason(text); reason != "" {
		return reason
	}
	return text
}

// prepareInputs computes the unit's var file content and its content
// digest.
func (in *stepInput) prepareInputs() (varFile []byte, err error) {
	return in.prepareInputsWith(in.run.EngineArgs, nil)
}

// prepareInputsWith computes the var file from strata's TF_VAR_ values,
// then those env steps and the step's env set, and the digest over the
// given engine arguments. Nothing is written: the var file exists only
// while the engine call that reads it runs (writeVarFile), since it holds
// values from strata's environment and other stacks' outputs.
func (in *stepInput) prepareInputsWith(ea engineargs.EngineArgs, stepTFVars map[string]string) (varFile []byte, err error) {
	u := in.ur.Spec
	fromEnvSteps := map[string]string{}
	for k, v := range in.Set {
		if name, ok := strings.CutPrefix(k, "TF_VAR_"); ok {
			fromEnvSteps[name] = v
		}
	}
	vin := varFileInput{
		Dir:          in.ur.Dir,
		Declared:     in.run.Project.Variables(u.Dir),
		TFVars:       []map[string]string{in.run.TFVars, in.ur.Vars.TFVars(), fromEnvSteps, stepTFVars},
		Inputs:       in.ur.InputVals,
		UserVars:     ea.Plan.Vars,
		UserVarFiles: ea.Plan.VarFiles,
	}
	content, err := buildVarFile(vin)
	if err != nil {
		return nil, fmt.Errorf("var file: %w", err)
	}
	// The digest leaves out what env steps set: they run as part of the
	// plan workflow, and a saved plan is reused without running it again,
	// so the reuse decision is made before they run (reuseBeforeWorkflow).
	// Their values are in the plan itself.
	digestContent := content
	if len(fromEnvSteps) > 0 {
		vin.TFVars = []map[string]string{in.run.TFVars, in.ur.Vars.TFVars(), stepTFVars}
		if digestContent, err = buildVarFile(vin); err != nil {
			return nil, fmt.Errorf("var file: %w", err)
		}
	}
	targets, err := in.targets()
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), ea.Text...), targetArgs(targets)...)
	// The files do not change while a job runs: a digest of the same
	// inputs (the reuse check, then the plan it falls back to) is read,
	// not hashed again.
	key := string(digestContent) + "\x00" + strings.Join(args, "\x00")
	if in.memo.key == key && in.memo.digest != "" {
		return content, nil
	}
	in.memo.digest, err = contenthash.Digest(contenthash.DigestInput{
		Root: in.run.Project.Root, Dir: u.Dir, ModuleDirs: in.run.Project.LocalModules(u.Dir), OtherRoots: in.run.otherRoots(u.Dir),
		FilePatterns: u.FilePatterns(), Reads: in.run.Project.ReadPatterns(u.Dir), Engine: in.ur.Engine.Name, EngineVersion: in.ur.Engine.Version.String(),
		Workspace: u.Workspace, Stack: u.Stack.Name, Variables: in.ur.Vars.All(),
		EngineArgs: args, VarFile: digestContent,
	})
	if err == nil {
		in.memo.key = key
	}
	return content, err
}

// writeVarFile writes the unit's var file for one engine call and returns
// its path ("" when there is nothing to write) and the function that
// removes it when the call ends.
func (in *stepInput) writeVarFile(content []byte) (string, func(), error) {
	if content == nil {
		os.Remove(in.ur.VarFile)
		return "", func() {}, nil
	}
	// The file lives for one call: a crash leaves nothing to keep.
	if err := runstate.WriteFile(in.ur.VarFile, content, false); err != nil {
		return "", func() {}, err
	}
	return in.ur.VarFile, func() { os.Remove(in.ur.VarFile) }, nil
}

func targetArgs(targets []string) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = "-target=" + t
	}
	return out
}

// targets are the stack's targets, substituted.
func (in *stepInput) targets() ([]string, error) {
	out := make([]string, len(in.ur.Spec.Stack.Targets))
	for i, t := range in.ur.Spec.Stack.Targets {
		v, err := in.subst(t, "targets")
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (j *job) validate(ctx context.Context) {
	initialised := false
	if _, err := os.Stat(j.ur.DataDir); err == nil {
		initialised = true
	}
	if !initialised && !j.init(ctx, true, true, j.run.EngineArgs.Init, nil) {
		return
	}
	_, err := j.in.step(ctx, report.StepValidate, j.in.invocation(report.StepValidate, nil, validateCall{Args: j.run.EngineArgs.Command}), true)
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
	o, err := j.in.step(ctx, report.StepOutput, j.in.invocation(report.StepOutput, nil, outputCall{}), true)
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

// copyFile copies a saved plan to where the user asked for it, 0600
// whatever the file there had before.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return atomicfile.Write(dst, b, 0o600)
}

// JSONString is a JSON value as text: a string's content, anything else as
// written.
func JSONString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
