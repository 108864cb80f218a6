package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// TestDropInWorkspaces: in a module dir strata plans the workspace
// terraform would: the one `strata workspace new/select` chose, else
// TF_WORKSPACE; a workspace the dir does not have stops it with exit 1.
func TestDropInWorkspaces(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" { input = terraform.workspace }\noutput \"ws\" { value = terraform.workspace }\n",
	})
	env := hermeticEnv(t)
	app := filepath.Join(root, "app")
	run := func(env []string, args ...string) binRun {
		t.Helper()
		return runBin(t, app, env, args...)
	}
	if r := run(env, "workspace", "new", "staging"); r.code != 0 {
		t.Fatalf("workspace new: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(env, "plan"); r.code != 0 || !strings.Contains(r.stdout, `input  = "staging"`) {
		t.Fatalf("plan after workspace new staging: exit %d, want staging planned\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The plan and apply left terraform where the user put it.
	if r := run(env, "workspace", "show"); strings.TrimSpace(r.stdout) != "staging" {
		t.Errorf("workspace show: %q, want staging\n%s", r.stdout, r.stderr)
	}
	if r := run(env, "output", "-raw", "ws"); r.stdout != "staging" {
		t.Errorf("output -raw ws: %q, want staging\n%s", r.stdout, r.stderr)
	}
	if r := run(env, "workspace", "select", "default"); r.code != 0 {
		t.Fatalf("workspace select default: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(env, "plan"); r.code != 0 || !strings.Contains(r.stdout, `input  = "default"`) {
		t.Errorf("plan after workspace select default: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// TF_WORKSPACE wins over the selected workspace, as --workspace
	// does, and one the dir does not have is an error.
	if r := run(env, "workspace", "select", "staging"); r.code != 0 {
		t.Fatalf("workspace select staging: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(append(env, "TF_WORKSPACE=default"), "plan"); r.code != 0 || !strings.Contains(r.stdout, `input  = "default"`) {
		t.Errorf("TF_WORKSPACE=default plan: exit %d, want default planned\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := run(append(env, "TF_WORKSPACE=nope"), "plan")
	if r.code != 1 || !strings.Contains(r.stderr, "TF_WORKSPACE nope is no workspace of app; its workspaces: default") {
		t.Errorf("TF_WORKSPACE=nope plan: exit %d, want 1 naming the dir's workspaces\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A dir that declares its workspaces keeps them.
	testenv.WriteFile(t, filepath.Join(root, "strata.yml"), "dirs:\n  app: {tags: [app], workspaces: {prod: {}, qa: {}}}\n")
	testenv.WriteFile(t, filepath.Join(app, ".terraform", "environment"), "staging")
	r = run(env, "plan")
	if r.code != 1 || !strings.Contains(r.stderr, "the workspace terraform has selected here, staging, is no workspace of app; its workspaces: prod, qa") {
		t.Errorf("a selected workspace the dir does not declare: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestVersionAndGraphInUnitDir: in a unit's dir, version prints strata's
// version then the engine's (-json: one document holding both), and graph
// is the engine's graph of the unit's resources unless a flag of strata's
// unit DAG is given; at the root both are strata's own.
func TestVersionAndGraphInUnitDir(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	env := hermeticEnv(t)
	app := filepath.Join(root, "app")
	if r := runBin(t, app, env, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "strata ") || !strings.Contains(r.stdout, "\nTerraform v") {
		t.Errorf("version in app: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runBin(t, app, env, "version", "-json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil || doc["strata_version"] == nil || doc["terraform_version"] == nil {
		t.Errorf("version -json in app: exit %d, %v: %q\n%s", r.code, err, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "version"); r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("version at the root: exit %d, want strata's line only: %q", r.code, r.stdout)
	}
	// -json is JSON wherever it runs: at the root, with no engine, and
	// outside any repository.
	for _, dir := range []string{root, t.TempDir()} {
		r := runBin(t, dir, env, "version", "-json")
		doc := map[string]any{}
		if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil || doc["strata_version"] == nil || doc["platform"] == nil || doc["terraform_version"] != nil {
			t.Errorf("version -json in %s: exit %d, %v: %q\n%s", dir, r.code, err, r.stdout, r.stderr)
		}
	}
	if r := runBin(t, app, env, "graph"); r.code != 0 || !strings.Contains(r.stdout, "terraform_data.x") {
		t.Errorf("graph in app: exit %d, want terraform's graph\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, app, env, "graph", "--format", "mermaid"); r.code != 0 || !strings.Contains(r.stdout, "app@default") {
		t.Errorf("graph --format mermaid in app: exit %d, want strata's DAG\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "graph"); r.code != 0 || strings.Contains(r.stdout, "terraform_data") || !strings.Contains(r.stdout, "app@default") {
		t.Errorf("graph at the root: exit %d, want strata's DAG\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestModuleDir: in a dir that is a local module of units, plan and apply
// say so, name the units that call it, and exit 1.
func TestModuleDir(t *testing.T) {
	needTerraform(t)
	caller := "module \"vpc\" { source = \"../modules/vpc\" }\n"
	root := writeRepo(t, map[string]string{
		"strata.yml":          "dirs:\n  net: {tags: [net]}\n",
		"net/main.tf":         caller,
		"app/main.tf":         caller,
		"modules/vpc/main.tf": "resource \"terraform_data\" \"vpc\" {}\n",
	})
	env := hermeticEnv(t)
	for _, cmd := range []string{"plan", "apply"} {
		r := runBin(t, filepath.Join(root, "modules", "vpc"), env, cmd, "-auto-approve")
		if cmd == "plan" {
			r = runBin(t, filepath.Join(root, "modules", "vpc"), env, cmd)
		}
		want := "modules/vpc is a module that app@default, net@default call, not a root module: it is planned and applied with them; run strata in app or net, or at the root"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s in modules/vpc: exit %d, want 1 and %q\n%s%s", cmd, r.code, want, r.stdout, r.stderr)
		}
	}
}

// TestEnabledFalse: a config with enabled: false runs nothing in CI, and
// says why, exit 0; ci start starts a run of no unit; at a terminal (no
// CI) strata runs as asked, after a note.
func TestEnabledFalse(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": "enabled: false\ndirs:\n  app: {tags: [app]}\n",
		"app/main.tf":           "resource \"terraform_data\" \"x\" {}\n",
	})
	env := hermeticEnv(t)
	ci := append(append([]string(nil), env...), "GITHUB_ACTIONS=true")
	r := runBin(t, root, ci, "apply", "-auto-approve")
	if r.code != 0 || !strings.Contains(r.stderr, "enabled: false: strata runs nothing in CI") || strings.Contains(r.stdout, "applied") {
		t.Errorf("apply in CI: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	plan, _ := startRun(t, root, ci, "apply", "--auto-approve", "--state", "file://"+t.TempDir(), "--json")
	if len(plan.Waves) != 0 {
		t.Errorf("ci start with enabled: false planned waves %+v", plan.Waves)
	}
	r = runBin(t, root, env, "plan")
	if r.code != 0 || !strings.Contains(r.stderr, "strata runs nothing in CI; here it runs") || !strings.Contains(r.stdout, "terraform_data.x will be created") {
		t.Errorf("plan at a terminal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestColourAtATerminal: at a terminal strata's table shows each status
// in its colour; NO_COLOR and --no-color turn that off. The terminal is
// script(1)'s pseudo-terminal.
func TestColourAtATerminal(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	env := hermeticEnv(t)
	plan := func(env []string, args string) string {
		t.Helper()
		out, code := atTerminal(t, root, env, args)
		if code != 0 {
			t.Fatalf("%s at a terminal: exit %d\n%s", args, code, out)
		}
		return out
	}
	if out := plan(env, "plan"); !strings.Contains(out, "\x1b[33mplanned\x1b[0m") {
		t.Errorf("plan at a terminal: no coloured status:\n%q", out)
	}
	for name, run := range map[string]func() string{
		"NO_COLOR":   func() string { return plan(append(env, "NO_COLOR=1"), "plan") },
		"--no-color": func() string { return plan(env, "plan --no-color") },
	} {
		if out := run(); strings.Contains(out, "\x1b[33m") || !strings.Contains(out, "planned") {
			t.Errorf("%s: the status is coloured, or missing:\n%q", name, out)
		}
	}
}

// TestDestinationBranches: in CI, a pull request into a branch
// destination_branches does not name runs nothing, saying why; one into
// a named branch, and a push, run.
func TestDestinationBranches(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "destination_branches: [main, {branch: 'release/*', source_branches: ['hotfix/*']}]\ndirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	env := append(hermeticEnv(t), "GITHUB_ACTIONS=true")
	pr := func(base, head string) []string {
		return append(append([]string(nil), env...), "GITHUB_BASE_REF="+base, "GITHUB_HEAD_REF="+head)
	}
	for _, tc := range []struct {
		env  []string
		runs bool
	}{
		{pr("main", "feature/x"), true},
		{pr("release/2", "hotfix/db"), true},
		{pr("release/2", "feature/x"), false},
		{pr("develop", "feature/x"), false},
		{append(append([]string(nil), env...), "GITHUB_REF_TYPE=branch", "GITHUB_REF_NAME=develop"), true},
	} {
		r := runBin(t, root, tc.env, "plan")
		ran := strings.Contains(r.stdout, "terraform_data.x will be created")
		if r.code != 0 || ran != tc.runs || !tc.runs && !strings.Contains(r.stderr, "is none that destination_branches") {
			t.Errorf("%v: exit %d, ran %t, want %t\n%s%s", tc.env[len(tc.env)-2:], r.code, ran, tc.runs, r.stdout, r.stderr)
		}
	}
}

// TestTFWorkspaceAtRoot: at the repository root TF_WORKSPACE selects that
// workspace's units, as --workspace does, and --workspace wins over it;
// one that matches nothing exits 1 naming it.
func TestTFWorkspaceAtRoot(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {workspaces: {prod: {}, qa: {}}}\n  net: {workspaces: {prod: {}}}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"net/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	ls := func(tfWorkspace string, args ...string) (binRun, []string) {
		t.Helper()
		r := runBin(t, root, append(hermeticEnv(t), "TF_WORKSPACE="+tfWorkspace), append([]string{"ls", "--json"}, args...)...)
		var rows []lsRow
		json.Unmarshal([]byte(r.stdout), &rows)
		var units []string
		for _, row := range rows {
			units = append(units, row.Dir+"@"+row.Workspace)
		}
		return r, units
	}
	for _, tc := range []struct {
		tfWorkspace string
		args        []string
		want        string
	}{
		{"", nil, "app@prod app@qa net@prod"},
		{"qa", nil, "app@qa"},
		{"prod", nil, "app@prod net@prod"},
		{"qa", []string{"--workspace", "prod"}, "app@prod net@prod"},
		{"qa", []string{"--stack", "default"}, "app@qa"},
	} {
		if r, got := ls(tc.tfWorkspace, tc.args...); r.code != 0 || strings.Join(got, " ") != tc.want {
			t.Errorf("TF_WORKSPACE=%s ls %v: exit %d, %q, want %q\n%s", tc.tfWorkspace, tc.args, r.code, got, tc.want, r.stderr)
		}
	}
	if r, _ := ls("staging"); r.code != 1 || !strings.Contains(r.stderr, "no units match TF_WORKSPACE staging") {
		t.Errorf("TF_WORKSPACE=staging: exit %d, want 1 naming it\n%s%s", r.code, r.stdout, r.stderr)
	}
}
