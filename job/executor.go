package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/strata-iac/strata/internal/ansi"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/report"
)

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

// applySummary is the engine's own count of an apply's changes
// (report.ParsePlanSummary reads a plan's).
var applySummary = regexp.MustCompile(`Apply complete! Resources: (?:(\d+) imported, )?(\d+) added, (\d+) changed, (\d+) destroyed`)

// applyNow applies without a plan file; the change counts come from the
// apply's own summary line, the changed outputs from the plan it prints
// first, and it has changes when any was made.
//
// No plan file exists here, so its JSON cannot be read; the printed plan
// is read instead (docs/behaviour.md#saved-plans). Asking the engine for
// the outputs before and after would cost two more calls where the apply
// is one: measured on terraform 1.11 with an output-only change, one
// `apply -auto-approve` took 56 ms, `output -json` 29 ms, and `plan -out`,
// `show -json` and `apply FILE` 138 ms together; reading the text the
// apply prints anyway costs nothing.
func (x *Executor) applyNow(ctx context.Context, tf *tfexec.Terraform, inv invocation, p applyNowCall, out, errOut io.Writer) (outcome, error) {
	// apply prints its plan first: a failed apply still says what it was
	// about to change. The scanners read the text without colour.
	planned := &lineScanner{w: io.Discard, seen: p.OnPlan}
	outputs := &outputScanner{w: planned}
	scan := &lineScanner{w: outputs, marker: "Apply complete! "}
	stdout := plainTee{plain: scan, out: out}
	var err error
	if x.colour {
		_, err = x.runRaw(ctx, inv, p.rawArgs(), stdout, errOut)
	} else {
		tf.SetStdout(stdout)
		var opts []tfexec.ApplyOption
		if p.VarFile != "" {
			opts = append(opts, tfexec.VarFile(p.VarFile))
		}
		for _, x := range engineOptions(p.Args) {
			opts = append(opts, x)
		}
		err = tf.Apply(ctx, opts...)
	}
	if err != nil {
		o := planOutcome(false, planned.summary)
		o.Changes.Outputs, o.ChangedOutputs = len(outputs.names), outputs.names
		o.HasChanges = o.Changes != (report.Changes{})
		return o, err
	}
	o := outcome{ChangedOutputs: outputs.names, OutputsKnown: scan.summary != ""}
	if m := applySummary.FindStringSubmatch(scan.summary); m != nil {
		o.Changes.Add, _ = strconv.Atoi(m[2])
		o.Changes.Change, _ = strconv.Atoi(m[3])
		o.Changes.Destroy, _ = strconv.Atoi(m[4])
	}
	o.Changes.Outputs = len(outputs.names)
	o.HasChanges = o.Changes != (report.Changes{})
	return o, nil
}

// plainTee writes output to plain without its colour, then to out as it
// came. Terraform writes a line's colour and text in one write, so each
// write is stripped by itself.
type plainTee struct{ plain, out io.Writer }

func (t plainTee) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.plain, ansi.Strip(string(p))); err != nil {
		return 0, err
	}
	return t.out.Write(p)
}

// plan makes a saved plan; only whether it has changes is read here (its
// detailed exit code): the counts come from the plan file.
func (x *Executor) plan(ctx context.Context, tf *tfexec.Terraform, p planCall, out io.Writer) (outcome, error) {
	opts := []tfexec.PlanOption{tfexec.Out(p.Out)}
	if p.VarFile != "" {
		opts = append(opts, tfexec.VarFile(p.VarFile))
	}
	opts = append(opts, planOptions(p.Args)...)
	changed, err := tf.Plan(ctx, opts...)
	if err != nil {
		return outcome{}, err
	}
	return outcome{HasChanges: changed}, nil
}

// rawPlan runs a plan that carries flags terraform-exec cannot express,
// reading its detailed exit code as terraform-exec does.
func (x *Executor) rawPlan(ctx context.Context, inv invocation, argv []string, out, errOut io.Writer) (outcome, error) {
	code, err := x.runRaw(ctx, inv, argv, out, errOut)
	if code == 2 && ctx.Err() == nil {
		err = nil
	}
	if err != nil {
		return outcome{}, err
	}
	return outcome{HasChanges: code == 2}, nil
}

// planOutcome is what a plan printed before an apply without a plan file
// failed: its summary line's counts.
func planOutcome(changed bool, summary string) outcome {
	o := outcome{HasChanges: changed}
	o.Changes, _ = report.ParsePlanSummary(summary)
	return o
}

// lineScanner passes output through and keeps the summary line: the one
// holding marker ("Plan: " when empty).
type lineScanner struct {
	w       io.Writer
	marker  string
	summary string
	// seen, when set, is called once, the first time the marker appears.
	seen func()
}

func (s *lineScanner) Write(p []byte) (int, error) {
	marker := s.marker
	if marker == "" {
		marker = "Plan: "
	}
	if i := strings.Index(string(p), marker); i >= 0 {
		line := string(p[i:])
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		s.summary = line
		if s.seen != nil {
			s.seen()
			s.seen = nil
		}
	}
	return s.w.Write(p)
}

func initOptions(a engineargs.InitArgs) []tfexec.InitOption {
	var o []tfexec.InitOption
	if a.Upgrade {
		o = append(o, tfexec.Upgrade(true))
	}
	if a.Reconfigure {
		o = append(o, tfexec.Reconfigure(true))
	}
	if a.Backend != nil {
		o = append(o, tfexec.Backend(*a.Backend))
	}
	for _, b := range a.BackendConfig {
		o = append(o, tfexec.BackendConfig(b))
	}
	if a.ForceCopy {
		o = append(o, tfexec.ForceCopy(true))
	}
	if a.Get != nil {
		o = append(o, tfexec.Get(*a.Get))
	}
	for _, p := range a.PluginDir {
		o = append(o, tfexec.PluginDir(p))
	}
	return o
}

// sharedOption is a terraform-exec option both plan and apply take.
type sharedOption interface {
	tfexec.PlanOption
	tfexec.ApplyOption
}

// engineOptions are the terraform-exec options of plan's flags, which
// apply without a plan file takes as well.
func engineOptions(a engineargs.PlanArgs) []sharedOption {
	var o []sharedOption
	for _, f := range a.VarFiles {
		o = append(o, tfexec.VarFile(f))
	}
	for _, v := range a.Vars {
		o = append(o, tfexec.Var(v))
	}
	for _, t := range a.Targets {
		o = append(o, tfexec.Target(t))
	}
	for _, r := range a.Replace {
		o = append(o, tfexec.Replace(r))
	}
	if a.Refresh != nil {
		o = append(o, tfexec.Refresh(*a.Refresh))
	}
	if a.RefreshOnly {
		o = append(o, tfexec.RefreshOnly(true))
	}
	if a.Destroy {
		o = append(o, tfexec.Destroy(true))
	}
	if a.Lock != nil {
		o = append(o, tfexec.Lock(*a.Lock))
	}
	if a.LockTimeout != "" {
		o = append(o, tfexec.LockTimeout(a.LockTimeout))
	}
	if a.Parallelism > 0 {
		o = append(o, tfexec.Parallelism(a.Parallelism))
	}
	return o
}

func planOptions(a engineargs.PlanArgs) []tfexec.PlanOption {
	var o []tfexec.PlanOption
	for _, x := range engineOptions(a) {
		o = append(o, x)
	}
	return o
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
