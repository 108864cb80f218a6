package stacks

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// readsRepo has a dir in two workspaces reading a file of its own, two
// units calling a module that calls another reading through path.root, a
// unit whose read cannot be resolved, and one with autoplan off.
func readsRepo(t *testing.T) *Project {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		config.StrataConfigFile: "dirs:\n  ws:\n    workspaces: {dev: {}, prod: {}}\n  off:\n    when_modified: {autoplan: false}\n",
		"ws/main.tf":            "locals {\n  a = file(\"${path.module}/data/${terraform.workspace}.json\")\n  b = file(\"data/common.json\")\n}\n",
		"a/main.tf":             "module \"outer\" {\n  source = \"../modules/outer\"\n}\n",
		"b/main.tf":             "module \"o\" {\n  source = \"../modules/outer\"\n}\n",
		"modules/outer/main.tf": "module \"inner\" {\n  source = \"../inner\"\n}\n",
		"modules/inner/main.tf": "output \"x\" {\n  value = [file(\"${path.root}/root.txt\"), fileset(path.module, \"t/*.tpl\")]\n}\n",
		"var/main.tf":           "variable \"p\" {}\nlocals {\n  a = file(var.p)\n}\n",
		"off/main.tf":           "locals {\n  a = file(\"../shared/x.json\")\n}\n",
	}
	for rel, content := range files {
		testenv.WriteFile(t, filepath.Join(root, filepath.FromSlash(rel)), content)
	}
	return loadRepo(t, root)
}

func TestModifiedUnitsReads(t *testing.T) {
	t.Parallel()
	p := readsRepo(t)
	tests := []struct {
		file string
		want []string
	}{
		{"ws/data/common.json", []string{
			"ws@dev: modified: ws/data/common.json (read by ws/main.tf:3)",
			"ws@prod: modified: ws/data/common.json (read by ws/main.tf:3)"}},
		// terraform.workspace is known only to the engine: no read.
		{"ws/data/dev.json", []string{}},
		{"a/root.txt", []string{"a@default: modified: a/root.txt (module outer.inner of a)"}},
		{"b/root.txt", []string{"b@default: modified: b/root.txt (module o.inner of b)"}},
		{"modules/inner/t/new.tpl", []string{
			"a@default: modified: modules/inner/t/new.tpl (module outer.inner of a)",
			"b@default: modified: modules/inner/t/new.tpl (module o.inner of b)"}},
		// A file of the module that it does not read modifies its
		// callers as before.
		{"modules/inner/README.md", []string{"a@default: modified: modules/inner/README.md", "b@default: modified: modules/inner/README.md"}},
		{"shared/x.json", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			modified, _ := p.ModifiedUnits([]FileChange{{Path: tc.file, Status: "M"}})
			if got := renderModified(modified); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("modified = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadDiagnostics(t *testing.T) {
	t.Parallel()
	p := readsRepo(t)
	var got []string
	for _, d := range p.ReadDiagnostics() {
		got = append(got, d.String())
	}
	want := []string{
		"var/main.tf:3:7: warning: file() reads a path strata cannot know without evaluating it (it refers to var.p, known only when the engine evaluates it), so a change to that file modifies no unit; name the file in when_modified.file_patterns",
		"ws/main.tf:2:7: warning: file() reads a path strata cannot know without evaluating it (it refers to terraform.workspace, known only when the engine evaluates it), so a change to that file modifies no unit; name the file in when_modified.file_patterns",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics:\n%q\nwant\n%q", got, want)
	}
}

func TestReadPatterns(t *testing.T) {
	t.Parallel()
	p := readsRepo(t)
	if got, want := p.ReadPatterns("a"), []string{"a/root.txt", `modules/inner/t/*.tpl`}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadPatterns(a) = %q, want %q", got, want)
	}
}

// TestReadThroughALinkOutside: a read whose path goes through a symbolic
// link out of the repository is left out of the digest's patterns and is
// a check warning.
func TestReadThroughALinkOutside(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	testenv.WriteFile(t, filepath.Join(outside, "secret.json"), "{}\n")
	testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), "locals {\n  a = file(\"../shared/secret.json\")\n  b = file(\"../in/x.json\")\n}\n")
	if err := os.Symlink(outside, filepath.Join(root, "shared")); err != nil {
		t.Fatal(err)
	}
	p := loadRepo(t, root)
	if got, want := p.ReadPatterns("app"), []string{"in/x.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadPatterns = %q, want %q", got, want)
	}
	var got []string
	for _, d := range p.ReadDiagnostics() {
		got = append(got, d.String())
	}
	want := []string{"app/main.tf:2:7: warning: file() reads a path outside the repository (shared/secret.json resolves through a symbolic link outside the repository); strata does not follow it"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics = %q, want %q", got, want)
	}
}

// TestReadPatternsConcurrently: the units of a run take their digests at
// once; each dir is parsed once and the answers agree.
func TestReadPatternsConcurrently(t *testing.T) {
	t.Parallel()
	p := readsRepo(t)
	want := []string{fmt.Sprint(p.ReadPatterns("a")), fmt.Sprint(p.ReadPatterns("b"))}
	p = readsRepo(t)
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = fmt.Sprint(p.ReadPatterns([]string{"a", "b"}[i%2]))
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != want[i%2] {
			t.Errorf("ReadPatterns(%s) = %s, want %s", []string{"a", "b"}[i%2], g, want[i%2])
		}
	}
}
