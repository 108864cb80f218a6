package runner

import (
	"fmt"
	"sort"
	"strconv"
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

	Init      *InitArgs
	Plan      *PlanInvocation
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
		a := []string{"init"}
		ia := inv.Init
		if ia.Upgrade {
			a = append(a, "-upgrade")
		}
		if ia.Reconfigure {
			a = append(a, "-reconfigure")
		}
		if ia.Backend != nil {
			a = append(a, "-backend="+strconv.FormatBool(*ia.Backend))
		}
		for _, b := range ia.BackendConfig {
			a = append(a, "-backend-config="+b)
		}
		if ia.ForceCopy {
			a = append(a, "-force-copy")
		}
		if ia.Get != nil {
			a = append(a, "-get="+strconv.FormatBool(*ia.Get))
		}
		for _, p := range ia.PluginDir {
			a = append(a, "-plugin-dir="+p)
		}
		return a
	case inv.Plan != nil:
		p := inv.Plan
		a := []string{"plan", "-out=" + p.Out}
		if p.VarFile != "" {
			a = append(a, "-var-file="+p.VarFile)
		}
		return append(a, p.Args.flags()...)
	case inv.ApplyPlan != "":
		return []string{"apply", inv.ApplyPlan}
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

func (p PlanArgs) flags() []string {
	var a []string
	for _, f := range p.VarFiles {
		a = append(a, "-var-file="+f)
	}
	for _, v := range p.Vars {
		a = append(a, "-var="+v)
	}
	for _, t := range p.Targets {
		a = append(a, "-target="+t)
	}
	for _, r := range p.Replace {
		a = append(a, "-replace="+r)
	}
	if p.Refresh != nil {
		a = append(a, "-refresh="+strconv.FormatBool(*p.Refresh))
	}
	if p.RefreshOnly {
		a = append(a, "-refresh-only")
	}
	if p.Destroy {
		a = append(a, "-destroy")
	}
	if p.Lock != nil {
		a = append(a, "-lock="+strconv.FormatBool(*p.Lock))
	}
	if p.LockTimeout != "" {
		a = append(a, "-lock-timeout="+p.LockTimeout)
	}
	if p.Parallelism > 0 {
		a = append(a, "-parallelism="+strconv.Itoa(p.Parallelism))
	}
	return a
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
