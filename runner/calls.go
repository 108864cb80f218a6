package runner

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// Each engine command strata runs is one small type: its arguments, its
// argv (for logs and tests) and how it runs through terraform-exec, side
// by side. A call carrying flags terraform-exec cannot express runs the
// engine as terraform-exec would (runRaw).

// engineCall is one engine command.
type engineCall interface {
	// Argv is the argv after the engine's name, without the flags
	// terraform-exec always adds (-no-color, -input=false, …).
	Argv() []string
	// checksVersion reports whether terraform-exec asks the engine's
	// version before this command.
	checksVersion() bool
	run(ctx context.Context, x *executor, tf *tfexec.Terraform, inv Invocation, out, errOut io.Writer) (Outcome, error)
}

// InitCall is `init`.
type InitCall struct{ Args InitArgs }

func (c InitCall) Argv() []string    { return append([]string{"init"}, c.Args.Flags()...) }
func (InitCall) checksVersion() bool { return true }
func (c InitCall) run(ctx context.Context, x *executor, tf *tfexec.Terraform, inv Invocation, out, errOut io.Writer) (Outcome, error) {
	if len(c.Args.Extra) > 0 {
		_, err := x.runRaw(ctx, inv, c.rawArgs(), out, errOut)
		return Outcome{}, err
	}
	return Outcome{}, tf.Init(ctx, initOptions(c.Args)...)
}

// rawArgs is the argv terraform-exec would run, its fixed flags included,
// with the flags it cannot express at the end.
func (c InitCall) rawArgs() []string {
	a := c.Args
	backend, get := true, true
	if a.Backend != nil {
		backend = *a.Backend
	}
	if a.Get != nil {
		get = *a.Get
	}
	argv := []string{"init", "-no-color", "-input=false", "-backend=" + strconv.FormatBool(backend), "-get=" + strconv.FormatBool(get), "-upgrade=" + strconv.FormatBool(a.Upgrade)}
	if a.Reconfigure {
		argv = append(argv, "-reconfigure")
	}
	if a.ForceCopy {
		argv = append(argv, "-force-copy")
	}
	for _, b := range a.BackendConfig {
		argv = append(argv, "-backend-config="+b)
	}
	for _, p := range a.PluginDir {
		argv = append(argv, "-plugin-dir="+p)
	}
	return append(argv, a.Extra...)
}

// PlanCall is `plan -out`: always with -out, the unit's var file first,
// then the user's arguments.
type PlanCall struct {
	Out     string
	VarFile string // strata's var file, "" when there is none
	Args    PlanArgs
}

func (c PlanCall) Argv() []string {
	a := []string{"plan", "-out=" + c.Out}
	if c.VarFile != "" {
		a = append(a, "-var-file="+c.VarFile)
	}
	return append(a, c.Args.Flags()...)
}
func (PlanCall) checksVersion() bool { return false }
func (c PlanCall) run(ctx context.Context, x *executor, tf *tfexec.Terraform, inv Invocation, out, errOut io.Writer) (Outcome, error) {
	if len(c.Args.Extra) > 0 {
		return x.rawPlan(ctx, inv, c.rawArgs(), out, errOut)
	}
	return x.plan(ctx, tf, c, out)
}

func (c PlanCall) rawArgs() []string {
	argv := []string{"plan", "-no-color", "-input=false", "-detailed-exitcode", "-out=" + c.Out}
	if c.VarFile != "" {
		argv = append(argv, "-var-file="+c.VarFile)
	}
	return append(argv, c.Args.Flags()...)
}

// ApplyPlanCall is `apply FILE`: a saved plan, no other argument.
type ApplyPlanCall struct{ File string }

func (c ApplyPlanCall) Argv() []string    { return []string{"apply", c.File} }
func (ApplyPlanCall) checksVersion() bool { return false }
func (c ApplyPlanCall) run(ctx context.Context, _ *executor, tf *tfexec.Terraform, _ Invocation, _, _ io.Writer) (Outcome, error) {
	return Outcome{}, tf.Apply(ctx, tfexec.DirOrPlan(c.File))
}

// ApplyNowCall is `apply -auto-approve` without a plan file, with plan's
// var file and arguments.
type ApplyNowCall struct {
	VarFile string
	Args    PlanArgs
}

func (c ApplyNowCall) Argv() []string {
	a := []string{"apply", "-auto-approve"}
	if c.VarFile != "" {
		a = append(a, "-var-file="+c.VarFile)
	}
	return append(a, c.Args.Flags()...)
}
func (ApplyNowCall) checksVersion() bool { return false }
func (c ApplyNowCall) run(ctx context.Context, x *executor, tf *tfexec.Terraform, _ Invocation, out, _ io.Writer) (Outcome, error) {
	return x.applyNow(ctx, tf, c, out)
}

// WorkspaceCall is `workspace select NAME`, or `workspace new NAME`.
type WorkspaceCall struct {
	Name string
	New  bool
}

func (c WorkspaceCall) Argv() []string {
	if c.New {
		return []string{"workspace", "new", c.Name}
	}
	return []string{"workspace", "select", c.Name}
}
func (WorkspaceCall) checksVersion() bool { return false }
func (c WorkspaceCall) run(ctx context.Context, _ *executor, tf *tfexec.Terraform, _ Invocation, _, _ io.Writer) (Outcome, error) {
	if c.New {
		return Outcome{}, tf.WorkspaceNew(ctx, c.Name)
	}
	return Outcome{}, tf.WorkspaceSelect(ctx, c.Name)
}

// ValidateCall is `validate`.
type ValidateCall struct{}

func (ValidateCall) Argv() []string      { return []string{"validate"} }
func (ValidateCall) checksVersion() bool { return true }
func (ValidateCall) run(ctx context.Context, _ *executor, tf *tfexec.Terraform, _ Invocation, _, _ io.Writer) (Outcome, error) {
	_, err := tf.Validate(ctx)
	return Outcome{}, err
}

// OutputCall is `output -json`.
type OutputCall struct{}

func (OutputCall) Argv() []string      { return []string{"output", "-json"} }
func (OutputCall) checksVersion() bool { return false }
func (OutputCall) run(ctx context.Context, _ *executor, tf *tfexec.Terraform, _ Invocation, _, _ io.Writer) (Outcome, error) {
	// terraform-exec copies the JSON to stdout; strata prints the outputs
	// itself.
	tf.SetStdout(io.Discard)
	outs, err := tf.Output(ctx)
	return Outcome{Outputs: outs}, err
}

// ShowCall is `show -json FILE` of a saved plan, or `show FILE` as people
// read it (Text).
type ShowCall struct {
	File string
	Text bool
}

func (c ShowCall) Argv() []string {
	if c.Text {
		return []string{"show", c.File}
	}
	return []string{"show", "-json", c.File}
}
func (ShowCall) checksVersion() bool { return true }
func (c ShowCall) run(ctx context.Context, _ *executor, tf *tfexec.Terraform, _ Invocation, out, _ io.Writer) (Outcome, error) {
	tf.SetStdout(io.Discard)
	if c.Text {
		// The text comes back whole, and is printed as the plan was.
		text, err := tf.ShowPlanFileRaw(ctx, c.File)
		if err == nil {
			_, err = io.WriteString(out, text)
		}
		return Outcome{}, err
	}
	plan, err := tf.ShowPlanFile(ctx, c.File)
	if err != nil {
		return Outcome{}, err
	}
	b, err := json.Marshal(plan)
	return Outcome{PlanJSON: b}, err
}
