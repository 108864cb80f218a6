package job

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"path"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/internal/subst"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// A unit's steps come from the first workflow whose tag query matches it
// (docs/behaviour.md#workflows-and-steps): its plan: list in a plan job, its apply: list in an apply job,
// [init, plan] and [init, apply] when there is none.

// workflowSteps returns the unit's steps for one phase (plan or apply).
func (r *Run) workflowSteps(ur *Unit, phase string) []stacks.RunStep {
	return r.Project.StepsFor(ur.Spec, phase)
}

// SubstitutionError names a variable no source defines.
type SubstitutionError struct {
	Name, Stack, Where string
	// InCmd: the name was in a run or env step's cmd, where only stack
	// variables and strata's own values are substituted.
	InCmd bool
}

func (e *SubstitutionError) Error() string {
	if e.InCmd {
		return fmt.Sprintf("unknown variable %q in %s (stack %s): a step's cmd takes only stack variables and strata's own values (STRATA_*, TERRATEAM_*); "+
			"read any other variable in a shell, where it is data: ['sh', '-c', 'echo \"$%s\"']; write $$ for a literal $", e.Name, e.Where, e.Stack, e.Name)
	}
	return fmt.Sprintf("unknown variable %q in %s (stack %s): not a stack variable nor in the environment; write $$ for a literal $", e.Name, e.Where, e.Stack)
}

// substitute replaces ${name} and $name in one pass (subst.Expand).
func substitute(s string, lookup func(string) (string, bool)) (string, string, bool) {
	return subst.Expand(s, lookup)
}

// variableLookup finds a name for substitution: the unit's stack
// variables, then what earlier env steps set, then strata's environment,
// then the unit's own environment (STRATA_DIR, …).
func VariableLookup(vars *Vars, envVars map[string]string, env []string, unitEnv map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := vars.Lookup(name); ok {
			return v, true
		}
		if v, ok := envVars[name]; ok {
			return v, true
		}
		if v, ok := environ.Lookup(env, name); ok {
			return v, true
		}
		v, ok := unitEnv[name]
		return v, ok
	}
}

// substituteFor substitutes s for one unit, or names the unknown variable.
func SubstituteFor(s, where string, u *stacks.Unit, lookup func(string) (string, bool)) (string, error) {
	out, name, ok := substitute(s, lookup)
	if !ok {
		return "", &SubstitutionError{Name: name, Stack: u.Stack.Name, Where: where}
	}
	return out, nil
}

func (j *job) subst(s, where string) (string, error) {
	return SubstituteFor(s, where, j.ur.Spec, VariableLookup(j.ur.Vars, j.envVars, j.run.Environ, j.ur.Env))
}

