package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/ansi"
	"github.com/strata-iac/strata/internal/diagnostics"
	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/report"
)

// engineEnv is the environment of one engine call: the starting one,
// what earlier steps set, then own (a step's own env); TF_VAR_ values
// aside, since terraform-exec refuses them.
func (in *stepInput) engineEnv(own map[string]string) map[string]string {
	env := make(map[string]string, len(in.Env)+len(in.Set)+len(own))
	maps.Copy(env, in.Env)
	for _, m := range []map[string]string{in.Set, own} {
		for k, v := range m {
			if !strings.HasPrefix(k, "TF_VAR_") {
				env[k] = v
			}
		}
	}
	return env
}

// invocation is one engine call of the unit, with own (a step's own env)
// over its environment.
func (in *stepInput) invocation(step string, own map[string]string, call engineCall) invocation {
	return invocation{Step: step, Engine: in.Engine, Dir: in.Dir, Env: in.engineEnv(own), Call: call}
}

// invocation is one engine call, built apart from running it: the engine,
// the dir, the environment and the call (InitCall, PlanCall, …). Tests
// inspect it; the executor runs it through terraform-exec.
type invocation struct {
	Step   string
	Engine string // path of the engine binary
	Dir    string // absolute working dir
	Env    map[string]string
	Call   engineCall
}

// Args renders the argv terraform-exec runs for the invocation (without the
// flags it always adds: -no-color, -input=false, …), for logs and tests.
func (inv invocation) Args() []string {
	if inv.Call == nil {
		return nil
	}
	return inv.Call.Argv()
}

// String renders the invocation as a command line for logs.
func (inv invocation) String() string {
	return "terraform " + strings.Join(inv.Args(), " ")
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
	if err := in.errAfterHandOff(name); err != nil {
		return o, report.StepReport{Name: name, StartedAt: started, FinishedAt: started}, held, err
	}
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

// outcome is what an engine call reports beyond success.
type outcome struct {
	// HasChanges comes from a plan's detailed exit code, or from what an
	// apply without a plan file printed; Changes, ChangedOutputs and
	// OutputsKnown from the latter only (a saved plan is counted from its
	// file, see enginePlan).
	HasChanges     bool
	Changes        report.Changes
	ChangedOutputs []string
	OutputsKnown   bool
	// Outputs come from output -json.
	Outputs map[string]tfexec.OutputMeta
	// PlanJSON is show -json of a saved plan.
	PlanJSON []byte
}

// executor runs invocations through terraform-exec. It keeps one
// *tfexec.Terraform per unit, since the unit's steps run one after another
// and reusing it keeps terraform-exec's version cache.
type Executor struct {
	killAfter time.Duration
	// colour: the engine's output goes to a terminal in colour
	// (docs/behaviour.md#colour); what is parsed of it is read without.
	colour bool
	mu     sync.Mutex                   // guards tfs; each entry is used by one worker at a time
	tfs    map[string]*tfexec.Terraform // by unit ID
}

// NewExecutor runs engines, interrupted ones killed after killAfter (never
// when zero), their output coloured when colour is set.
func NewExecutor(killAfter time.Duration, colour bool) *Executor {
	return &Executor{killAfter: killAfter, colour: colour, tfs: map[string]*tfexec.Terraform{}}
}

func (x *Executor) terraform(ctx context.Context, unitID string, inv invocation) (*tfexec.Terraform, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if tf, ok := x.tfs[unitID]; ok && tf.ExecPath() == inv.Engine && tf.WorkingDir() == inv.Dir {
		return tf, nil
	}
	tf, err := tfexec.NewTerraform(inv.Dir, inv.Engine)
	if err != nil {
		return nil, err
	}
	// terraform-exec's default is a SIGKILL 60 s after the interrupt; a kill
	// mid-apply leaves a state lock and can lose state, so strata waits for
	// the engine unless --kill-after says otherwise.
	if err := tf.SetWaitDelay(x.killAfter); err != nil {
		return nil, err
	}
	x.tfs[unitID] = tf
	return tf, nil
}

// Execute runs one invocation, with the engine's stdout written to out and
// its stderr to errOut.
func (x *Executor) Execute(ctx context.Context, unitID string, inv invocation, out, errOut io.Writer) (outcome, error) {
	tf, err := x.terraform(ctx, unitID, inv)
	if err != nil {
		return outcome{}, err
	}
	// The step's span is the engine's parent (docs/behaviour.md#traces).
	inv.Env = tracing.Env(ctx, inv.Env)
	if err := tf.SetEnv(inv.Env); err != nil {
		return outcome{}, fmt.Errorf("environment: %w", err)
	}
	if inv.Call == nil {
		return outcome{}, errors.New("empty invocation")
	}
	if inv.Call.checksVersion() {
		// terraform-exec checks the engine's version before these (and only
		// these) commands and copies `version -json` to the step's output;
		// asking first, with the output discarded, fills its cache. Plan,
		// apply, workspace and output never ask.
		tf.SetStdout(io.Discard)
		tf.SetStderr(io.Discard)
		if _, _, err := tf.Version(ctx, false); err != nil {
			return outcome{}, fmt.Errorf("%s version: %w", inv.Engine, err)
		}
	}
	tf.SetStdout(out)
	tf.SetStderr(errOut)
	defer func() {
		tf.SetStdout(io.Discard)
		tf.SetStderr(io.Discard)
	}()
	o, err := inv.Call.run(ctx, x, tf, inv, out, errOut)
	return o, boundedError(err)
}

// runRaw runs the engine directly, as terraform-exec does: the step's
// environment with TF_IN_AUTOMATION set, its own process group, one
// SIGINT when ctx ends (a SIGKILL after killAfter, when set), and a failure
// carrying the engine's stderr. It returns the exit code.
func (x *Executor) runRaw(ctx context.Context, inv invocation, argv []string, out, errOut io.Writer) (int, error) {
	if ctx.Err() != nil {
		return 1, ctx.Err()
	}
	cmd := exec.Command(inv.Engine, argv...)
	cmd.Dir = inv.Dir
	cmd.Env = append(EnvList(inv.Env), "TF_IN_AUTOMATION=1")
	ownProcessGroup(cmd)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, io.MultiWriter(errOut, &stderr)
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	err := waitInterruptible(ctx, cmd, interruptProcess, x.killAfter)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		// The error is read (initRequired, transient, diagnostics) and
		// reported: without colour.
		text := ansi.Strip(stderr.String())
		if ctx.Err() != nil {
			return code, fmt.Errorf("%w: %w\n%s", ctx.Err(), err, text)
		}
		return code, fmt.Errorf("%w\n%s", err, text)
	}
	return 0, err
}

