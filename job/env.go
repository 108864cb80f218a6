package job

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/stacks"
)

// withCredentials adds the credentials set in process (strata's own
// environment) to env: the OIDC step exchanges the job's token, which no
// other step sees.
func withCredentials(env map[string]string, process []string) map[string]string {
	for k, v := range environ.CredentialsOf(process) {
		env[k] = v
	}
	return env
}

// processEnvOf returns strata's own environment as a map, with what
// terraform-exec refuses removed (TF_VAR_*, TF_LOG*, TF_WORKSPACE, …): it
// sets those itself, and TF_VAR_ values reach the engine through the var
// file (docs/behaviour.md#input-variables). The credentials strata reads
// are removed too: a step's env asks for one by name
// (docs/behaviour.md#credentials). A TF_CLI_ARGS* variable is an error:
// it would add arguments to every engine call behind strata's back.
func ProcessEnvOf(process []string) (map[string]string, error) {
	env := make(map[string]string, len(process))
	for _, kv := range process {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		env[k] = v
	}
	for _, name := range environ.Credentials {
		delete(env, name)
	}
	var bad []string
	for k := range env {
		if strings.HasPrefix(k, "TF_CLI_ARGS") {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("%s is set: it would add arguments to every engine call; unset it and pass engine arguments to strata (after --) or in a step's extra_args", strings.Join(bad, ", "))
	}
	return tfexec.CleanEnv(env), nil
}

// tfVarsFromEnv returns the TF_VAR_ values of an environment, by variable
// name.
func TFVarsFromEnv(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, "TF_VAR_") && len(k) > len("TF_VAR_") {
			out[strings.TrimPrefix(k, "TF_VAR_")] = v
		}
	}
	return out
}

// unitEnvInput is what a unit's environment is made of.
type UnitEnvInput struct {
	Base        map[string]string // ProcessEnv
	Unit        *stacks.Unit
	Vars        *Vars // the unit's stack variables
	Root        string
	Engine      string // name
	Version     string
	EnginePath  string
	PlanFile    string
	TmpDir      string
	DataDir     string // TF_DATA_DIR for a dir shared by several stacks, else ""
	PluginCache string // TF_PLUGIN_CACHE_DIR strata sets, else ""
}

// unitEnv is the environment of every step of a unit (docs/behaviour.md#stack-variables): the process
// environment, the stack variables under their own names and as
// STACK_VAR_<NAME>, and strata's and Terrateam's variables.
func UnitEnv(in UnitEnvInput) map[string]string {
	env := make(map[string]string, len(in.Base)+len(in.Vars.byName)*2+20)
	for k, v := range in.Base {
		env[k] = v
	}
	for k, v := range in.Vars.exported {
		env[k] = v
	}
	for k, v := range in.Vars.byName {
		if !strings.HasPrefix(k, "TF_VAR_") {
			// terraform-exec refuses TF_VAR_ in an engine's environment:
			// these reach the engine through the var file (Vars.TFVars).
			env[k] = v
		}
	}
	vals := map[string]string{
		// An instance's stack is the stack as written, its key apart
		// (docs/behaviour.md#stack-instances).
		"STACK": in.Unit.Stack.BaseName(), "STACK_INSTANCE": in.Unit.Stack.Instance, "STACK_PATH": strings.Join(in.Unit.Stack.Path, "/"),
		"DIR": in.Unit.Dir, "WORKSPACE": in.Unit.Workspace, "ROOT": in.Root,
		"ENGINE": in.Engine, "ENGINE_VERSION": in.Version, "PLAN_FILE": in.PlanFile, "TMPDIR": in.TmpDir,
	}
	for k, v := range vals {
		env["STRATA_"+k] = v
	}
	// The same values under the names run steps written for Terrateam use.
	for _, k := range []string{"DIR", "WORKSPACE", "ROOT", "PLAN_FILE", "TMPDIR", "STACK"} {
		env["TERRATEAM_"+k] = vals[k]
	}
	env["TERRATEAM_ENGINE_NAME"] = in.Engine
	env["TERRATEAM_TF_CMD"] = in.EnginePath
	if in.DataDir != "" {
		env["TF_DATA_DIR"] = in.DataDir
	}
	if in.PluginCache != "" {
		env["TF_PLUGIN_CACHE_DIR"] = in.PluginCache
	}
	if _, ok := env["CHECKPOINT_DISABLE"]; !ok {
		// No update checks from inside a run.
		env["CHECKPOINT_DISABLE"] = "1"
	}
	return env
}

// dataDir is where a unit's engine keeps its working data: the dir's
// .terraform, or its own under .terraform/strata/<stack>/<workspace> when
// several stacks share the dir (docs/behaviour.md#stacks-and-membership)
// or the unit is a stack instance's: each instance keeps its workspace
// selected in its own data dir, so that running the instances of a dir
// in turn selects no workspace again (docs/behaviour.md#stack-instances).
func DataDirOf(root string, u *stacks.Unit) (dir string, own bool, err error) {
	base := filepath.Join(root, filepath.FromSlash(u.Dir), ".terraform")
	if u.Shared || u.Origin != nil {
		dir, err := safepath.Join(filepath.Join(base, "strata"), u.Stack.Name, u.Workspace)
		if err != nil {
			return "", false, fmt.Errorf("%s: data dir: %w", u.Name(), err)
		}
		return dir, true, nil
	}
	return base, false, nil
}

// Vars are a unit's stack variables as its steps use them
// (docs/behaviour.md#stack-variables), read from its stack once when the
// unit is set up: in substitutions, in its environment under their own
// names and as STACK_VAR_<NAME>, the TF_VAR_ ones in its var file, the
// sensitive ones masked, and all of them in its plan's digest.
type Vars struct {
	byName   map[string]string
	exported map[string]string // by STACK_VAR_<NAME>
	tfVars   map[string]string // the TF_VAR_<name> ones, by input variable name
	secrets  []string
}

// VarsOf reads a stack's variables.
func VarsOf(st *stacks.Stack) *Vars {
	v := &Vars{byName: make(map[string]string, len(st.Variables)), exported: make(map[string]string, len(st.Variables))}
	for _, sv := range st.Variables {
		v.byName[sv.Name] = sv.Value
		v.exported["STACK_VAR_"+strings.ToUpper(sv.Name)] = sv.Value
		if name, ok := strings.CutPrefix(sv.Name, "TF_VAR_"); ok && name != "" {
			if v.tfVars == nil {
				v.tfVars = map[string]string{}
			}
			v.tfVars[name] = sv.Value
		}
		if sv.Sensitive {
			v.secrets = append(v.secrets, sv.Value)
		}
	}
	return v
}

// Lookup finds a variable by its name.
func (v *Vars) Lookup(name string) (string, bool) {
	s, ok := v.byName[name]
	return s, ok
}

// LookupExported finds a variable by the name it has in the unit's
// environment, STACK_VAR_<NAME>.
func (v *Vars) LookupExported(name string) (string, bool) {
	s, ok := v.exported[name]
	return s, ok
}

// TFVars are the variables named TF_VAR_<name>, by input variable name:
// they go to the var file, as env steps' TF_VAR_ values do (terraform-exec
// refuses TF_VAR_ in an engine's environment).
func (v *Vars) TFVars() map[string]string { return v.tfVars }

// Secrets are the values of the sensitive variables.
func (v *Vars) Secrets() []string { return v.secrets }

// All are the variables by name, for the plan's digest.
func (v *Vars) All() map[string]string { return v.byName }
