package stacks

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/testenv"
)

// branchedFixture: main has the base commit A and B (db), origin/release
// is A, and feature (from B) commits app then net.
func branchedFixture(t *testing.T) *gitFixture {
	f := newGitFixture(t, changesRepo())
	f.git("checkout", "-q", "main")
	f.git("push", "-q", "origin", "main:release")
	f.write(map[string]string{"db/main.tf": "# B\n"})
	f.commit("B")
	f.git("push", "-q", "origin", "main")
	f.git("checkout", "-q", "-B", "feature")
	f.write(map[string]string{"app/main.tf": "# C\n"})
	f.commit("C")
	f.write(map[string]string{"net/main.tf": "# D\n"})
	f.commit("D")
	f.git("fetch", "-q", "origin")
	return f
}

// changesCase is one comparison: git.Changes with base and env, and the
// changes it finds, rendered.
type changesCase struct {
	name string
	base string
	env  map[string]string
	want []string
}

// checkChanges runs each case as a subtest in f's work tree.
func (f *gitFixture) checkChanges(t *testing.T, cases []changesCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { f.wantChanges(t, tc.base, tc.env, tc.want) })
	}
}

// wantChanges checks the changes git.Changes finds with base and env.
func (f *gitFixture) wantChanges(t *testing.T, base string, env map[string]string, want []string) {
	t.Helper()
	got, err := f.changes(base, env)
	if err != nil {
		t.Fatal(err)
	}
	if r := renderChanges(got); !reflect.DeepEqual(r, want) {
		t.Errorf("changes = %q, want %q", r, want)
	}
}

