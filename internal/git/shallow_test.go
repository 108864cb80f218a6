package git

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// history makes a repository to clone: main has three commits (a/main.tf
// changed in each after the first), feature forked from the second and
// added b/main.tf. It returns the dir and the second commit.
func history(t *testing.T) (src, second string) {
	t.Helper()
	src, git := repo(t, map[string]string{"a/main.tf": "1", "c/main.tf": "1"})
	write(t, filepath.Join(src, "a/main.tf"), "2")
	git("commit", "-q", "-am", "two")
	second = git("rev-parse", "HEAD")
	git("checkout", "-q", "-b", "feature")
	write(t, filepath.Join(src, "b/main.tf"), "1")
	git("add", "-A")
	git("commit", "-q", "-m", "feature")
	git("checkout", "-q", "main")
	write(t, filepath.Join(src, "a/main.tf"), "3")
	git("commit", "-q", "-am", "three")
	return src, second
}

// clone clones src over file:// (so that --depth holds) into a new temp
// dir with git clone's extra args.
func clone(t *testing.T, src string, args ...string) (string, func(...string) string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	args = append(append([]string{"clone", "-q"}, args...), "file://"+filepath.ToSlash(src), dir)
	testenv.Git(t, src, args...)
	return dir, func(a ...string) string {
		t.Helper()
		return testenv.Git(t, dir, a...)
	}
}

var ciPush = ChangeOptions{Env: env(map[string]string{"CI": "true"})}

// TestShallowPushBuild: a push build compares with HEAD^1, which a clone
// of depth 1 lacks: that is an error naming the fetch, not a run of
// everything. Depth 2 is enough.
func TestShallowPushBuild(t *testing.T) {
	src, second := history(t)
	full, _ := clone(t, src)
	if r := open(t, full); r.Shallow() {
		t.Error("a full clone is shallow")
	}

	dir, git := clone(t, src, "--depth", "1")
	r := open(t, dir)
	if !r.Shallow() || r.Has(second) {
		t.Errorf("depth 1: Shallow %v, Has(HEAD^1) %v", r.Shallow(), r.Has(second))
	}
	const hint = "HEAD^1 is not in this shallow clone; fetch it with git fetch --deepen=1 (or fetch-depth: 2 in actions/checkout)"
	_, _, err := r.Base(ciPush)
	wantErr(t, "push build", err, hint)
	_, _, err = r.Base(ChangeOptions{Base: BaseApplied})
	wantErr(t, "--base applied", err, hint)
	_, err = Changes(context.Background(), dir, ciPush)
	wantErr(t, "Changes", err, hint)
	if _, err := r.Changes(second); err == nil {
		t.Error("Changes from a commit the clone lacks: no error")
	}
	// Locally, on the base branch itself, only the working tree counts.
	checkBase(t, r, []baseCase{{"local", ChangeOptions{Env: env(nil)}, "", false}})
	write(t, filepath.Join(dir, "a/main.tf"), "4")
	write(t, filepath.Join(dir, "d/new.tf"), "new")
	if got, want := changed(t, r, ""), []string{"M a/main.tf", "? d/new.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes(\"\") = %q, want %q", got, want)
	}

	// What the hint says is enough.
	git("fetch", "-q", "--deepen=1")
	checkBase(t, open(t, dir), []baseCase{{"push build after --deepen=1", ciPush, second, true}})
	deep, _ := clone(t, src, "--depth", "2")
	r = open(t, deep)
	checkBase(t, r, []baseCase{{"push build at depth 2", ciPush, second, true}})
	if got, want := changed(t, r, second), []string{"M a/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes(HEAD^1) = %q, want %q", got, want)
	}
}

// TestShallowBranch: a branch and its base fetched at depth 1 share no
// commit; the error says to fetch history, and after that the merge base
// counts.
func TestShallowBranch(t *testing.T) {
	src, second := history(t)
	dir, git := clone(t, src, "--depth", "1", "--no-single-branch")
	git("checkout", "-q", "feature")
	pr := ChangeOptions{Env: env(map[string]string{"CI": "true", "GITHUB_BASE_REF": "main"})}
	_, _, err := open(t, dir).Base(pr)
	wantErr(t, "depth 1", err, "no merge base of origin/main and HEAD: the clone is shallow; fetch history with git fetch --unshallow (or fetch-depth: 0 in actions/checkout)")

	git("fetch", "-q", "--unshallow")
	r := open(t, dir)
	if r.Shallow() {
		t.Error("still shallow after --unshallow")
	}
	checkBase(t, r, []baseCase{{"unshallowed", pr, second, false}})
	if got, want := changed(t, r, second), []string{"A b/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes(merge base) = %q, want %q", got, want)
	}
}

// TestShallowBaseNotFetched: a clone as actions/checkout makes it (one
// branch at depth 1, git's default fetch refspec) lacks the base branch;
// the error names the fetch that brings it, and that fetch is enough.
func TestShallowBaseNotFetched(t *testing.T) {
	src, second := history(t)
	dir := t.TempDir()
	git := func(args ...string) string { t.Helper(); return testenv.Git(t, dir, args...) }
	git("init", "-q")
	git("remote", "add", "origin", "file://"+filepath.ToSlash(src))
	git("fetch", "-q", "--depth=1", "origin", "+refs/heads/feature:refs/remotes/origin/feature")
	git("checkout", "-q", "-b", "feature", "origin/feature")
	pr := ChangeOptions{Env: env(map[string]string{"CI": "true", "GITHUB_BASE_REF": "main"})}
	_, _, err := open(t, dir).Base(pr)
	wantErr(t, "base not fetched", err,
		"base origin/main (from $GITHUB_BASE_REF) is not in this clone; fetch it with git fetch --unshallow origin main:refs/remotes/origin/main (or fetch-depth: 0 in actions/checkout)")
	git("fetch", "-q", "--unshallow", "origin", "main:refs/remotes/origin/main")
	checkBase(t, open(t, dir), []baseCase{{"after the fetch", pr, second, false}})
}

// TestShallowSingleBranchHint: in a clone made with git clone --depth 1
// --branch feature, the fetch refspec covers feature only; the fetch the
// error names creates origin/main all the same, and is enough.
func TestShallowSingleBranchHint(t *testing.T) {
	src, second := history(t)
	dir, git := clone(t, src, "--depth", "1", "--branch", "feature")
	pr := ChangeOptions{Env: env(map[string]string{"CI": "true", "GITHUB_BASE_REF": "main"})}
	_, _, err := open(t, dir).Base(pr)
	wantErr(t, "base not fetched", err, "fetch it with git fetch --unshallow origin main:refs/remotes/origin/main")
	git("fetch", "-q", "--unshallow", "origin", "main:refs/remotes/origin/main")
	checkBase(t, open(t, dir), []baseCase{{"after the fetch the error names", pr, second, false}})
}