func (j *job) substAll(ss []string, where string) ([]string, error) {
	out := make([]string, len(ss))
	for i, s := range ss {
		v, err := j.subst(s, where)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// stepEnv is a step's own env, substituted, split into what the engine's
// environment takes and the TF_VAR_ values that go to the var file.
func (j *job) stepEnv(st stacks.RunStep, where string) (env, tfVars map[string]string, err error) {
	env, tfVars = map[string]string{}, map[string]string{}
	for _, e := range st.Env {
		v, err := j.subst(e.Value, where+".env."+e.Key)
		if err != nil {
			return nil, nil, err
		}
		if name, ok := strings.CutPrefix(e.Key, "TF_VAR_"); ok {
			tfVars[name] = v
			continue
		}
		env[e.Key] = v
	}
	return env, tfVars, nil
}

// engineEnv is the environment of one engine call: the unit's, what env
// steps set (TF_VAR_ values aside), then the step's own env.
func (j *job) engineEnv(stepEnv map[string]string) map[string]string {
	env := make(map[string]string, len(j.ur.Env)+len(j.envVars)+len(stepEnv))
	for k, v := range j.ur.Env {
		env[k] = v
	}
	for k, v := range j.envVars {
		if !strings.HasPrefix(k, "TF_VAR_") {
			env[k] = v
		}
	}
	for k, v := range stepEnv {
		env[k] = v
	}
	return env
}

// processEnv is the environment of a run, env or tool step: as the engine's,
// plus the TF_VAR_ values (these are not engine calls, so nothing refuses
// them).
func (j *job) processEnv(stepEnv, stepTFVars map[string]string) []string {
	env := j.engineEnv(stepEnv)
	for k, v := range j.run.TFVars {
		env["TF_VAR_"+k] = v
	}
	for k, v := range j.ur.Vars.TFVars() {
		env["TF_VAR_"+k] = v
	}
	for k, v := range j.envVars {
		if strings.HasPrefix(k, "TF_VAR_") {
			env[k] = v
		}
	}
	for k, v := range stepTFVars {
		env["TF_VAR_"+k] = v
	}
	return EnvList(env)
}

// workflowEnvironment exports the matching workflow's environment,
// substituted, as STRATA_ENVIRONMENT (and TERRATEAM_ENVIRONMENT) to every
// step.
func (j *job) workflowEnvironment() error {
	environment, ok := j.run.Project.EnvironmentFor(j.ur.Spec)
	if !ok {
		return nil
	}
	v, err := j.subst(environment, "the workflow's environment")
	if err != nil {
		return err
	}
	if j.envVars == nil {
		j.envVars = map[string]string{}
	}
	j.envVars["STRATA_ENVIRONMENT"] = v
	j.envVars["TERRATEAM_ENVIRONMENT"] = v
	return nil
}

// runWorkflow runs a phase's steps in order. After a failure only steps
// with run_on: failure or always run; the first failure is the unit's.
func (j *job) runWorkflow(ctx context.Context, phase string, steps []stacks.RunStep) {
	if j.failed(ctx, "setup", j.workflowEnvironment()) {
		return
	}
	for i, st := range steps {
		where := fmt.Sprintf("%s step %d (%s)", phase, i+1, st.Type)
		failedBefore := j.res.Err != nil
		runOn := st.RunOn
		switch {
		case runOn == "always":
		case runOn == "failure" && failedBefore:
		case runOn == "success" && !failedBefore:
		default:
			continue
		}
		if ctx.Err() != nil && !failedBefore {
			j.failed(ctx, st.Type, ctx.Err())
			return
		}
		prev, prevStep := j.res.Err, j.res.FailedStep
		switch st.Type {
		case report.StepInit:
			j.initStep(ctx, st, where)
		case report.StepPlan:
			j.planStep(ctx, st, where)
		case report.StepApply:
			j.applyStep(ctx, st, where)
		case report.StepRun:
			j.runStep(ctx, st, where)
		case report.StepEnv:
			j.envStep(ctx, st, where)
		case report.StepOIDC:
			j.oidcStep(ctx, st, where)
		case report.StepCheckov, report.StepConftest, report.StepOPA:
			j.toolStep(ctx, st, where)
		default:
			// gates, slack, drift_create_issue: Terrateam's own;
			// accepted and ignored.
			continue
		}
		if failedBefore && j.res.Err != prev && prev != nil {
			// A failure step that fails keeps the first failure as the
			// unit's reason.
			j.res.Err, j.res.FailedStep = prev, prevStep
		}
	}
}

// initStep runs init with the step's extra_args and env.
func (j *job) initStep(ctx context.Context, st stacks.RunStep, where string) {
	args, env, _, err := j.engineStepArgs(command.Init, st, where)
	if j.failed(ctx, report.StepInit, err) {
		return
	}
	j.init(ctx, j.run.Policy.Job == command.JobInit, false, args.Init, env)
}

// engineStepArgs reads a step's extra_args (merged with the command's
// engine arguments) and env.
func (j *job) engineStepArgs(command string, st stacks.RunStep, where string) (engineargs.EngineArgs, map[string]string, map[string]string, error) {
	env, tfVars, err := j.stepEnv(st, where)
	if err != nil {
		return engineargs.EngineArgs{}, nil, nil, err
	}
	extra, err := j.substAll(st.ExtraArgs, where+".extra_args")
	if err != nil {
		return engineargs.EngineArgs{}, nil, nil, err
	}
	ea := j.run.EngineArgs
	if len(extra) > 0 {
		own, err := engineargs.Parse(command, extra, j.ur.Dir)
		if err != nil {
			return engineargs.EngineArgs{}, nil, nil, fmt.Errorf("%s: extra_args: %w", where, err)
		}
		ea = engineargs.Merge(own, ea)
	}
	return ea, env, tfVars, nil
}

// runStep runs a `run` step: cmd is argv (never a shell string), in the
// unit's dir, in its own process group; an interrupt reaches it as SIGINT.
func (j *job) runStep(ctx context.Context, st stacks.RunStep, where string) {
	argv, env, tfVars, err := j.processStep(st, where)
	if j.failed(ctx, report.StepRun, err) {
		return
	}
	err = j.exec(ctx, report.StepRun, where, argv, j.processEnv(env, tfVars), st.CaptureOutput, st.IgnoreErrors && st.Gate == nil, nil)
	j.failed(ctx, report.StepRun, j.gated(ctx, st, where, err))
}

// gated passes a step's failure through its gate (docs/controls.md#gates):
// a failed step of the plan workflow with a gate raises the gate, and the
// unit goes on; the apply then waits for the gate's approval. A gated
// step of the apply workflow runs once the apply is under way: its
// failure fails the unit, as any step's does.
func (j *job) gated(ctx context.Context, st stacks.RunStep, where string, err error) error {
	if err == nil || st.Gate == nil || ctx.Err() != nil || !strings.HasPrefix(where, report.StepPlan+" ") {
		return err
	}
	g := st.Gate
	gate := report.Gate{Step: where, Token: g.Token, Name: g.Name, AnyOf: g.AnyOf, AllOf: g.AllOf, AnyOfCount: g.AnyOfCount,
		Error: j.ur.Masker.Mask(ErrorText(err))}
	j.res.Gates = append(j.res.Gates, gate)
	j.run.Console.UnitNote(j.ur.Spec.Name(), report.GatedReason([]report.Gate{gate}))
	return nil
}

func (j *job) processStep(st stacks.RunStep, where string) (argv []string, env, tfVars map[string]string, err error) {
	env, tfVars, err = j.stepEnv(st, where)
	if err != nil {
		return nil, nil, nil, err
	}
	argv, name, ok := substituteCmd(st.Cmd, j.cmdLookup)
	if !ok {
		return nil, nil, nil, &SubstitutionError{Name: name, Stack: j.ur.Spec.Stack.Name, Where: where + ".cmd", InCmd: true}
	}
	if len(argv) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: empty cmd", where)
	}
	return argv, env, tfVars, nil
}

// substituteCmd substitutes a run or env step's argv. Values from the
// process environment or from env steps may be chosen by whoever names a
// branch or opens a pull request, so they are never spliced into a
// command: lookup gives only stack variables and strata's own values, and
// a shell's script (sh -c SCRIPT) is passed as written, its names read by
// the shell from the step's environment, as data.
func substituteCmd(argv []string, lookup func(string) (string, bool)) ([]string, string, bool) {
	script := shellScriptIndex(argv)
	out := make([]string, len(argv))
	for i, a := range argv {
		if i == script {
			out[i] = a
			continue
		}
		v, name, ok := substitute(a, lookup)
		if !ok {
			return nil, name, false
		}
		out[i] = v
	}
	return out, "", true
}

// shells are the programs whose -c argument is a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// shellScriptIndex is the index of the script in `sh [options] -c
// [options] SCRIPT [name [args…]]`, or -1 when argv is not a shell
// running one.
func shellScriptIndex(argv []string) int {
	if len(argv) == 0 || !shells[path.Base(argv[0])] {
		return -1
	}
	sawC := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			if sawC && i+1 < len(argv) {
				return i + 1
			}
			return -1
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++ // the option's name
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if a[0] == '-' && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'c') {
				sawC = true
			}
		default:
			if sawC {
				return i
			}
			return -1
		}
	}
	return -1
}

