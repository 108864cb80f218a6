package git

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestRenames: a rename counts as both its paths, the old one deleted,
// whether committed, staged or only done in the working tree, and even
// when the repository's config asks git diff to find renames.
func TestRenames(t *testing.T) {
	dir, git := repo(t, map[string]string{
		"a/main.tf": "a", "old/main.tf": "o", "old/vars.tf": "v", "s/main.tf": "s", "w/main.tf": "w",
	})
	first := git("rev-parse", "HEAD")
	git("config", "diff.renames", "copies")
	for _, d := range []string{"b", "s2"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git("mv", "a/main.tf", "b/main.tf")
	git("mv", "old", "new")
	git("commit", "-q", "-m", "renames")
	git("mv", "s/main.tf", "s2/main.tf")
	if err := os.Rename(filepath.Join(dir, "w"), filepath.Join(dir, "w2")); err != nil {
		t.Fatal(err)
	}

	r := open(t, dir)
	want := []string{
		"D a/main.tf (deleted)", "A b/main.tf",
		"A new/main.tf", "A new/vars.tf", "D old/main.tf (deleted)", "D old/vars.tf (deleted)",
		"D s/main.tf (deleted)", "A s2/main.tf",
		"D w/main.tf (deleted)", "? w2/main.tf",
	}
	if got := changed(t, r, first); !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %q,\nwant %q", got, want)
	}
	tree, err := r.WorkingTree()
	want = []string{"D s/main.tf (deleted)", "A s2/main.tf", "D w/main.tf (deleted)", "? w2/main.tf"}
	if err != nil || !reflect.DeepEqual(paths(tree), want) {
		t.Errorf("WorkingTree = %q, %v; want %q", paths(tree), err, want)
	}
}

// TestDeletions: a file gone from the working tree is deleted whether the
// deletion is committed, staged or not; a file taken out of the index but
// still there is untracked, and one deleted in a commit and written again
// is not deleted.
func TestDeletions(t *testing.T) {
	dir, git := repo(t, map[string]string{
		"gone/main.tf": "1", "gone/sub/x.tf": "1", "back/main.tf": "1",
		"staged/main.tf": "1", "unstaged/main.tf": "1", "cached/main.tf": "1", "keep/main.tf": "1",
	})
	first := git("rev-parse", "HEAD")
	git("rm", "-q", "-r", "gone", "back")
	git("commit", "-q", "-m", "rm")
	write(t, filepath.Join(dir, "back/main.tf"), "2")
	git("rm", "-q", "staged/main.tf")
	git("rm", "-q", "--cached", "cached/main.tf")
	if err := os.Remove(filepath.Join(dir, "unstaged/main.tf")); err != nil {
		t.Fatal(err)
	}

	want := []string{
		"? back/main.tf", "? cached/main.tf",
		"D gone/main.tf (deleted)", "D gone/sub/x.tf (deleted)",
		"D staged/main.tf (deleted)", "D unstaged/main.tf (deleted)",
	}
	if got := changed(t, open(t, dir), first); !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %q,\nwant %q", got, want)
	}
}

// TestUntracked: untracked files count one by one, however deep, with
// their names as they are; ignored files and empty dirs do not; a staged
// new file is added, and the working tree's status wins over the commits'.
func TestUntracked(t *testing.T) {
	dir, git := repo(t, map[string]string{".gitignore": "*.tfstate\n.terraform/\n", "a/main.tf": "1"})
	first := git("rev-parse", "HEAD")
	write(t, filepath.Join(dir, "c/main.tf"), "1")
	git("add", "c/main.tf")
	git("commit", "-q", "-m", "c")
	write(t, filepath.Join(dir, "c/main.tf"), "2")
	write(t, filepath.Join(dir, "a/terraform.tfstate"), "state")
	write(t, filepath.Join(dir, "a/.terraform/x"), "x")
	write(t, filepath.Join(dir, "n/deep/er/x.tf"), "x")
	write(t, filepath.Join(dir, "n/y.tf"), "y")
	write(t, filepath.Join(dir, "sp ace/ü\tx.tf"), "x")
	write(t, filepath.Join(dir, "excluded/x.tf"), "x")
	write(t, filepath.Join(dir, ".git/info/exclude"), "excluded/\n")
	write(t, filepath.Join(dir, "staged/main.tf"), "1")
	git("add", "staged/main.tf")
	if err := os.MkdirAll(filepath.Join(dir, "empty/dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	r := open(t, dir)
	want := []string{"M c/main.tf", "? n/deep/er/x.tf", "? n/y.tf", "? sp ace/ü\tx.tf", "A staged/main.tf"}
	if got := changed(t, r, first); !reflect.DeepEqual(got, want) {
		t.Errorf("Changes = %q,\nwant %q", got, want)
	}
	// The working tree is read once per Repo.
	write(t, filepath.Join(dir, "later.tf"), "x")
	if got := changed(t, r, ""); !reflect.DeepEqual(got, want) {
		t.Errorf("Changes(\"\") = %q after a new file, want the first reading %q", got, want)
	}
	if got := changed(t, open(t, dir), ""); len(got) != len(want)+1 {
		t.Errorf("a new Repo: Changes(\"\") = %q, want later.tf too", got)
	}
}

// TestSubdirRoots: a project root below the top level sees its own
// changes only, relative to itself, also through a symbolic link; a sibling
// whose name starts with the root's is outside it.
func TestSubdirRoots(t *testing.T) {
	dir, git := repo(t, map[string]string{
		"infra/a/main.tf": "1", "infra/prod/b/main.tf": "1", "infra2/main.tf": "1", "app/x.tf": "1",
	})
	first := git("rev-parse", "HEAD")
	for _, p := range []string{"infra/a/main.tf", "infra/prod/b/main.tf", "infra2/main.tf", "app/x.tf"} {
		write(t, filepath.Join(dir, p), "2")
	}
	git("mv", "app/x.tf", "infra/x.tf")
	git("commit", "-q", "-am", "all")
	git("mv", "infra/a/main.tf", "app/main.tf")
	write(t, filepath.Join(dir, "infra/new.tf"), "new")
	write(t, filepath.Join(dir, "infra2/new.tf"), "new")
	write(t, filepath.Join(dir, "new.tf"), "new")

	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(dir, "infra"), link); err != nil {
		t.Fatal(err)
	}
	want := []string{"D a/main.tf (deleted)", "? new.tf", "M prod/b/main.tf", "A x.tf"}
	for _, root := range []string{filepath.Join(dir, "infra"), link} {
		if got := changed(t, open(t, root), first); !reflect.DeepEqual(got, want) {
			t.Errorf("root %s: Changes = %q,\nwant %q", root, got, want)
		}
	}
	tree, err := open(t, filepath.Join(dir, "infra", "prod")).WorkingTree()
	if err != nil || len(tree) != 0 {
		t.Errorf("root infra/prod: WorkingTree = %q, %v; want nothing", paths(tree), err)
	}
	if got, want := changed(t, open(t, filepath.Join(dir, "infra", "prod")), first), []string{"M b/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("root infra/prod: Changes = %q, want %q", got, want)
	}
}
