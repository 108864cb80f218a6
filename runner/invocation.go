package runner

import (
	"fmt"
	"sort"
	"strings"
)

// Step names, as the report shows them.
const (
	StepInit      = "init"
	StepWorkspace = "workspace"
	StepPlan      = "plan"
	StepApply     = "apply"
	StepOutput    = "output"
	StepValidate  = "validate"
	StepRun       = "run"
	StepShow      = "show"
	StepEnv       = "env"
	// The policy tools a step may run from PATH.
	StepCheckov  = "checkov"
	StepConftest = "conftest"
	StepOPA      = "opa"
	// StepState is recording the run state: a failure to write it fails
	// the unit, since a later run would act on a record that is wrong.
	StepState = "state"
)

// Invocation is one engine call, built apart from running it: the engine,
// the dir, the environment and the typed arguments. Tests inspect it; the
// executor turns it into a terraform-exec call.
type Invocation struct {
	Step   string
	Engine string // path of the engine binary
	Dir    string // absolute working dir
	Env    map[string]string

	Init *InitArgs
	Plan *PlanInvocation
	// ApplyNow applies without a plan file (-auto-approve), with plan's
	// var file and arguments; Out is unused.
	ApplyNow  *PlanInvocation
	ApplyPlan string // apply: the saved plan file
	// Workspace is the workspace to select; WorkspaceNew creates it.
	Workspace    string
	WorkspaceNew bool
	// Validate runs validate; Output runs output -json.
	Validate bool
	Output   bool
	// ShowPlan runs show -json of a saved plan; with ShowText, show as
	// people read it.
	ShowPlan string
	ShowText bool
}

// PlanInvocation is a plan call: always with -out, the unit's var file
// first, then the user's arguments.
type PlanInvocation struct {
	Out     string
	VarFile string // strata's var file, "" when there is none
	Args    PlanArgs
}

// Args renders the argv terraform-exec runs for the invocation (without the
// flags it always adds: -no-color, -input=false, …), for logs and tests.
func (inv Invocation) Args() []string {
	switch {
	case inv.Init != nil:
		return append([]string{"init"}, inv.Init.Flags()...)
	case inv.Plan != nil:
		p := inv.Plan
		a := []string{"plan", "-out=" + p.Out}
		if p.VarFile != "" {
			a = append(a, "-var-file="+p.VarFile)
		}
		return append(a, p.Args.Flags()...)
	case inv.ApplyPlan != "":
		return []string{"apply", inv.ApplyPlan}
	case inv.ApplyNow != nil:
		a := []string{"apply", "-auto-approve"}
		if inv.ApplyNow.VarFile != "" {
			a = append(a, "-var-file="+inv.ApplyNow.VarFile)
		}
		return append(a, inv.ApplyNow.Args.Flags()...)
	case inv.Workspace != "":
		if inv.WorkspaceNew {
			return []string{"workspace", "new", inv.Workspace}
		}
		return []string{"workspace", "select", inv.Workspace}
	case inv.Validate:
		return []string{"validate"}
	case inv.Output:
		return []string{"output", "-json"}
	case inv.ShowPlan != "" && inv.ShowText:
		return []string{"show", inv.ShowPlan}
	case inv.ShowPlan != "":
		return []string{"show", "-json", inv.ShowPlan}
	}
	return nil
}

// String renders the invocation as a command line for logs.
func (inv Invocation) String() string {
	return "terraform " + strings.Join(inv.Args(), " ")
}

// envList renders an environment map as sorted KEY=VALUE pairs.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, fmt.Sprintf("%s=%s", k, v))
	}
	sort.Strings(out)
	return out
}