// envList renders an environment map as sorted KEY=VALUE pairs.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, fmt.Sprintf("%s=%s", k, v))
	}
	sort.Strings(out)
	return out
}

// waitInterruptible waits for a started command, in its own process group;
// when ctx ends, interrupt gets it one SIGINT (engines: the process, as
// terraform-exec does; run steps: the whole group), and its group is
// killed after killAfter when that is set.
func waitInterruptible(ctx context.Context, cmd *exec.Cmd, interrupt func(*exec.Cmd), killAfter time.Duration) error {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			interrupt(cmd)
			if killAfter > 0 {
				select {
				case <-done:
				case <-time.After(killAfter):
					killGroup(cmd)
				}
			}
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	return err
}

// cutError is an engine's error whose text had a line over
// textbudget.Line: its text is cut once, here, since every Error() of
// terraform-exec's error builds its whole text again, and a unit's error
// is read many times (docs/behaviour.md#text-budgets).
type cutError struct {
	err  error
	text string
}

func (e *cutError) Error() string { return e.text }

func (e *cutError) Unwrap() error { return e.err }

// boundedError is err, its text cut when a line of it is over budget.
func boundedError(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	if cut := textbudget.Lines(text, textbudget.Line); len(cut) != len(text) {
		return &cutError{err: err, text: cut}
	}
	return err
}

// errorText is an engine error's message, without Go's wrapping.
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}

// initRequired reports whether an engine error asks for init.
func initRequired(err error) bool {
	s := ErrorText(err)
	for _, p := range []string{
		"Backend initialization required", "please run \"terraform init\"", "please run \"tofu init\"",
		"Module not installed", "Required plugins are not installed", "Inconsistent dependency lock file",
		"run \"terraform init\"", "run \"tofu init\"", "Backend configuration changed",
	} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// transientPatterns are stderr fragments of failures worth another try
// (README: transient errors).
var transientPatterns = []string{
	"Failed to install provider", "Failed to query available provider packages",
	"Failed to download module", "error downloading", "could not download",
	"TLS handshake timeout", "i/o timeout", "connection reset by peer", "connection refused",
	"unexpected EOF", "Client.Timeout exceeded", "503 Service Unavailable", "502 Bad Gateway",
	"504 Gateway Timeout", "500 Internal Server Error", "429 Too Many Requests",
}

// transient reports whether an engine error is worth retrying. State lock
// errors never are: another run holds the state.
func transient(err error) bool {
	s := ErrorText(err)
	if strings.Contains(s, "Error acquiring the state lock") {
		return false
	}
	for _, p := range transientPatterns {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// outputsJSON renders outputs as `output -json` does, sensitive values
// masked unless shown.
func outputsJSON(outs map[string]tfexec.OutputMeta, showSensitive bool) map[string]any {
	res := map[string]any{}
	for name, o := range outs {
		var v any = json.RawMessage(o.Value)
		if o.Sensitive && !showSensitive {
			v = "***"
		}
		res[name] = map[string]any{"value": v, "type": json.RawMessage(o.Type), "sensitive": o.Sensitive}
	}
	return res
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
