package git

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

// forked makes a repository with a bare origin and the branch feature
// checked out: feature changed a/main.tf after it forked from main at
// commit fork, and main, pushed to origin since, changed b/main.tf.
func forked(t *testing.T) (dir string, git func(...string) string, fork string) {
	t.Helper()
	dir, git = repo(t, map[string]string{"a/main.tf": "1", "b/main.tf": "1"})
	origin := filepath.Join(t.TempDir(), "origin.git")
	git("init", "-q", "--bare", origin)
	git("remote", "add", "origin", origin)
	fork = git("rev-parse", "HEAD")
	git("checkout", "-q", "-b", "feature")
	write(t, filepath.Join(dir, "a/main.tf"), "feature")
	git("commit", "-q", "-am", "feature")
	git("checkout", "-q", "main")
	write(t, filepath.Join(dir, "b/main.tf"), "main")
	git("commit", "-q", "-am", "main moves on")
	git("push", "-q", "origin", "main")
	git("checkout", "-q", "feature")
	return dir, git, fork
}

type baseCase struct {
	name    string
	opt     ChangeOptions
	from    string
	perUnit bool
}

func checkBase(t *testing.T, r *Repo, cases []baseCase) {
	t.Helper()
	for _, tc := range cases {
		from, perUnit, err := r.Base(tc.opt)
		if err != nil || from != tc.from || perUnit != tc.perUnit {
			t.Errorf("%s: Base = %q, %v, %v; want %q, %v", tc.name, from, perUnit, err, tc.from, tc.perUnit)
		}
	}
}

