package job

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/strata-iac/strata/internal/ansi"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
)

// Each engine command strata runs is one small type: its arguments, its
// argv (for logs and tests) and how it runs through terraform-exec, side
// by side. A call carrying flags terraform-exec cannot express runs the
// engine as terraform-exec would (runRaw); so do init, plan, apply and
// show when their output goes to a terminal in colour, since
// terraform-exec always adds -no-color (docs/behaviour.md#colour).

// engineCall is one engine command.
type engineCall interface {
	// Argv is the argv after the engine's name, without the flags
	// terraform-exec always adds (-no-color, -input=false, …).
	Argv() []string
	// checksVersion reports whether terraform-exec asks the engine's
	// version before this command.
	checksVersion() bool
	run(ctx context.Context, x *Executor, tf *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error)
}

// initCall is `init`.
type initCall struct {
	Args engineargs.InitArgs
	// Version is the engine's, as strata resolved it (nil if unknown).
	Version *version.Version
}

// lockFlagsGone is the version whose init no longer takes -lock and
// -lock-timeout: the one thing terraform-exec asks the version for.
var lockFlagsGone = version.Must(version.NewVersion("0.15.0"))

func (c *initCall) Argv() []string { return append([]string{"init"}, c.Args.Flags()...) }

// checksVersion reports whether init runs through terraform-exec's Init,
// which starts the engine once more, for `version -json`, in every new
// working dir (its version cache is per dir), only to decide whether to
// pass -lock flags. When strata knows the engine's version, or the call
// carries flags Init cannot express, init runs the argv terraform-exec
// would build (rawArgs) and that extra start, the costliest part of a new
// unit's init after init itself, is saved.
func (c *initCall) checksVersion() bool {
	return len(c.Args.Extra) == 0 && (c.Version == nil || c.Version.LessThan(lockFlagsGone))
}

func (c *initCall) run(ctx context.Context, x *Executor, tf *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error) {
	if !c.checksVersion() {
		_, err := x.runRaw(ctx, inv, c.rawArgs(x.colour), out, errOut)
		return outcome{}, err
	}
	return outcome{}, tf.Init(ctx, initOptions(c.Args)...)
}

// rawArgs is the argv terraform-exec's Init runs for an engine from 0.15
// on, its fixed flags included and in its order, with the flags it cannot
// express at the end; without -no-color when the output is coloured.
func (c *initCall) rawArgs(colour bool) []string {
	a := c.Args
	backend, get := true, true
	if a.Backend != nil {
		backend = *a.Backend
	}
	if a.Get != nil {
		get = *a.Get
	}
	argv := append(fixedFlags("init", colour), "-backend="+strconv.FormatBool(backend), "-get="+strconv.FormatBool(get), "-upgrade="+strconv.FormatBool(a.Upgrade))
	if a.ForceCopy {
		argv = append(argv, "-force-copy")
	}
	if a.Reconfigure {
		argv = append(argv, "-reconfigure")
	}
	for _, b := range a.BackendConfig {
		argv = append(argv, "-backend-config="+b)
	}
	for _, p := range a.PluginDir {
		argv = append(argv, "-plugin-dir="+p)
	}
	return append(argv, a.Extra...)
}

// planCall is `plan -out`: always with -out, the unit's var file first,
// then the user's arguments.
type planCall struct {
	Out     string
	VarFile string // strata's var file, "" when there is none
	Args    engineargs.PlanArgs
}

func (c *planCall) Argv() []string {
	a := []string{"plan", "-out=" + c.Out}
	if c.VarFile != "" {
		a = append(a, "-var-file="+c.VarFile)
	}
	return append(a, c.Args.Flags()...)
}
func (*planCall) checksVersion() bool { return false }
func (c *planCall) run(ctx context.Context, x *Executor, tf *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error) {
	if len(c.Args.Extra) > 0 || x.colour {
		return x.rawPlan(ctx, inv, c.rawArgs(x.colour), out, errOut)
	}
	return x.plan(ctx, tf, c, out)
}

// rawArgs is the argv terraform-exec's Plan runs, with the flags it
// cannot express at the end.
func (c *planCall) rawArgs(colour bool) []string {
	argv := append(fixedFlags("plan", colour), "-detailed-exitcode", "-out="+c.Out)
	if c.VarFile != "" {
		argv = append(argv, "-var-file="+c.VarFile)
	}
	return append(argv, c.Args.Flags()...)
}

// fixedFlags are the flags terraform-exec puts after the command's name:
// -no-color unless the output is coloured, and -input=false.
func fixedFlags(command string, colour bool) []string {
	if colour {
		return []string{command, "-input=false"}
	}
	return []string{command, "-no-color", "-input=false"}
}

// applyPlanCall is `apply FILE`: a saved plan, no other argument.
type applyPlanCall struct{ File string }

func (c *applyPlanCall) Argv() []string    { return []string{"apply", c.File} }
func (*applyPlanCall) checksVersion() bool { return false }
func (c *applyPlanCall) run(ctx context.Context, x *Executor, tf *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error) {
	if x.colour {
		_, err := x.runRaw(ctx, inv, c.rawArgs(), out, errOut)
		return outcome{}, err
	}
	return outcome{}, tf.Apply(ctx, tfexec.DirOrPlan(c.File))
}

