package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// repo makes a git repository in a temp dir with one commit of files, and
// returns a function running git there with a fixed identity and none of
// the user's config.
func repo(t *testing.T, files map[string]string) (string, func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		return testenv.Git(t, dir, args...)
	}
	run("init", "-q")
	for p, c := range files {
		write(t, filepath.Join(dir, p), c)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	return dir, run
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func paths(cs []FileChange) []string {
	out := []string{}
	for _, c := range cs {
		s := c.Status + " " + c.Path
		if c.Deleted {
			s += " (deleted)"
		}
		out = append(out, s)
	}
	return out
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestBase: where --changed counts committed changes from, and when each
// unit is compared with its own last applied commit instead.
func TestBase(t *testing.T) {
	dir, git := repo(t, map[string]string{"a/main.tf": "1", "b/main.tf": "1"})
	first := git("rev-parse", "HEAD")
	origin := filepath.Join(t.TempDir(), "origin.git")
	git("init", "-q", "--bare", origin)
	git("remote", "add", "origin", origin)
	write(t, filepath.Join(dir, "a/main.tf"), "2")
	git("commit", "-q", "-am", "a")
	second := git("rev-parse", "HEAD")
	git("push", "-q", "origin", "main")

	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		opt     ChangeOptions
		from    string
		perUnit bool
	}{
		{"local on the base branch", ChangeOptions{Env: env(nil)}, "", false},
		{"push build", ChangeOptions{Env: env(map[string]string{"CI": "true"})}, first, true},
		{"CI=false is no CI", ChangeOptions{Env: env(map[string]string{"CI": "false"})}, "", false},
		{"--base given in CI", ChangeOptions{Base: "HEAD", Env: env(map[string]string{"CI": "true"})}, "", false},
		{"--base applied", ChangeOptions{Base: BaseApplied, Env: env(nil)}, first, true},
		{"--base an older commit", ChangeOptions{Base: first, Env: env(nil)}, first, false},
	}
	for _, tc := range cases {
		from, perUnit, err := r.Base(tc.opt)
		if err != nil || from != tc.from || perUnit != tc.perUnit {
			t.Errorf("%s: Base = %q, %v, %v; want %q, %v", tc.name, from, perUnit, err, tc.from, tc.perUnit)
		}
	}
	if r.Head() != second || !r.Has(first) || r.Has(strings.Repeat("0", 40)) {
		t.Errorf("Head %s, Has(first) %v", r.Head(), r.Has(first))
	}
}

// TestChangesBetweenTrees: a commit is compared with HEAD as trees, so a
// commit that is no ancestor of HEAD (a branch applied before it was
// merged, a rewritten history) gives what differs; the working tree's
// changes always count and win over the commits'.
func TestChangesBetweenTrees(t *testing.T) {
	dir, git := repo(t, map[string]string{"a/main.tf": "1", "b/main.tf": "1", "c/main.tf": "1"})
	git("checkout", "-q", "-b", "side")
	write(t, filepath.Join(dir, "b/main.tf"), "side")
	git("commit", "-q", "-am", "side")
	side := git("rev-parse", "HEAD")
	git("checkout", "-q", "main")
	write(t, filepath.Join(dir, "a/main.tf"), "2")
	git("rm", "-q", "c/main.tf")
	git("commit", "-q", "-am", "main")
	write(t, filepath.Join(dir, "a/main.tf"), "3")
	write(t, filepath.Join(dir, "d/new.tf"), "new")

	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Changes(side)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"M a/main.tf", "M b/main.tf", "D c/main.tf (deleted)", "? d/new.tf"}
	if !reflect.DeepEqual(paths(got), want) {
		t.Errorf("Changes(side) = %q, want %q", paths(got), want)
	}
	tree, err := r.WorkingTree()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"M a/main.tf", "? d/new.tf"}; !reflect.DeepEqual(paths(tree), want) {
		t.Errorf("WorkingTree = %q, want %q", paths(tree), want)
	}
	only, err := r.Changes("")
	if err != nil || !reflect.DeepEqual(paths(only), paths(tree)) {
		t.Errorf(`Changes("") = %q, %v`, paths(only), err)
	}
}

