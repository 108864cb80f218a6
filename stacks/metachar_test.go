package stacks

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// metaDirs are dir names holding what doublestar reads as pattern syntax.
// Pasted unescaped into the default file patterns they describe other
// names (e[1] is e1, c{d} is cd), so the decoys beside them are what an
// unescaped pattern would match instead.
var metaDirs = []string{`c{d}`, `e[1]`, `x${y}`, `*`, `?`, `!n`, `a\b`, `q{r,s}`, `x${WORKSPACE}`}

// TestMetacharacterDirs: every dir holding Terraform files is a root
// module whatever its name, a change to a file in one modifies that unit
// and no other, a deleted one is reported, and its expanded file patterns
// match its own files.
func TestMetacharacterDirs(t *testing.T) {
	dirs := append([]string{"e1", "cd", "plain", "n"}, metaDirs...)
	// A dirs key names such a dir by escaping it, as any glob would.
	root := testRepo(t, `dirs:
  'e\[1\]':
    tags: [bracket]
    when_modified:
      file_patterns: ["${DIR}/*.tf", "${DIR}/extra.yml"]
`, dirs...)
	p := loadRepo(t, root)

	var got []string
	for _, ds := range p.Dirspaces {
		got = append(got, ds.Dir)
	}
	want := append([]string(nil), dirs...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("root modules = %q, want every dir holding .tf files: %q", got, want)
	}
	if us := p.UnitsIn(`e[1]`); len(us) != 1 || !slices.Contains(us[0].Dirspace.Tags, "bracket") {
		t.Errorf(`e[1]: the dirs key 'e\[1\]' did not give its tag: %v`, us)
	}

	for _, dir := range metaDirs {
		modified, deleted := p.ModifiedUnits([]FileChange{{Path: dir + "/main.tf", Status: "M"}})
		want := []string{dir + "@default: modified: " + dir + "/main.tf"}
		if got := renderModified(modified); !reflect.DeepEqual(got, want) || len(deleted) != 0 {
			t.Errorf("change to %s/main.tf: modified = %q, deleted = %q; want %q", dir, got, renderDeleted(deleted), want)
		}
		// The content digest matches files with these patterns.
		pats := p.UnitsIn(dir)[0].Dirspace.FilePatterns()
		if !slices.ContainsFunc(pats, func(pat string) bool { ok, _ := doublestar.Match(pat, dir+"/main.tf"); return ok }) {
			t.Errorf("%s: no file pattern of %q matches its own main.tf", dir, pats)
		}
	}
	modified, _ := p.ModifiedUnits([]FileChange{{Path: "e[1]/extra.yml", Status: "M"}})
	if got, want := renderModified(modified), []string{"e[1]@default: modified: e[1]/extra.yml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("change to e[1]/extra.yml: modified = %q, want %q", got, want)
	}

	// A deleted dir with such a name is still a deleted root module.
	modified, deleted := p.ModifiedUnits([]FileChange{{Path: "gone{1}/main.tf", Status: "D", Deleted: true}})
	if got, want := renderDeleted(deleted), []string{"gone{1}@default#default (gone{1}/main.tf)"}; !reflect.DeepEqual(got, want) || len(modified) != 0 {
		t.Errorf("deleted gone{1}: deleted = %q, modified = %q; want %q", got, renderModified(modified), want)
	}
}
