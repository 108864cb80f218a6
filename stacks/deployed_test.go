package stacks

import (
	"errors"
	"reflect"
	"testing"
)

// TestModifiedSinceDeployed: each unit is compared with the commit of its
// own last successful apply, units sharing a commit by one comparison.
func TestModifiedSinceDeployed(t *testing.T) {
	t.Parallel()
	root := testRepo(t, `dirs:
  quiet:
    when_modified: {autoplan: false}
`, "a", "b", "c", "d", "quiet")
	p := loadRepo(t, root)
	unit := func(dir string) *Unit { return p.unitsOf[dir][0] }
	// What differs between each commit and the working tree.
	diffs := map[string][]FileChange{
		"c1": {{Path: "a/main.tf"}, {Path: "b/main.tf"}, {Path: "gone/main.tf", Deleted: true}},
		"c2": {{Path: "a/main.tf"}},
	}
	cases := []struct {
		name     string
		deployed map[*Unit]string
		want     []string
		deleted  int
		asked    []string
	}{
		{
			name:     "each unit against its own commit",
			deployed: map[*Unit]string{unit("a"): "c2", unit("b"): "c2", unit("c"): "c1", unit("d"): "c1"},
			want:     []string{"a@default: modified: a/main.tf"},
			deleted:  1,
			asked:    []string{"c1", "c2"},
		},
		{
			name:     "a unit behind the others",
			deployed: map[*Unit]string{unit("a"): "c2", unit("b"): "c1", unit("c"): "c2", unit("d"): "c2"},
			want:     []string{"a@default: modified: a/main.tf", "b@default: modified: b/main.tf"},
			deleted:  1,
			asked:    []string{"c1", "c2"},
		},
		{
			name:     "never applied, and a commit the clone lacks",
			deployed: map[*Unit]string{unit("a"): "c2", unit("b"): "lost"},
			want:     []string{"a@default: modified: a/main.tf", "b@default: last applied at lost, which this clone does not have", "c@default: never applied", "d@default: never applied"},
			asked:    []string{"c2", "lost"},
		},
	}
	for _, tc := range cases {
		var asked []string
		modified, deleted, err := p.ModifiedSinceDeployed(tc.deployed, func(c string) ([]FileChange, error) {
			asked = append(asked, c)
			if d, ok := diffs[c]; ok {
				return d, nil
			}
			return nil, ErrCommitMissing
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := renderModified(modified); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: modified = %q, want %q", tc.name, got, tc.want)
		}
		if len(deleted) != tc.deleted || !reflect.DeepEqual(asked, tc.asked) {
			t.Errorf("%s: %d deleted, asked %q; want %d, %q", tc.name, len(deleted), asked, tc.deleted, tc.asked)
		}
	}

	boom := errors.New("git failed")
	if _, _, err := p.ModifiedSinceDeployed(map[*Unit]string{unit("a"): "c1"}, func(string) ([]FileChange, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a failed comparison: %v", err)
	}
}

// TestDependentsOfDeleted: what waited for a deleted root module runs.
// The first case is Terrateam's own layered-run fixture (no stacks: one
// default stack): dev/networking deleted, dev/database runs.
func TestDependentsOfDeleted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  string
		dirs []string
		want []string
	}{
		{
			name: "depends_on in the default stack",
			cfg: `dirs:
  dev/database:
    when_modified: {depends_on: 'dir:dev/networking'}
  dev/compute:
    when_modified: {depends_on: 'dir:dev/database'}
`,
			dirs: []string{"dev/database", "dev/compute", "prod/database"},
			want: []string{"dev/database@default: depends_on: dev/networking@default (deleted)"},
		},
		{
			name: "modified_by the deleted unit's stack",
			cfg: `stacks:
  names:
    network: {tag_query: 'dir:net/**'}
    app:
      tag_query: 'dir:app'
      rules: {modified_by: [network]}
    other: {tag_query: 'dir:other'}
`,
			dirs: []string{"net/a", "app", "other"},
			want: []string{"app@default: modified_by: network"},
		},
		{
			name: "depends_on stays inside its stack",
			cfg: `dirs:
  app:
    when_modified: {depends_on: 'dir:dev/networking'}
stacks:
  names:
    network: {tag_query: 'dir:dev/networking'}
    app: {tag_query: 'dir:app'}
`,
			dirs: []string{"app"},
			want: []string{},
		},
	}
	for _, tc := range cases {
		p := loadRepo(t, testRepo(t, tc.cfg, tc.dirs...))
		deleted := []FileChange{{Path: "dev/networking/main.tf", Status: "D", Deleted: true}, {Path: "net/b/main.tf", Status: "D", Deleted: true}}
		_, gone := p.ModifiedUnits(deleted)
		if len(gone) == 0 {
			t.Fatalf("%s: no deleted unit", tc.name)
		}
		if got := renderModified(p.DependentsOfDeleted(gone)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