// cmdLookup finds a name in a step's cmd: the unit's stack variables, then
// the values strata itself sets from the config and its own paths.
func (j *job) cmdLookup(name string) (string, bool) {
	if v, ok := j.ur.Vars.Lookup(name); ok {
		return v, true
	}
	if v, ok := j.ur.Vars.LookupExported(name); ok {
		return v, true
	}
	if strataValue(name) {
		v, ok := j.ur.Env[name]
		return v, ok
	}
	return "", false
}

// exec runs a process step with its console block. capture keeps its
// output (masked) in the report; stdout, when not nil, receives the
// process's stdout instead of the block (env steps); with ignoreErrors a
// failure is noted and the step still counts as done.
func (j *job) exec(ctx context.Context, name, where string, argv, env []string, capture, ignoreErrors bool, stdout *bytes.Buffer) error {
	rep, err := j.run.process(ctx, process{
		display: j.ur.Display, masker: j.ur.Masker, name: name, where: where, dir: j.ur.Dir, argv: argv, env: env,
		capture: capture, ignoreErrors: ignoreErrors, stdout: stdout, who: j.ur.Spec.Name(), unitID: j.ur.Spec.ID(),
	})
	j.res.Steps = append(j.res.Steps, rep)
	return err
}

// process is one process a step runs.
type process struct {
	display      *console.Unit
	masker       *console.Masker
	name, where  string
	dir          string
	argv, env    []string
	capture      bool
	ignoreErrors bool
	stdout       *bytes.Buffer
	who          string // the unit, or the hook, a note names
	unitID       string // the unit's ID, "" for a hook
	// errSide: its stdout goes where the engine's stderr goes (hooks:
	// in drop-in, stdout is the engine's alone).
	errSide bool
}