// rawArgs is the argv of terraform-exec's Apply of a saved plan, in
// colour: -lock, -parallelism and -refresh, which it always passes, are
// the engine's defaults, and a saved plan carries the rest.
func (c *applyPlanCall) rawArgs() []string {
	return append(fixedFlags("apply", true), "-auto-approve", c.File)
}

// applyNowCall is `apply -auto-approve` without a plan file, with plan's
// var file and arguments.
type applyNowCall struct {
	VarFile string
	Args    engineargs.PlanArgs
	// OnPlan is called once, when the engine has printed a plan with
	// changes and goes on to apply it.
	OnPlan func() `json:"-"`
}

func (c *applyNowCall) Argv() []string {
	a := []string{"apply", "-auto-approve"}
	if c.VarFile != "" {
		a = append(a, "-var-file="+c.VarFile)
	}
	return append(a, c.Args.Flags()...)
}

// rawArgs is the argv of terraform-exec's Apply with the call's options,
// in colour. Like the options (engineOptions), it leaves out plan's
// flags terraform-exec cannot express.
func (c *applyNowCall) rawArgs() []string {
	a := append(fixedFlags("apply", true), "-auto-approve")
	if c.VarFile != "" {
		a = append(a, "-var-file="+c.VarFile)
	}
	args := c.Args
	args.Extra = nil
	return append(a, args.Flags()...)
}
func (*applyNowCall) checksVersion() bool { return false }
func (c *applyNowCall) run(ctx context.Context, x *Executor, tf *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error) {
	return x.applyNow(ctx, tf, inv, c, out, errOut)
}

// workspaceCall is `workspace select NAME`, or `workspace new NAME`.
type workspaceCall struct {
	Name string
	New  bool
}

func (c *workspaceCall) Argv() []string {
	if c.New {
		return []string{"workspace", "new", c.Name}
	}
	return []string{"workspace", "select", c.Name}
}
func (*workspaceCall) checksVersion() bool { return false }
func (c *workspaceCall) run(ctx context.Context, _ *Executor, tf *tfexec.Terraform, _ invocation, _, _ io.Writer) (outcome, error) {
	if c.New {
		return outcome{}, tf.WorkspaceNew(ctx, c.Name)
	}
	return outcome{}, tf.WorkspaceSelect(ctx, c.Name)
}

// validateCall is `validate` with the user's arguments (`-json`). It runs
// as terraform validate itself does (runRaw): terraform-exec's Validate
// always adds -json and reports an invalid configuration as success
// (validate -json exits 1 for both an invalid configuration and a
// failure, so it leaves the verdict in the JSON), and what it prints is
// not what terraform validate prints.
type validateCall struct{ Args []string }

func (c *validateCall) Argv() []string    { return append([]string{"validate"}, c.Args...) }
func (*validateCall) checksVersion() bool { return false }
func (c *validateCall) run(ctx context.Context, x *Executor, _ *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error) {
	_, err := x.runRaw(ctx, inv, append([]string{"validate", "-no-color"}, c.Args...), out, errOut)
	return outcome{}, err
}

// outputCall is `output -json`.
type outputCall struct{}

func (*outputCall) Argv() []string      { return []string{"output", "-json"} }
func (*outputCall) checksVersion() bool { return false }
func (*outputCall) run(ctx context.Context, _ *Executor, tf *tfexec.Terraform, _ invocation, _, _ io.Writer) (outcome, error) {
	// terraform-exec copies the JSON to stdout; strata prints the outputs
	// itself.
	tf.SetStdout(io.Discard)
	outs, err := tf.Output(ctx)
	return outcome{Outputs: outs}, err
}

// showCall is `show -json FILE` of a saved plan, or `show FILE` as people
// read it (Text).
type showCall struct {
	File string
	Text bool
}

func (c *showCall) Argv() []string {
	if c.Text {
		return []string{"show", c.File}
	}
	return []string{"show", "-json", c.File}
}

// checksVersion: the JSON is read with the argv terraform-exec's
// ShowPlanFile builds, run directly, since ShowPlanFile first starts the
// engine for `version -json` in every unit; strata knows the version.
// The coloured text is read directly too.
// checksVersion is false: show runs as terraform-exec would run it
// (runRaw), without the `version -json` terraform-exec's ShowPlanFileRaw
// starts the engine for first in every working dir.
func (c *showCall) checksVersion() bool { return false }
func (c *showCall) run(ctx context.Context, x *Executor, tf *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error) {
	if c.Text {
		argv := []string{"show", "-no-color", c.File}
		if x.colour {
			argv = []string{"show", c.File}
		}
		_, err := x.runRaw(ctx, inv, argv, out, errOut)
		return outcome{}, err
	}
	var b bytes.Buffer
	if _, err := x.runRaw(ctx, inv, []string{"show", "-json", "-no-color", c.File}, &b, errOut); err != nil {
		return outcome{}, err
	}
	return outcome{PlanJSON: b.Bytes()}, nil
}

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
func (x *Executor) applyNow(ctx context.Context, tf *tfexec.Terraform, inv invocation, p *applyNowCall, out, errOut io.Writer) (outcome, error) {
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
func (x *Executor) plan(ctx context.Context, tf *tfexec.Terraform, p *planCall, out io.Writer) (outcome, error) {
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

// applySummary is the engine's own count of an apply's changes
// (report.ParsePlanSummary reads a plan's).
var applySummary = regexp.MustCompile(`Apply complete! Resources: (?:(\d+) imported, )?(\d+) added, (\d+) changed, (\d+) destroyed`)

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
