package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks"
)

// TestRequiredVersionBeforeAnything: a module whose required_version its
// engine does not meet stops the command before anything runs, each such
// unit named in the run's order, though the modules are read in parallel.
func TestRequiredVersionBeforeAnything(t *testing.T) {
	files := sameUnits("resource \"terraform_data\" \"x\" {}\n", "a", "b", "c", "d", "e", "f")
	for _, d := range []string{"b", "e"} {
		files[d+"/versions.tf"] = "terraform {\n  required_version = \"< 1.0\"\n}\n"
	}
	root := writeRepo(t, files)
	e := newE2E(t, root)
	p := e.project()
	run, err := p.Select(stacks.Selection{Cwd: "."})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), p, run, Options{Settings: Settings{Command: CmdPlan, Parallelism: 2}, Extra: Extra{Environ: e.env}, Output: Output{Console: &e.console}})
	if err == nil {
		t.Fatalf("the command ran: %s", e.console.String())
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "b@default: ") || !strings.HasPrefix(lines[1], "e@default: ") || !strings.Contains(lines[0], "< 1.0") {
		t.Errorf("error %q; want b's then e's required_version", err)
	}
	for _, d := range []string{"a", "b", "c"} {
		if _, err := os.Stat(filepath.Join(root, d, ".terraform")); err == nil {
			t.Errorf("%s was initialised", d)
		}
	}
}
