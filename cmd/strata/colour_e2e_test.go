package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
)

// How terraform colours a resource to create, and one to update.
const (
	terraformGreenPlus   = "\x1b[32m+\x1b[0m"
	terraformYellowTilde = "\x1b[33m~\x1b[0m"
)

// atTerminal runs strata under script(1)'s pseudo-terminal in dir and
// returns what the terminal showed, stdout and stderr together, and the
// exit code.
func atTerminal(t *testing.T, dir string, env []string, args string) (string, int) {
	t.Helper()
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not on PATH")
	}
	cmd := exec.Command(scriptBin, "-qefc", strataBin+" "+args, "/dev/null")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s at a terminal: %v\n%s", args, err, out)
	}
	return string(out), code
}

// TestEngineColourAtATerminal (docs/behaviour.md#colour): at a terminal
// the engine's output is in its own colours, at the root and in a
// module's dir, while the report, the summary and the state dir keep it
// plain and what strata reads of it (an apply's counts and changed
// outputs) is read right; --no-color, NO_COLOR, -no-color and a pipe turn
// it off, and a passthrough without colour takes -no-color where the
// engine reads it.
func TestEngineColourAtATerminal(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n  web: {tags: [web]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" { input = \"a\" }\noutput \"o\" { value = terraform_data.x.input }\n",
		"web/main.tf": "resource \"terraform_data\" \"y\" { input = \"b\" }\noutput \"o\" { value = terraform_data.y.input }\n",
	})
	env := hermeticEnv(t)
	// The status block moves the cursor; colour is SGR.
	sgr := regexp.MustCompile("\x1b\\[[0-9;]*m")
	plain := func(what, text string) {
		t.Helper()
		if sgr.MatchString(text) {
			t.Errorf("%s holds colour:\n%q", what, text)
		}
	}

	// apply -auto-approve with no saved plan applies in one engine call,
	// whose counts and changed outputs strata reads from what the engine
	// prints.
	out, code := atTerminal(t, root, env, "apply -auto-approve --report apply.json")
	if code != 0 || !strings.Contains(out, terraformGreenPlus) {
		t.Errorf("apply at a terminal: exit %d, not in colour:\n%q", code, out)
	}
	rep := readReport(t, filepath.Join(root, "apply.json"))
	for _, u := range rep.Units {
		if u.Status != report.StatusApplied || u.Changes != (report.Changes{Add: 1, Outputs: 1}) {
			t.Errorf("%s: %s with %+v, want applied with one resource and one output added\n%s", u.Name(), u.Status, u.Changes, out)
		}
	}
	for _, f := range []string{"app/main.tf", "web/main.tf"} {
		b, _ := os.ReadFile(filepath.Join(root, f))
		os.WriteFile(filepath.Join(root, f), []byte(strings.Replace(string(b), "input = \"", "input = \"2", 1)), 0o644)
	}
	out, code = atTerminal(t, root, env, "plan --report plan.json --summary plan.md")
	if code != 0 || !strings.Contains(out, "[app@default]   "+terraformYellowTilde) || !strings.Contains(out, "\x1b[1mPlan:\x1b[0m 0 to add, 1 to change") {
		t.Errorf("plan at the root, at a terminal: exit %d, not in the engine's colours:\n%q", code, out)
	}
	for _, f := range []string{"plan.json", "plan.md"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		plain(f, string(b))
		if f == "plan.md" && !strings.Contains(string(b), "resource \"terraform_data\" \"y\"") {
			t.Errorf("the summary lacks web's plan:\n%s", b)
		}
	}

	// The state dir keeps each unit's last run plain.
	err := filepath.WalkDir(filepath.Join(root, ".strata"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		plain(path, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// In a module's dir: terraform's own plan, in its colours.
	app := filepath.Join(root, "app")
	out, code = atTerminal(t, app, env, "plan")
	if code != 0 || !strings.Contains(out, terraformYellowTilde) || strings.Contains(out, "[app@default]") {
		t.Errorf("plan in a module's dir, at a terminal: exit %d, want terraform's update in yellow:\n%q", code, out)
	}

	for name, run := range map[string]func() (string, int){
		"NO_COLOR":          func() (string, int) { return atTerminal(t, app, append(env, "NO_COLOR=1"), "plan") },
		"--no-color":        func() (string, int) { return atTerminal(t, app, env, "plan --no-color") },
		"-no-color":         func() (string, int) { return atTerminal(t, app, env, "plan -- -no-color") },
		"STRATA_NO_COLOR":   func() (string, int) { return atTerminal(t, root, append(env, "STRATA_NO_COLOR=1"), "plan") },
		"passthrough":       func() (string, int) { return atTerminal(t, app, append(env, "NO_COLOR=1"), "state list") },
		"passthrough show":  func() (string, int) { return atTerminal(t, app, append(env, "NO_COLOR=1"), "show") },
		"passthrough group": func() (string, int) { return atTerminal(t, app, env, "workspace --no-color show") },
	} {
		out, code := run()
		if code != 0 || !strings.Contains(out, "terraform_data.x") && !strings.Contains(out, "default") {
			t.Errorf("%s: exit %d\n%q", name, code, out)
		}
		plain(name, out)
	}

	// Not at a terminal: no colour.
	r := runBin(t, root, env, "plan")
	if r.code != 0 || !strings.Contains(r.stdout, "~ input") {
		t.Errorf("plan in a pipe: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	plain("plan in a pipe", r.stdout+r.stderr)
}