// process runs p in its own process group, its output in the console
// block of p.display (an interrupt reaches it as SIGINT), and reports it
// as a step.
func (r *Run) process(ctx context.Context, p process) (rep report.StepReport, err error) {
	started := r.Now()
	attrs := []attribute.KeyValue{attribute.String("strata.step", p.name)}
	if p.unitID != "" {
		attrs = append(attrs, attribute.String("strata.unit.id", p.unitID))
	}
	ctx, span := tracing.Span(ctx, p.name, attrs...)
	defer func() { tracing.End(span, spanFailure(p.masker, err)) }()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	// Its span is the process's parent (docs/behaviour.md#traces).
	cmd.Dir, cmd.Env = p.dir, tracing.Environ(ctx, p.env)
	ownProcessGroup(cmd)
	out := r.Console.Step(p.display, p.name)
	var kept bytes.Buffer
	var stdout io.Writer = out
	if p.errSide {
		stdout = out.Stderr()
	}
	cmd.Stdout, cmd.Stderr = stdout, out.Stderr()
	if p.capture {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, &kept), io.MultiWriter(out.Stderr(), &kept)
	}
	if p.stdout != nil {
		cmd.Stdout = p.stdout
	}
	err = cmd.Start()
	if err == nil {
		r.Procs.add(cmd)
		defer r.Procs.remove(cmd)
		// The step's process group gets one SIGINT, as engines do.
		err = waitInterruptible(ctx, cmd, interruptGroup, r.KillAfter)
	}
	out.Close()
	if err != nil {
		err = fmt.Errorf("%s: %w", strings.Join(p.argv, " "), err)
		if p.ignoreErrors && ctx.Err() == nil {
			r.Console.UnitNote(p.who, fmt.Sprintf("%s failed, ignored (ignore_errors): %v", p.where, err))
			err = nil
		}
	}
	rep = report.StepReport{Name: p.name, StartedAt: started, FinishedAt: r.Now(), OK: err == nil}
	if p.capture {
		rep.Output = p.masker.Mask(kept.String())
	}
	return rep, err
}

// envStep sets variables for the later steps (docs/behaviour.md#workflows-and-steps): method exec sets name
// to cmd's output, method source reads KEY=VALUE lines from it.
func (j *job) envStep(ctx context.Context, st stacks.RunStep, where string) {
	argv, env, tfVars, err := j.processStep(st, where)
	if j.failed(ctx, report.StepEnv, err) {
		return
	}
	var stdout bytes.Buffer
	if err := j.exec(ctx, report.StepEnv, where, argv, j.processEnv(env, tfVars), false, false, &stdout); j.failed(ctx, report.StepEnv, err) {
		return
	}
	set := envValues(st, stdout.String())
	if j.envVars == nil {
		j.envVars = map[string]string{}
	}
	names := make([]string, 0, len(set))
	for k, v := range set {
		j.envVars[k] = v
		names = append(names, k)
		if st.Sensitive {
			j.ur.Masker.Add(v)
		}
	}
	sort.Strings(names)
	j.run.Console.UnitNote(j.ur.Spec.Name(), fmt.Sprintf("env: set %s", strings.Join(names, ", ")))
}

