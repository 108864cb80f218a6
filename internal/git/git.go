// Package git reads what changed in a repository since a base, for
// --changed (docs/behaviour.md#changed-units). It runs git itself, which
// reads the repository as the user's own git does (worktrees, sparse
// checkouts, config).
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// FileChange is one file that differs from the base of --changed (docs/behaviour.md#changed-units).
type FileChange struct {
	Path string // relative to the project root, "/"-separated
	// Status is git's letter for the change (A, M, D, T, U, …), or "?" for
	// an untracked file. When the file changed both in commits and in the
	// working tree, the working tree's status wins.
	Status string
	// Deleted is true when the file is gone from the working tree.
	Deleted bool
}

// ChangeOptions say where --changed starts from.
type ChangeOptions struct {
	// Base is --base: the ref to compare with. Empty: from the CI's
	// environment, else the remote's default branch.
	Base string
	// Env reads the environment (GITHUB_BASE_REF,
	// CI_MERGE_REQUEST_TARGET_BRANCH_NAME, CI); nil means os.Getenv.
	Env func(string) string
}

// remoteDefaults are tried in order when neither --base nor a CI variable
// names the base.
var remoteDefaults = []string{"origin/HEAD", "origin/main", "origin/master"}

// Changes lists the files changed under root since the base (docs/behaviour.md#changed-units):
// committed changes since merge-base(base, HEAD), plus staged, unstaged and
// untracked files, so that nothing in the working tree is missed. A rename
// is listed as its two paths. It shells out to git, which reads the
// repository as the user's own git does (worktrees, sparse checkouts,
// config). Files outside root are dropped; paths are relative to root.
func Changes(ctx context.Context, root string, opt ChangeOptions) ([]FileChange, error) {
	env := opt.Env
	if env == nil {
		env = os.Getenv
	}
	g := gitRepo{ctx: ctx, dir: root}
	top, err := g.output("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("--changed needs a git repository: %s: %w", root, err)
	}
	top = strings.TrimSpace(top)
	prefix, err := subdirOf(filepath.FromSlash(top), root)
	if err != nil {
		return nil, err
	}
	g.dir = top
	head, ok := g.commit("HEAD")
	if !ok {
		return nil, errors.New("--changed: HEAD has no commit yet; commit first, or list what to run with --dir or --stack")
	}
	base, baseID, err := g.base(opt.Base, env)
	if err != nil {
		return nil, err
	}
	from, err := g.since(base, baseID, head, opt.Base == "" && isSet(env("CI")))
	if err != nil {
		return nil, err
	}

	status := map[string]string{}
	if from != "" {
		if err := g.nameStatus(status, from, "HEAD"); err != nil {
			return nil, err
		}
	}
	// The working tree against HEAD: staged and unstaged together.
	if err := g.nameStatus(status, "HEAD"); err != nil {
		return nil, err
	}
	untracked, err := g.output("ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	for _, p := range splitNUL(untracked) {
		status[p] = "?"
	}

	out := make([]FileChange, 0, len(status))
	for p, st := range status {
		rel, ok := underPrefix(p, prefix)
		if !ok {
			continue
		}
		_, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		out = append(out, FileChange{Path: rel, Status: st, Deleted: errors.Is(err, os.ErrNotExist)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// gitRepo runs git in one directory.
type gitRepo struct {
	ctx context.Context
	dir string
}

// output runs git and returns its stdout; a failure carries git's stderr.
func (g gitRepo) output(args ...string) (string, error) {
	cmd := exec.CommandContext(g.ctx, "git", args...)
	cmd.Dir = g.dir
	// strata only reads: never take the index lock to refresh stat data.
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], msg)
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.String(), nil
}

// commit resolves ref to a commit id, reporting whether it exists here.
func (g gitRepo) commit(ref string) (string, bool) {
	out, err := g.output("rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(out), true
}

func (g gitRepo) shallow() bool {
	out, err := g.output("rev-parse", "--is-shallow-repository")
	return err == nil && strings.TrimSpace(out) == "true"
}

// base picks the ref to compare with: --base, the CI's target branch, else
// the remote's default branch. It returns the ref and its commit.
func (g gitRepo) base(flag string, env func(string) string) (ref, id string, err error) {
	if flag != "" {
		id, ok := g.commit(flag)
		if !ok {
			return "", "", fmt.Errorf("--base %s: no such commit in this clone; fetch it first (git fetch origin <branch>)", flag)
		}
		return flag, id, nil
	}
	for _, v := range []string{"GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"} {
		branch := env(v)
		if branch == "" {
			continue
		}
		ref := "origin/" + branch
		id, ok := g.commit(ref)
		if !ok {
			fetch := "git fetch origin " + branch
			if g.shallow() {
				fetch = "git fetch --unshallow origin " + branch + " (or fetch-depth: 0 in actions/checkout)"
			}
			return "", "", fmt.Errorf("--changed: base %s (from $%s) is not in this clone; fetch it with %s", ref, v, fetch)
		}
		return ref, id, nil
	}
	for _, ref := range remoteDefaults {
		if id, ok := g.commit(ref); ok {
			return ref, id, nil
		}
	}
	why := "none of them exists"
	if _, err := g.output("config", "--get", "remote.origin.url"); err != nil {
		why = "the repository has no remote origin"
	}
	return "", "", fmt.Errorf("--changed: no base to compare with: tried %s and %s (%s); give one with --base REF",
		strings.Join(remoteDefaults[:len(remoteDefaults)-1], ", "), remoteDefaults[len(remoteDefaults)-1], why)
}

// since returns the commit committed changes are counted from, or "" when
// only the working tree counts. ciPush is true when --base was not given and
// CI is set.
func (g gitRepo) since(base, baseID, head string, ciPush bool) (string, error) {
	out, err := g.output("merge-base", baseID, head)
	mb := strings.TrimSpace(out)
	if err != nil || mb == "" {
		if g.shallow() {
			return "", fmt.Errorf("--changed: no merge base of %s and HEAD: the clone is shallow; fetch history with git fetch --unshallow (or fetch-depth: 0 in actions/checkout)", base)
		}
		return "", fmt.Errorf("--changed: %s and HEAD share no history; choose a base with --base REF", base)
	}
	if mb != head {
		return mb, nil
	}
	if !ciPush {
		// A fresh local branch: nothing is committed on it yet.
		return "", nil
	}
	// A push build on the base branch: what the last commit (a merge,
	// usually) brought in.
	if parent, ok := g.commit("HEAD^1"); ok {
		return parent, nil
	}
	if g.shallow() {
		return "", errors.New("--changed: HEAD^1 is not in this shallow clone; fetch it with git fetch --deepen=1 (or fetch-depth: 2 in actions/checkout)")
	}
	// The first commit: every file in it is new.
	empty, err := g.output("hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(empty), nil
}

// nameStatus adds the files of `git diff --name-status` between revs (one
// rev: against the working tree) to status. Renames are split into their
// two paths.
func (g gitRepo) nameStatus(status map[string]string, revs ...string) error {
	args := append([]string{"diff", "--name-status", "-z", "--no-renames", "--no-ext-diff"}, revs...)
	out, err := g.output(append(args, "--")...)
	if err != nil {
		return err
	}
	fields := splitNUL(out)
	for i := 0; i < len(fields); {
		st := fields[i]
		n := 1
		if st != "" && (st[0] == 'R' || st[0] == 'C') {
			n = 2
		}
		if i+n >= len(fields) {
			return fmt.Errorf("git diff: unexpected output after %q", st)
		}
		for _, p := range fields[i+1 : i+1+n] {
			status[p] = st[:1]
		}
		i += 1 + n
	}
	return nil
}

func splitNUL(s string) []string {
	s = strings.TrimSuffix(s, "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

func isSet(v string) bool {
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// subdirOf returns root relative to the git top level ("" when it is the
// top level), comparing real paths.
func subdirOf(top, root string) (string, error) {
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return "", err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(realTop, realRoot)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("--changed: %s is not inside the git work tree %s", root, top)
	}
	if rel == "." {
		return "", nil
	}
	return filepath.ToSlash(rel), nil
}

// underPrefix makes a top-level-relative path relative to the project
// root, reporting false for a path outside it.
func underPrefix(p, prefix string) (string, bool) {
	if prefix == "" {
		return p, true
	}
	if !strings.HasPrefix(p, prefix+"/") {
		return "", false
	}
	return p[len(prefix)+1:], true
}

// Head returns the commit checked out in the repository at dir; an error
// where there is none (not a repository, no commit yet).
func Head(ctx context.Context, dir string) (string, error) {
	id, ok := gitRepo{ctx: ctx, dir: dir}.commit("HEAD")
	if !ok {
		return "", errors.New("no commit checked out")
	}
	return id, nil
}
