package stacks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModuleAt: a module in the project is read once and kept, the same
// each time; one outside it is read when asked.
func TestModuleAt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, text := range map[string]string{
		"strata.yml":        "dirs:\n  app: {}\n",
		"app/main.tf":       "module \"m\" {\n  source = \"../modules/m\"\n}\n",
		"modules/m/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(root, filepath.Join(root, "strata.yml"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.ModuleAt(filepath.Join(root, "app"))
	if err != nil || a.ModuleCalls["m"] == nil {
		t.Fatalf("app: %v, %+v", err, a)
	}
	if again, _ := p.ModuleAt(filepath.Join(root, "app")); again != a {
		t.Error("app was read again")
	}
	if m, err := p.ModuleAt(filepath.Join(root, "modules", "m")); err != nil || m.ManagedResources["terraform_data.x"] == nil {
		t.Errorf("modules/m: %v, %+v", err, m)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "main.tf"), []byte("output \"o\" { value = 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, err := p.ModuleAt(outside); err != nil || o.Outputs["o"] == nil {
		t.Errorf("outside: %v, %+v", err, o)
	}
}
