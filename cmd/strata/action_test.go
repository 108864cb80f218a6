package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/internal/testenv"

	"go.yaml.in/yaml/v3"
)

// actionStep is one step of the composite action in action.yml.
type actionStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

func actionSteps(t *testing.T) []actionStep {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs map[string]struct {
			Required bool   `yaml:"required"`
			Default  string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string       `yaml:"using"`
			Steps []actionStep `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(b, &action); err != nil {
		t.Fatal(err)
	}
	if action.Runs.Using != "composite" || !action.Inputs["command"].Required || action.Inputs["version"].Default != "" {
		t.Fatalf("action.yml: %+v", action)
	}
	return action.Runs.Steps
}

// TestActionRunsTheCommand runs the action's strata step as GitHub would
// (bash, the inputs in its environment): the command's words reach
// strata, never a shell, and the exit code is the step's output.
func TestActionRunsTheCommand(t *testing.T) {
	needTerraform(t)
	var step actionStep
	for _, s := range actionSteps(t) {
		if s.ID == "run" {
			step = s
		}
	}
	if step.Run == "" || step.Env["STRATA_COMMAND"] != "${{ inputs.command }}" {
		t.Fatalf("no strata step taking the command from the environment: %+v", step)
	}
	root := fixture(t, "nested")
	for _, tc := range []struct {
		command string
		code    string
		want    string
	}{
		{"ls --json --dir base", "0", `"dir": "base"`},
		{"ls --dir $(touch${IFS}pwned) `touch pwned`", "1", "no units match"},
	} {
		dir := t.TempDir()
		output := filepath.Join(dir, "output")
		cmd := exec.Command("bash", "-e", "-c", step.Run)
		cmd.Dir = root
		cmd.Env = append(hermeticEnv(t), "PATH="+filepath.Dir(strataBin)+":"+os.Getenv("PATH"),
			"STRATA_COMMAND="+tc.command, "GITHUB_OUTPUT="+output)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%q: output\n%s", tc.command, out)
		}
		if got, _ := os.ReadFile(output); strings.TrimSpace(string(got)) != "exit-code="+tc.code {
			t.Errorf("%q: GITHUB_OUTPUT %q, want exit-code=%s", tc.command, got, tc.code)
		}
		if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
			os.Remove(filepath.Join(root, "pwned"))
			t.Errorf("%q: the command ran code", tc.command)
		}
	}
}

// TestActionLint checks the action and the example workflow with
// actionlint, which also checks a workflow's inputs against a local
// action's metadata. make test installs actionlint; elsewhere the test
// needs it on PATH.
func TestActionLint(t *testing.T) {
	lint := testenv.Tool(t, "actionlint")
	repo := t.TempDir()
	action, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(example), "uses: strata-iac/strata@v1") {
		t.Fatal("the example does not use the action")
	}
	// The example, pointed at this checkout's action.
	local := strings.ReplaceAll(string(example), "strata-iac/strata@v1", "./")
	// actionlint finds the project by its .git.
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"action.yml": string(action), ".github/workflows/strata.yml": local} {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(lint, "-no-color")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}

// TestActionInstallsAsTheWorkflow: the action installs strata with the
// emitted workflow's script, by default at the action's own ref.
func TestActionInstallsAsTheWorkflow(t *testing.T) {
	for _, st := range actionSteps(t) {
		if st.Name != "Install strata" {
			continue
		}
		if st.Run != ci.InstallScript || st.Env["STRATA_VERSION"] != "${{ inputs.version || github.action_ref }}" {
			t.Errorf("the action's install step differs from ci.InstallScript:\n%s\nenv %v", st.Run, st.Env)
		}
		return
	}
	t.Error("the action has no Install strata step")
}

// TestRepositoryScriptsShellcheck checks the repository's own shell
// scripts (the benchmarks, CI's entry point) with shellcheck, as the
// emitted CI scripts are (ci's TestEmittedScriptsShellcheck).
func TestRepositoryScriptsShellcheck(t *testing.T) {
	sc := testenv.Tool(t, "shellcheck")
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "bench", "*", "*.sh"))
	scripts = append(scripts, filepath.Join("..", "..", ".ci", "run"))
	if len(scripts) < 4 {
		t.Fatalf("found only %v", scripts)
	}
	for _, s := range scripts {
		if out, err := exec.Command(sc, s).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", s, err, out)
		}
	}
}
