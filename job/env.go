package job

import (
	"fmt"
	"os"
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

// strataValues are the names strata sets in every step's environment from
// the config and its own paths (not from the process environment).
var strataValues = map[string]bool{
	"STRATA_STACK": true, "STRATA_STACK_INSTANCE": true, "STRATA_STACK_PATH": true, "STRATA_DIR": true, "STRATA_WORKSPACE": true, "STRATA_ROOT": true,
	"STRATA_ENGINE": true, "STRATA_ENGINE_VERSION": true, "STRATA_PLAN_FILE": true, "STRATA_TMPDIR": true,
	"TERRATEAM_DIR": true, "TERRATEAM_WORKSPACE": true, "TERRATEAM_ROOT": true, "TERRATEAM_PLAN_FILE": true,
	"TERRATEAM_TMPDIR": true, "TERRATEAM_STACK": true, "TERRATEAM_ENGINE_NAME": true, "TERRATEAM_TF_CMD": true,
}

// strataValue reports whether a name is one strata sets itself.
func strataValue(name string) bool { return strataValues[name] }

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

// currentWorkspace reads the workspace a data dir has selected; absent
// means default.
func currentWorkspace(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, "environment"))
	if err != nil {
		return "default"
	}
	if ws := strings.TrimSpace(string(b)); ws != "" {
		return ws
	}
	return "default"
}