func TestGitChangesBase(t *testing.T) {
	f := branchedFixture(t)
	f.checkChanges(t, []changesCase{
		{"origin/main when origin/HEAD is absent", "", nil, []string{"M app/main.tf", "M net/main.tf"}},
		{"--base", "HEAD~1", nil, []string{"M net/main.tf"}},
		{"--base wins over the CI's variables", "HEAD~1", map[string]string{"GITHUB_BASE_REF": "release"}, []string{"M net/main.tf"}},
		{"GITHUB_BASE_REF", "", map[string]string{"GITHUB_BASE_REF": "release"}, []string{"M app/main.tf", "M db/main.tf", "M net/main.tf"}},
		{"CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "", map[string]string{"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "release"}, []string{"M app/main.tf", "M db/main.tf", "M net/main.tf"}},
		{"--base HEAD: only the working tree", "HEAD", map[string]string{"CI": "true"}, []string{}},
	})
	t.Run("origin/HEAD first", func(t *testing.T) {
		f.git("remote", "set-head", "origin", "release")
		f.wantChanges(t, "", nil, []string{"M app/main.tf", "M db/main.tf", "M net/main.tf"})
	})
	t.Run("origin/master", func(t *testing.T) {
		g := newGitFixture(t, changesRepo())
		g.git("push", "-q", "origin", "main:master")
		g.git("fetch", "-q", "origin")
		g.git("update-ref", "-d", "refs/remotes/origin/main")
		g.write(map[string]string{"db/main.tf": "# x\n"})
		g.commit("x")
		g.wantChanges(t, "", nil, []string{"M db/main.tf"})
	})
	t.Run("unknown --base", func(t *testing.T) {
		_, err := f.changes("nope", nil)
		if err == nil || !strings.Contains(err.Error(), "--base nope: no such commit in this clone") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestGitChangesOnTheBaseBranch: HEAD is the merge base. A CI push build
// takes HEAD^1; anywhere else only the working tree counts.
func TestGitChangesOnTheBaseBranch(t *testing.T) {
	f := newGitFixture(t, changesRepo())
	f.git("checkout", "-q", "main")
	f.write(map[string]string{"db/main.tf": "# merged\n"})
	f.commit("merge")
	f.git("push", "-q", "origin", "main")
	f.write(map[string]string{"app/new.tf": "# local\n"})

	f.checkChanges(t, []changesCase{
		{"CI push build", "", map[string]string{"CI": "true"}, []string{"? app/new.tf", "M db/main.tf"}},
		{"local", "", nil, []string{"? app/new.tf"}},
		{"CI=false is local", "", map[string]string{"CI": "false"}, []string{"? app/new.tf"}},
		{"CI with --base", "origin/main", map[string]string{"CI": "true"}, []string{"? app/new.tf"}},
	})

	t.Run("CI push build of the first commit", func(t *testing.T) {
		g := newGitFixture(t, map[string]string{"a/main.tf": "", "README.md": ""})
		g.git("checkout", "-q", "main")
		g.wantChanges(t, "", map[string]string{"CI": "1"}, []string{"A README.md", "A a/main.tf"})
	})
}

func TestGitChangesFreshBranch(t *testing.T) {
	f := newGitFixture(t, changesRepo())
	f.write(map[string]string{"app/main.tf": "# edited\n", "net/extra.tf": "# new\n"})
	f.wantChanges(t, "", nil, []string{"M app/main.tf", "? net/extra.tf"})
	f.git("checkout", "-q", "--", ".")
	if err := os.Remove(filepath.Join(f.work, "net", "extra.tf")); err != nil {
		t.Fatal(err)
	}
	got, err := f.changes("", nil)
	if err != nil || len(got) != 0 {
		t.Errorf("clean fresh branch: %q, %v", renderChanges(got), err)
	}
}

func TestGitChangesShallowClone(t *testing.T) {
	f := branchedFixture(t)
	f.git("push", "-q", "origin", "feature")
	top := filepath.Dir(f.work)
	url := "file://" + filepath.ToSlash(f.origin)

	t.Run("base not fetched", func(t *testing.T) {
		dir := filepath.Join(top, "pr")
		gitRun(t, top, "clone", "-q", "--depth", "1", "--branch", "feature", url, dir)
		_, err := git.Changes(context.Background(), dir, git.ChangeOptions{Env: envOf(map[string]string{"GITHUB_BASE_REF": "main"})})
		if err == nil || !strings.Contains(err.Error(), "base origin/main (from $GITHUB_BASE_REF) is not in this clone; fetch it with git fetch --unshallow origin main") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no merge base", func(t *testing.T) {
		dir := filepath.Join(top, "pr2")
		gitRun(t, top, "clone", "-q", "--depth", "1", "--branch", "feature", url, dir)
		gitRun(t, dir, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
		_, err := git.Changes(context.Background(), dir, git.ChangeOptions{Env: envOf(map[string]string{"GITHUB_BASE_REF": "main"})})
		if err == nil || !strings.Contains(err.Error(), "no merge base of origin/main and HEAD: the clone is shallow; fetch history with git fetch --unshallow") {
			t.Errorf("err = %v", err)
		}
		// Once history is fetched, the same clone works.
		gitRun(t, dir, "fetch", "-q", "--unshallow", "origin", "main:refs/remotes/origin/main")
		got, err := git.Changes(context.Background(), dir, git.ChangeOptions{Env: envOf(map[string]string{"GITHUB_BASE_REF": "main"})})
		if err != nil {
			t.Fatal(err)
		}
		if r, want := renderChanges(got), []string{"M app/main.tf", "M net/main.tf"}; !reflect.DeepEqual(r, want) {
			t.Errorf("changes = %q, want %q", r, want)
		}
	})
	t.Run("CI push build without HEAD^1", func(t *testing.T) {
		dir := filepath.Join(top, "push")
		gitRun(t, top, "clone", "-q", "--depth", "1", "--branch", "main", url, dir)
		_, err := git.Changes(context.Background(), dir, git.ChangeOptions{Env: envOf(map[string]string{"CI": "true"})})
		if err == nil || !strings.Contains(err.Error(), "HEAD^1 is not in this shallow clone; fetch it with git fetch --deepen=1") {
			t.Errorf("err = %v", err)
		}
	})
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestGitChangesWithoutBase(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q")
	testenv.WriteFile(t, filepath.Join(dir, "a", "main.tf"), "")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "a")
	_, err := git.Changes(context.Background(), dir, git.ChangeOptions{Env: envOf(nil)})
	want := "--changed: no base to compare with: tried origin/HEAD, origin/main and origin/master (the repository has no remote origin); give one with --base REF"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	got, err := git.Changes(context.Background(), dir, git.ChangeOptions{Base: "HEAD", Env: envOf(nil)})
	if err != nil || len(got) != 0 {
		t.Errorf("--base HEAD: %q, %v", renderChanges(got), err)
	}

	_, err = git.Changes(context.Background(), t.TempDir(), git.ChangeOptions{Env: envOf(nil)})
	if err == nil || !strings.Contains(err.Error(), "--changed needs a git repository") {
		t.Errorf("outside git: %v", err)
	}
	empty := t.TempDir()
	gitRun(t, empty, "init", "-q")
	_, err = git.Changes(context.Background(), empty, git.ChangeOptions{Env: envOf(nil)})
	if err == nil || !strings.Contains(err.Error(), "HEAD has no commit yet") {
		t.Errorf("no commit: %v", err)
	}
}

// TestGitChangesRootBelowTopLevel: the strata root is a subdir of the
// repository; paths are relative to it and files outside it are dropped.
func TestGitChangesRootBelowTopLevel(t *testing.T) {
	f := newGitFixture(t, map[string]string{"infra/app/main.tf": "", "docs/index.md": "", "infra/notes.md": ""})
	f.write(map[string]string{"infra/app/main.tf": "# x\n", "docs/index.md": "x\n", "infra/app/extra.tf": "", "docs/new.md": ""})
	f.commit("both")
	got, err := git.Changes(context.Background(), filepath.Join(f.work, "infra"), git.ChangeOptions{Env: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if r, want := renderChanges(got), []string{"A app/extra.tf", "M app/main.tf"}; !reflect.DeepEqual(r, want) {
		t.Errorf("changes = %q, want %q", r, want)
	}
}