// oidcStep makes the step's cloud credentials for the unit's later
// steps (docs/behaviour.md#oidc), masked in its output.
func (j *job) oidcStep(ctx context.Context, st stacks.RunStep, where string) {
	started := j.run.Now()
	sctx, span := j.stepSpan(ctx, report.StepOIDC)
	creds, err := oidc.Make(sctx, st.OIDC, withCredentials(j.engineEnv(nil), j.run.Environ))
	skipped := j.run.skipsOIDC(err)
	if skipped {
		err = nil
	}
	tracing.End(span, spanFailure(j.ur.Masker, err))
	j.res.Steps = append(j.res.Steps, report.StepReport{Name: report.StepOIDC, StartedAt: started, FinishedAt: j.run.Now(), OK: err == nil})
	if skipped || j.failed(ctx, report.StepOIDC, err) {
		return
	}
	j.ur.Masker.Add(creds.Secrets...)
	if j.envVars == nil {
		j.envVars = map[string]string{}
	}
	maps.Copy(j.envVars, creds.Env)
	j.run.Console.UnitNote(j.ur.Spec.Name(), fmt.Sprintf("%s: %s credentials set", where, st.OIDC.Provider))
}

// envValues are the variables an env step sets from its cmd's output:
// method exec sets name to it, method source reads its KEY=VALUE lines.
func envValues(st stacks.RunStep, out string) map[string]string {
	set := map[string]string{}
	if st.Method == "source" {
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			line := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export "))
			if k, v, ok := strings.Cut(line, "="); ok && k != "" && !strings.HasPrefix(k, "#") {
				set[k] = strings.Trim(v, `"'`)
			}
		}
		return set
	}
	if st.TrimTrailingNewlines {
		out = strings.TrimRight(out, "\r\n")
	}
	set[st.Name] = out
	return set
}

// toolStep runs checkov, conftest or opa from PATH in the unit's dir with
// the step's extra_args; a missing tool fails the unit.
func (j *job) toolStep(ctx context.Context, st stacks.RunStep, where string) {
	tool := st.Type
	path, err := exec.LookPath(tool)
	if err != nil {
		j.failed(ctx, tool, fmt.Errorf("%s is not on PATH: install it or remove the %s step", tool, where))
		j.res.Steps = append(j.res.Steps, report.StepReport{Name: tool, StartedAt: j.run.Now(), FinishedAt: j.run.Now()})
		return
	}
	env, tfVars, err := j.stepEnv(st, where)
	if j.failed(ctx, tool, err) {
		return
	}
	args, err := j.substAll(st.ExtraArgs, where+".extra_args")
	if j.failed(ctx, tool, err) {
		return
	}
	if len(args) == 0 && tool == report.StepCheckov {
		args = []string{"-d", "."}
	}
	err = j.exec(ctx, tool, where, append([]string{path}, args...), j.processEnv(env, tfVars), true, st.IgnoreErrors && st.Gate == nil, nil)
	j.failed(ctx, tool, j.gated(ctx, st, where, err))
}

// initSteps are the steps of the init command: the workflow's init steps
// (their extra_args and env), else a plain init.
func (r *Run) initSteps(ur *Unit) []stacks.RunStep {
	for _, st := range r.workflowSteps(ur, report.StepPlan) {
		if st.Type == report.StepInit {
			return []stacks.RunStep{st}
		}
	}
	return []stacks.RunStep{stacks.DefaultStep(report.StepInit)}
}

// skipsOIDC says an oidc step is skipped: it has no OIDC token to
// exchange, and the run is not in CI, where a person's own credentials
// (a profile, gcloud's login) serve instead (docs/behaviour.md#oidc). The
// run says so once. In CI a missing token fails the step: a pipeline
// that lost its id-token permission must not run on whatever else the
// machine holds.
func (r *Run) skipsOIDC(err error) bool {
	if !errors.Is(err, oidc.ErrNoToken) || environ.InCI(environ.Getenv(r.Environ)) {
		return false
	}
	r.oidcSkip.Do(func() {
		r.Console.Note("strata: no OIDC token outside CI: oidc steps are skipped, and the ambient credentials are used")
	})
	return true
}
