package stacks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// projectShape is what a project built from a tree must share with one
// built by reading the repository.
func projectShape(p *Project) string {
	var b strings.Builder
	for _, u := range p.Units {
		fmt.Fprintf(&b, "unit %s modules=%v digest-files=%v\n", u.ID(), p.LocalModules(u.Dir), u.Dirspace.WhenModified)
	}
	for _, s := range p.Stacks {
		fmt.Fprintf(&b, "stack %s %v\n", s.Name, s.Path)
	}
	for _, d := range p.Diagnostics {
		fmt.Fprintf(&b, "diag %s\n", d)
	}
	return b.String()
}

// A project built from the tree of another load of the same repository,
// passed through JSON as the state bucket holds it, is the same project,
// and is built without reading the repository: the same tree gives the
// same units under an empty root.
func TestLoadFromTree(t *testing.T) {
	root, err := filepath.Abs("../fixtures/nested")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, config.StrataConfigFile)
	want := loadRepo(t, root)
	if len(want.ModuleCalls) == 0 {
		t.Fatal("the fixture calls no local module: the test would not cover calls")
	}
	b, err := json.Marshal(want.Tree())
	if err != nil {
		t.Fatal(err)
	}
	tree := &Tree{}
	if err := json.Unmarshal(b, tree); err != nil {
		t.Fatal(err)
	}
	called := 0
	got, err := LoadFrom(root, cfg, func() (*Tree, error) { called++; return tree, nil })
	if err != nil {
		t.Fatal(err)
	}
	if called != 1 {
		t.Fatalf("tree asked %d times; expected once", called)
	}
	if !reflect.DeepEqual(got.ModuleCalls, want.ModuleCalls) {
		t.Errorf("module calls %v; read from the repository: %v", got.ModuleCalls, want.ModuleCalls)
	}
	if g, w := projectShape(got), projectShape(want); g != w {
		t.Errorf("built from the tree:\n%s\nread from the repository:\n%s", g, w)
	}

	empty := t.TempDir()
	elsewhere, err := LoadFrom(empty, cfg, func() (*Tree, error) { return tree, nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(elsewhere.Units) != len(want.Units) {
		t.Errorf("under an empty root the tree gave %d units; expected %d, as it is not read again", len(elsewhere.Units), len(want.Units))
	}
	scanned, err := LoadFrom(empty, cfg, func() (*Tree, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(scanned.Units) != 0 {
		t.Errorf("a nil tree gave %d units under an empty root; expected the root read (none)", len(scanned.Units))
	}
}

// A config with errors is reported as Load reports it: the tree is not
// asked for, so a bucket is not read for a run that cannot start.
func TestLoadFromTreeConfigError(t *testing.T) {
	root := testRepo(t, "bogus: 1\n")
	_, err := LoadFrom(root, filepath.Join(root, config.StrataConfigFile), func() (*Tree, error) {
		t.Fatal("tree asked for with a config in error")
		return nil, nil
	})
	if _, ok := err.(*config.Error); !ok {
		t.Fatalf("err = %v; expected the config's errors", err)
	}
}

// A tree from the bucket is checked before any of it becomes a path.
func TestTreeFromOutside(t *testing.T) {
	t.Parallel()
	ok := TreeDir{Dir: "a", Files: []string{"main.tf"}}
	cases := []struct {
		name string
		dirs []TreeDir
		want string
	}{
		{"parent", []TreeDir{{Dir: "../x", Files: []string{"main.tf"}}}, `dir "../x"`},
		{"parent alone", []TreeDir{{Dir: "..", Files: []string{"main.tf"}}}, `dir ".."`},
		{"absolute", []TreeDir{{Dir: "/etc", Files: []string{"main.tf"}}}, `dir "/etc"`},
		{"unclean", []TreeDir{{Dir: "a/../../b", Files: []string{"main.tf"}}}, `dir "a/../../b"`},
		{"empty", []TreeDir{{Dir: "", Files: []string{"main.tf"}}}, `dir ""`},
		{"hidden", []TreeDir{{Dir: ".git/hooks", Files: []string{"main.tf"}}}, `dir ".git/hooks"`},
		{"unsorted", []TreeDir{{Dir: "b", Files: []string{"main.tf"}}, ok}, `after "b"`},
		{"twice", []TreeDir{ok, ok}, `after "a"`},
		{"no files", []TreeDir{{Dir: "a"}}, "without files"},
		{"file path", []TreeDir{{Dir: "a", Files: []string{"../b/main.tf"}}}, `file "../b/main.tf"`},
		{"not terraform", []TreeDir{{Dir: "a", Files: []string{"run.sh"}}}, `file "run.sh"`},
		{"call outside", []TreeDir{{Dir: "a", Files: []string{"main.tf"}, Calls: []string{"../m"}}}, `calling "../m"`},
		{"call absolute", []TreeDir{{Dir: "a", Files: []string{"main.tf"}, Calls: []string{"/m"}}}, `calling "/m"`},
	}
	root := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadFrom(root, "", func() (*Tree, error) { return &Tree{Dirs: tc.dirs}, nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; expected one naming %s", err, tc.want)
			}
		})
	}
	calls := []TreeDir{{Dir: ".", Files: []string{"main.tf"}, Calls: []string{".modules/x"}}, {Dir: "a", Files: []string{".x.tf", "main.tf"}}}
	if _, err := LoadFrom(root, "", func() (*Tree, error) { return &Tree{Dirs: calls}, nil }); err != nil {
		t.Errorf("a call into a hidden dir and a hidden file, both as a scan finds them: %v", err)
	}
}

// FuzzTree feeds arbitrary bytes to a project built from a tree, as a CI
// job reads one from the bucket: a tree either is refused with an error or
// gives units whose dirs and module calls are clean paths inside the root;
// never a panic.
func FuzzTree(f *testing.F) {
	f.Add([]byte(`{"dirs":[{"dir":".","files":["main.tf"]},{"dir":"a/b","files":["x.tf","y.tf.json"],"calls":["modules/m"]}]}`))
	f.Add([]byte(`{"dirs":[{"dir":"../x","files":["main.tf"]}]}`))
	f.Add([]byte(`{"dirs":[{"dir":"a","files":["main.tf"],"calls":["../../etc"]}]}`))
	f.Add([]byte(`{"dirs":[{"dir":"a\\..\\..\\b","files":["main.tf"]}]}`))
	f.Add([]byte(`{"dirs":null}`))
	root := f.TempDir()
	cfg := filepath.Join(root, config.StrataConfigFile)
	if err := os.WriteFile(cfg, []byte("stacks: {names: {all: {tag_query: 'dir:**'}}}\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree := &Tree{}
		if err := json.Unmarshal(data, tree); err != nil {
			return
		}
		p, err := LoadFrom(root, cfg, func() (*Tree, error) { return tree, nil })
		if err != nil {
			return
		}
		for _, u := range p.Units {
			if u.Dir != "." && !filepath.IsLocal(filepath.FromSlash(u.Dir)) {
				t.Fatalf("unit dir %q leaves the root", u.Dir)
			}
			for _, m := range p.LocalModules(u.Dir) {
				if m != "." && !filepath.IsLocal(filepath.FromSlash(m)) {
					t.Fatalf("module dir %q of %s leaves the root", m, u.Dir)
				}
			}
		}
	})
}
