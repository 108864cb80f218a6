package runner

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestEngineStartsPerUnit: planning new units starts the engine once for
// init and once for plan per unit (a plan with changes is read from its
// file, not from show -json), and asks its version once for the whole
// run (terraform-exec's Init and ShowPlanFile would ask it again in every
// new dir).
// The real terraform runs behind a shim on PATH that logs each start.
func TestEngineStartsPerUnit(t *testing.T) {
	needTerraform(t)
	log := filepath.Join(t.TempDir(), "starts")
	root := writeRepo(t, map[string]string{
		"strata.yml":  "version: \"1\"\n",
		"a/main.tf":   "resource \"terraform_data\" \"x\" {}\n",
		"b/main.tf":   "resource \"terraform_data\" \"x\" {}\n",
		"c/main.tf":   "resource \"terraform_data\" \"x\" {}\n",
		"d/README.md": "not a module\n",
	})
	e := newE2E(t, root)
	in := terraformShim(t, e, func(real string) string {
		return "echo \"$*\" \"$PWD\" >>'" + log + "'\nexec '" + real + "' \"$@\"\n"
	})
	res := e.run(CmdPlan, Options{Extra: Extra{Installer: in}}, stacks.Selection{})
	for _, name := range []string{"a@default", "b@default", "c@default"} {
		if u := unitByName(t, res.Report, name); u.Status != report.StatusPlanned {
			t.Fatalf("%s: %s (%s)\n%s", name, u.Status, u.Reason, e.console.String())
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Engine identity asks once for the run: as the shim has no Go build
	// information, plain `version`, for the name and the version.
	starts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		cmd, _, _ := strings.Cut(line, " /")
		if !strings.HasPrefix(cmd, "version") {
			cmd, _, _ = strings.Cut(cmd, " ")
		}
		starts[cmd]++
	}
	want := map[string]int{"init": 3, "plan": 3, "version": 1}
	if !maps.Equal(starts, want) {
		t.Errorf("engine starts = %v, want %v:\n%s", starts, want, data)
	}
}

// terraformShim stands a script in for terraform, first on the installer
// it returns (of e's environment): body is the script after its first
// line, given the real terraform's path.
func terraformShim(t *testing.T, e *e2e, body func(real string) string) *engines.Installer {
	t.Helper()
	real, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal(err)
	}
	shim := t.TempDir()
	if err := os.WriteFile(filepath.Join(shim, "terraform"), []byte("#!/bin/sh\n"+body(real)), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := engines.NewInstallerFromLookup(environ.Getenv(e.env))
	if err != nil {
		t.Fatal(err)
	}
	in.SearchPath = []string{shim}
	return in
}