// TestMergeBase: on a branch, committed changes count from where it forked
// from the base, so what the base branch changed since is not the
// branch's change.
func TestMergeBase(t *testing.T) {
	dir, git, fork := forked(t)
	r := open(t, dir)
	ci := map[string]string{"CI": "true"}
	checkBase(t, r, []baseCase{
		{"local, origin/main", ChangeOptions{Env: env(nil)}, fork, false},
		{"pull request build", ChangeOptions{Env: env(ci)}, fork, false},
		{"GITHUB_BASE_REF", ChangeOptions{Env: env(map[string]string{"CI": "true", "GITHUB_BASE_REF": "main"})}, fork, false},
		{"CI_MERGE_REQUEST_TARGET_BRANCH_NAME", ChangeOptions{Env: env(map[string]string{"CI": "true", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"})}, fork, false},
		{"--base origin/main", ChangeOptions{Base: "origin/main", Env: env(ci)}, fork, false},
		{"--base main", ChangeOptions{Base: "main", Env: env(nil)}, fork, false},
	})
	want := []string{"M a/main.tf"}
	if got := changed(t, r, fork); !reflect.DeepEqual(got, want) {
		t.Errorf("Changes(merge base) = %q, want %q", got, want)
	}
	got, err := Changes(context.Background(), dir, ChangeOptions{Env: env(ci)})
	if err != nil || !reflect.DeepEqual(paths(got), want) {
		t.Errorf("Changes = %q, %v; want %q", paths(got), err, want)
	}
	// Compared with the tip of main instead, main's own change would count.
	tip := git("rev-parse", "origin/main")
	if got, want := changed(t, r, tip), []string{"M a/main.tf", "M b/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes(origin/main) = %q, want %q", got, want)
	}
}

// TestBaseOrder: --base, then the CI's target branch (GitHub's first),
// then origin/HEAD, origin/main and origin/master.
func TestBaseOrder(t *testing.T) {
	dir, git, fork := forked(t)
	// origin/HEAD names a branch at feature's own commit.
	git("push", "-q", "origin", "feature:release")
	git("remote", "set-head", "origin", "release")
	r := open(t, dir)
	checkBase(t, r, []baseCase{
		{"origin/HEAD before origin/main", ChangeOptions{Env: env(nil)}, "", false},
		{"origin/HEAD is HEAD in CI", ChangeOptions{Env: env(map[string]string{"CI": "1"})}, fork, true},
		{"an empty GITHUB_BASE_REF is not set", ChangeOptions{Env: env(map[string]string{"GITHUB_BASE_REF": ""})}, "", false},
		{"GITHUB_BASE_REF before origin/HEAD", ChangeOptions{Env: env(map[string]string{"GITHUB_BASE_REF": "main"})}, fork, false},
		{"GITHUB_BASE_REF before GitLab's", ChangeOptions{Env: env(map[string]string{
			"GITHUB_BASE_REF": "main", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "release"})}, fork, false},
		{"GitLab's target branch", ChangeOptions{Env: env(map[string]string{
			"CI": "true", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "release"})}, fork, true},
		{"--base before the CI's", ChangeOptions{Base: "origin/release", Env: env(map[string]string{
			"CI": "true", "GITHUB_BASE_REF": "main"})}, "", false},
	})

	// With only origin/master, that is the base.
	dir, git = repo(t, map[string]string{"a/main.tf": "1"})
	first := git("rev-parse", "HEAD")
	origin := filepath.Join(t.TempDir(), "origin.git")
	git("init", "-q", "--bare", origin)
	git("remote", "add", "origin", origin)
	git("push", "-q", "origin", "main:master")
	write(t, filepath.Join(dir, "a/main.tf"), "2")
	git("commit", "-q", "-am", "two")
	checkBase(t, open(t, dir), []baseCase{{"origin/master", ChangeOptions{Env: env(nil)}, first, false}})
}

// TestFirstCommitPushBuild: a push build of a repository's first commit
// compares it with the empty tree, so every file counts.
func TestFirstCommitPushBuild(t *testing.T) {
	dir, git := repo(t, map[string]string{"a/main.tf": "1", "b/x.tf": "1"})
	origin := filepath.Join(t.TempDir(), "origin.git")
	git("init", "-q", "--bare", origin)
	git("remote", "add", "origin", origin)
	git("push", "-q", "origin", "main")
	r := open(t, dir)
	from, perUnit, err := r.Base(ChangeOptions{Env: env(map[string]string{"CI": "true"})})
	if err != nil || !perUnit || from == "" || r.Has(from) {
		t.Fatalf("Base = %q, %v, %v; want the empty tree, per unit", from, perUnit, err)
	}
	if got, want := changed(t, r, from), []string{"A a/main.tf", "A b/x.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Changes(empty tree) = %q, want %q", got, want)
	}
}

// TestBaseErrors: a base that cannot be found says what to do; strata
// never falls back to selecting everything.
func TestBaseErrors(t *testing.T) {
	dir, git := repo(t, map[string]string{"a/main.tf": "1"})
	r := open(t, dir)
	_, _, err := r.Base(ChangeOptions{Env: env(nil)})
	wantErr(t, "no remote", err, "no base to compare with: tried origin/HEAD, origin/main and origin/master (the repository has no remote origin); give one with --base REF")
	_, _, err = r.Base(ChangeOptions{Base: "nosuch", Env: env(nil)})
	wantErr(t, "--base nosuch", err, "--base nosuch: no such commit in this clone; fetch it first")

	git("remote", "add", "origin", filepath.Join(t.TempDir(), "origin.git"))
	_, _, err = r.Base(ChangeOptions{Env: env(nil)})
	wantErr(t, "nothing fetched", err, "(none of them exists)")
	_, _, err = r.Base(ChangeOptions{Env: env(map[string]string{"GITHUB_BASE_REF": "nosuch"})})
	wantErr(t, "GITHUB_BASE_REF not fetched", err, "base origin/nosuch (from $GITHUB_BASE_REF) is not in this clone; fetch it with git fetch origin nosuch")
	_, _, err = r.Base(ChangeOptions{Env: env(map[string]string{"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "nosuch"})})
	wantErr(t, "GitLab's target not fetched", err, "(from $CI_MERGE_REQUEST_TARGET_BRANCH_NAME)")

	git("checkout", "-q", "--orphan", "other")
	git("commit", "-q", "-m", "unrelated")
	_, _, err = open(t, dir).Base(ChangeOptions{Base: "main", Env: env(nil)})
	wantErr(t, "unrelated history", err, "main and HEAD share no history; choose a base with --base REF")

	empty := t.TempDir()
	git("init", "-q", empty)
	_, err = Open(context.Background(), empty)
	wantErr(t, "no commit", err, "HEAD has no commit yet")
	if _, err := Head(context.Background(), empty); err == nil {
		t.Error("Head of a repository with no commit: no error")
	}
	if id, err := Head(context.Background(), filepath.Join(dir, "a")); err != nil || id != git("rev-parse", "HEAD") {
		t.Errorf("Head = %q, %v", id, err)
	}
}
