package config

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// model is the package the config is resolved into
// (docs/architecture.md#stacksconfig): the config must not reach up into it.
const model = "github.com/strata-iac/strata/stacks"

// TestConfigDoesNotImportModel: no file of this package, tests included,
// imports stacks, and nothing this package builds on does either.
func TestConfigDoesNotImportModel(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path := strings.Trim(imp.Path.Value, `"`); path == model {
				t.Errorf("%s imports %s", fset.Position(imp.Pos()), path)
			}
		}
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "list", "-deps", "-test", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no packages")
	}
	for _, dep := range deps {
		if dep == model {
			t.Errorf("%s is among this package's dependencies", model)
		}
	}
}
