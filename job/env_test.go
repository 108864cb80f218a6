package job

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks"
)

// TestWithCredentials: only the credentials of strata's environment are
// added, over what env held.
func TestWithCredentials(t *testing.T) {
	env := withCredentials(map[string]string{"A": "1", "GITHUB_TOKEN": "old"}, []string{"GITHUB_TOKEN=new", "STRATA_OIDC_TOKEN=jwt", "HOME=/h"})
	want := map[string]string{"A": "1", "GITHUB_TOKEN": "new", "STRATA_OIDC_TOKEN": "jwt"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("withCredentials = %v, want %v", env, want)
	}
}

// TestProcessEnvOfCredentials: strata's credentials never reach a step's
// starting environment; a step asks for one by name.
func TestProcessEnvOfCredentials(t *testing.T) {
	env, err := ProcessEnvOf([]string{"GITHUB_TOKEN=x", "CI_JOB_TOKEN=y", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=z", "KEEP=1", "=bad"})
	if err != nil || !reflect.DeepEqual(env, map[string]string{"KEEP": "1"}) {
		t.Errorf("ProcessEnvOf = %v %v", env, err)
	}
	_, err = ProcessEnvOf([]string{"TF_CLI_ARGS=-x", "TF_CLI_ARGS_apply=-y"})
	if err == nil || !strings.HasPrefix(err.Error(), "TF_CLI_ARGS, TF_CLI_ARGS_apply is set") {
		t.Errorf("TF_CLI_ARGS: %v", err)
	}
}

// TestDataDirOf: a dir of one stack keeps the engine's .terraform; a
// shared dir gives each stack and workspace its own, and refuses a name
// that would leave it.
func TestDataDirOf(t *testing.T) {
	u := &stacks.Unit{Dirspace: &stacks.Dirspace{Dir: "net", Workspace: "default"}, Stack: &stacks.Stack{Name: "prod"}}
	dir, own, err := DataDirOf("/repo", u)
	if err != nil || own || dir != filepath.Join("/repo", "net", ".terraform") {
		t.Errorf("one stack: %q %t %v", dir, own, err)
	}
	u.Shared = true
	dir, own, err = DataDirOf("/repo", u)
	if err != nil || !own || dir != filepath.Join("/repo", "net", ".terraform", "strata", "prod", "default") {
		t.Errorf("shared: %q %t %v", dir, own, err)
	}
	u.Workspace = "../../x"
	if _, _, err := DataDirOf("/repo", u); err == nil {
		t.Error("a workspace name that leaves the data dir")
	}
}

// TestCurrentWorkspace: the data dir's environment file, default when
// absent or empty.
func TestCurrentWorkspace(t *testing.T) {
	dir := t.TempDir()
	if got := currentWorkspace(dir); got != "default" {
		t.Errorf("no file: %q", got)
	}
	for text, want := range map[string]string{"prod\n": "prod", "  \n": "default", "staging": "staging"} {
		if err := os.WriteFile(filepath.Join(dir, "environment"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := currentWorkspace(dir); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

// TestStrataValue: the names strata sets itself, which a cmd may name.
func TestStrataValue(t *testing.T) {
	for name, want := range map[string]bool{"STRATA_DIR": true, "TERRATEAM_TF_CMD": true, "STRATA_ENVIRONMENT": false, "HOME": false, "STRATA_GITHUB_TOKEN": false} {
		if strataValue(name) != want {
			t.Errorf("strataValue(%q) = %t", name, !want)
		}
	}
}

// TestVarsOf: a stack's variables by name, as STACK_VAR_<NAME>, the
// TF_VAR_ ones by input name, and the sensitive ones' values.
func TestVarsOf(t *testing.T) {
	v := testVars()
	if got, ok := v.Lookup("region"); !ok || got != "eu-west-1" {
		t.Errorf("Lookup = %q %t", got, ok)
	}
	if got, ok := v.LookupExported("STACK_VAR_TF_VAR_SIZE"); !ok || got != "3" {
		t.Errorf("LookupExported = %q %t", got, ok)
	}
	if _, ok := v.LookupExported("region"); ok {
		t.Error("a variable found by its own name among the exported")
	}
	if !reflect.DeepEqual(v.TFVars(), map[string]string{"size": "3"}) || !reflect.DeepEqual(v.Secrets(), []string{"s3cret"}) || len(v.All()) != 3 {
		t.Errorf("TFVars %v Secrets %v All %v", v.TFVars(), v.Secrets(), v.All())
	}
	empty := VarsOf(&stacks.Stack{Variables: []stacks.Variable{{Name: "TF_VAR_", Value: "x"}}})
	if empty.TFVars() != nil {
		t.Errorf("TF_VAR_ with no name: %v", empty.TFVars())
	}
}