// TestChangesUnderSubdir: a project root below the top level sees only
// its own files, relative to itself.
func TestChangesUnderSubdir(t *testing.T) {
	dir, git := repo(t, map[string]string{"infra/a/main.tf": "1", "app/x.go": "1"})
	first := git("rev-parse", "HEAD")
	write(t, filepath.Join(dir, "infra/a/main.tf"), "2")
	write(t, filepath.Join(dir, "app/x.go"), "2")
	git("commit", "-q", "-am", "both")
	r, err := Open(context.Background(), filepath.Join(dir, "infra"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Changes(first)
	if want := []string{"M a/main.tf"}; err != nil || !reflect.DeepEqual(paths(got), want) {
		t.Errorf("Changes = %q, %v; want %q", paths(got), err, want)
	}
}

// TestOpen: a work tree opened from a dir below its top level knows its
// top level, where the dir sits in it, and HEAD's commit; a dir outside
// any repository, and a repository without a commit, say so.
func TestOpen(t *testing.T) {
	dir, git := repo(t, map[string]string{"a/b/main.tf": "1"})
	r, err := Open(context.Background(), filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := filepath.EvalSymlinks(dir)
	gotTop, _ := filepath.EvalSymlinks(r.Top())
	if head := strings.TrimSpace(git("rev-parse", "HEAD")); r.Head() != head || gotTop != top || r.prefix != "a" {
		t.Errorf("top %s, prefix %q, head %s; want %s, \"a\", %s", r.Top(), r.prefix, r.Head(), top, head)
	}
	empty := t.TempDir()
	testenv.Git(t, empty, "init", "-q")
	if _, err := Open(context.Background(), empty); err == nil || !strings.Contains(err.Error(), "HEAD has no commit yet") {
		t.Errorf("a repository without a commit: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "needs a git repository") || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("not a repository: %v", err)
	}
	dir, _ := repo(t, map[string]string{"a/main.tf": "1"})
	if _, err := Changes(context.Background(), dir, ChangeOptions{Base: BaseApplied}); err == nil || !strings.Contains(err.Error(), "needs the run state") {
		t.Errorf("Changes with --base applied: %v", err)
	}
}

// TestArchive: a deleted dir's files are read as they were at a commit,
// with its subdirs, and a dir name is never a pattern.
func TestArchive(t *testing.T) {
	t.Parallel()
	dir, git := repo(t, map[string]string{"infra/old/main.tf": "old", "infra/old/sub/x.tf": "x", "infra/keep/main.tf": "1", "infra/o*/y.tf": "y"})
	first := git("rev-parse", "HEAD")
	git("rm", "-q", "-r", "infra/old")
	git("commit", "-q", "-m", "rm")
	root := filepath.Join(dir, "infra")
	r, err := Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := r.Files(first, "old")
	if want := []string{"old/main.tf", "old/sub/x.tf"}; err != nil || !reflect.DeepEqual(files, want) {
		t.Errorf("Files = %q, %v; want %q", files, err, want)
	}
	if files, err := r.Files(first, "o*"); err != nil || !reflect.DeepEqual(files, []string{"o*/y.tf"}) {
		t.Errorf("Files of o* = %q, %v", files, err)
	}
	archived, err := r.Archive(first, []string{"old"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range archived {
		got[f.Path] = string(f.Data)
	}
	if want := map[string]string{"old/main.tf": "old", "old/sub/x.tf": "x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Archive = %q, want %q", got, want)
	}
	if archived, err := r.Archive(first, []string{"o*"}); err != nil || len(archived) != 1 || archived[0].Path != "o*/y.tf" {
		t.Errorf("Archive of o* = %+v, %v", archived, err)
	}
	if _, err := r.Archive("--output=x", []string{"old"}); err == nil {
		t.Error("Archive took an option for a commit")
	}
}

// open opens the repository at dir, failing the test when it cannot.
func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// changed is paths(r.Changes(from)), failing the test on an error.
func changed(t *testing.T, r *Repo, from string) []string {
	t.Helper()
	cs, err := r.Changes(from)
	if err != nil {
		t.Fatalf("Changes(%q): %v", from, err)
	}
	return paths(cs)
}

// wantErr fails the test unless err's message holds every part.
func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one saying %q", what, parts)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not say %q", what, err, p)
		}
	}
}

var underPrefixCases = []struct {
	p, prefix, rel string
	ok             bool
}{
	{"a/main.tf", "", "a/main.tf", true},
	{"infra/a/main.tf", "infra", "a/main.tf", true},
	{"infra2/main.tf", "infra", "", false},
	{"infra", "infra", "", false},
	{"x/infra/a.tf", "infra", "", false},
	{"infra/prod/b.tf", "infra/prod", "b.tf", true},
}

func TestUnderPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range underPrefixCases {
		if rel, ok := underPrefix(tc.p, tc.prefix); rel != tc.rel || ok != tc.ok {
			t.Errorf("underPrefix(%q, %q) = %q, %v; want %q, %v", tc.p, tc.prefix, rel, ok, tc.rel, tc.ok)
		}
	}
}

func TestSmallHelpers(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, "true": true, "1": true, "yes": true} {
		if isSet(v) != want {
			t.Errorf("isSet(%q) = %v", v, !want)
		}
	}
	for s, want := range map[string][]string{"": nil, "\x00": nil, "a\x00": {"a"}, "a\x00b c\x00": {"a", "b c"}} {
		if got := splitNUL(s); !reflect.DeepEqual(got, want) {
			t.Errorf("splitNUL(%q) = %q, want %q", s, got, want)
		}
	}
	for id, want := range map[string]string{"": "", "abc": "abc", strings.Repeat("f", 40): strings.Repeat("f", 12)} {
		if got := ShortID(id); got != want {
			t.Errorf("ShortID(%q) = %q, want %q", id, got, want)
		}
	}
}
