// Package git reads what changed in a repository since a base, for
// --changed (docs/behaviour.md#changed-units). It runs git itself, which
// reads the repository as the user's own git does (worktrees, sparse
// checkouts, config).
package git

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
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

// BaseApplied is the --base that compares each unit with the commit of
// its own last successful apply (docs/behaviour.md#changed-units).
const BaseApplied = "applied"

// Repo is a git work tree that --changed reads, opened once per command:
// the top level, where the project root sits in it, and HEAD.
type Repo struct {
	g      gitRepo
	prefix string // the project root relative to the top level, "" at the top
	head   string
	// tree memoizes WorkingTree: every comparison of a command adds the
	// same uncommitted files.
	tree []FileChange
}

// Open opens the git work tree holding root, which must have a commit.
//
// One git process answers both questions: the top level, then HEAD's
// commit, which a repository without a commit leaves out (every command
// that applies or records its history opens it, so a second process
// would be paid by each).
func Open(ctx context.Context, root string) (*Repo, error) {
	g := gitRepo{ctx: ctx, dir: root}
	out, err := g.output("rev-parse", "--show-toplevel", "--verify", "--quiet", "--end-of-options", "HEAD^{commit}")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if out == "" {
		if err == nil {
			err = errors.New("git rev-parse printed nothing")
		}
		return nil, fmt.Errorf("--changed needs a git repository: %s: %w", root, err)
	}
	prefix, perr := subdirOf(filepath.FromSlash(lines[0]), root)
	if perr != nil {
		return nil, perr
	}
	g.dir = lines[0]
	if err != nil || len(lines) != 2 || lines[1] == "" {
		return nil, errors.New("--changed: HEAD has no commit yet; commit first, or list what to run with --dir or --stack")
	}
	return &Repo{g: g, prefix: prefix, head: lines[1]}, nil
}

// Top is the work tree's top level.
func (r *Repo) Top() string { return r.g.dir }

// Head is the commit checked out.
func (r *Repo) Head() string { return r.head }

// Shallow reports whether the clone is shallow.
func (r *Repo) Shallow() bool { return r.g.shallow() }

// Has reports whether a commit is in this clone.
func (r *Repo) Has(id string) bool {
	_, ok := r.g.commit(id)
	return ok
}

// Base says where the committed changes of --changed are counted from
// (docs/behaviour.md#changed-units). from is the commit to compare HEAD
// with, "" when only the working tree counts (a fresh local branch).
// perUnit is true when each unit is to be compared with the commit of its
// own last successful apply instead: --base applied, or a push build of
// the base branch (CI set, no --base, the merge base is HEAD); from is
// then HEAD^1 (or the empty tree for a first commit), the fallback when
// the run state records no such commit.
func (r *Repo) Base(opt ChangeOptions) (from string, perUnit bool, err error) {
	env := opt.Env
	if env == nil {
		env = os.Getenv
	}
	if opt.Base == BaseApplied {
		from, err := r.parent()
		return from, true, err
	}
	base, baseID, err := r.g.base(opt.Base, env)
	if err != nil {
		return "", false, err
	}
	mb, err := r.g.mergeBase(base, baseID, r.head)
	if err != nil {
		return "", false, err
	}
	switch {
	case mb != r.head:
		return mb, false, nil
	case opt.Base != "" || !isSet(env("CI")):
		// A fresh local branch: nothing is committed on it yet.
		return "", false, nil
	}
	from, err = r.parent()
	return from, true, err
}

// parent is HEAD^1: what the last commit (a merge, usually) brought in;
// the empty tree for the first commit.
func (r *Repo) parent() (string, error) {
	if parent, ok := r.g.commit("HEAD^1"); ok {
		return parent, nil
	}
	if r.g.shallow() {
		return "", errors.New("--changed: HEAD^1 is not in this shallow clone; fetch it with git fetch --deepen=1 (or fetch-depth: 2 in actions/checkout)")
	}
	empty, err := r.g.output("hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(empty), nil
}

// Changes lists the files that differ between commit from and the working
// tree: committed since from (compared as trees, so from need not be an
// ancestor of HEAD), then staged, unstaged and untracked files. from ""
// lists the working tree's changes only. A rename is listed as its two
// paths. Files outside the project root are dropped; paths are relative
// to it, sorted.
func (r *Repo) Changes(from string) ([]FileChange, error) {
	status := map[string]string{}
	if from != "" {
		if err := r.g.nameStatus(status, from, "HEAD"); err != nil {
			return nil, err
		}
	}
	tree, err := r.WorkingTree()
	if err != nil {
		return nil, err
	}
	out := make([]FileChange, 0, len(status)+len(tree))
	inTree := make(map[string]bool, len(tree))
	for _, c := range tree {
		inTree[c.Path] = true
	}
	for p, st := range status {
		// The working tree's status wins over the commits'.
		if rel, ok := underPrefix(p, r.prefix); ok && !inTree[rel] {
			out = append(out, FileChange{Path: rel, Status: st, Deleted: r.gone(p)})
		}
	}
	out = append(out, tree...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// WorkingTree lists the files that differ from HEAD in the working tree:
// staged, unstaged and untracked, relative to the project root.
func (r *Repo) WorkingTree() ([]FileChange, error) {
	if r.tree != nil {
		return r.tree, nil
	}
	status := map[string]string{}
	if err := r.g.nameStatus(status, "HEAD"); err != nil {
		return nil, err
	}
	untracked, err := r.g.output("ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	for _, p := range splitNUL(untracked) {
		status[p] = "?"
	}
	out := make([]FileChange, 0, len(status))
	for p, st := range status {
		if rel, ok := underPrefix(p, r.prefix); ok {
			out = append(out, FileChange{Path: rel, Status: st, Deleted: r.gone(p)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	r.tree = out
	return out, nil
}

// gone reports whether a top-level-relative path is missing from the
// working tree.
func (r *Repo) gone(p string) bool {
	_, err := os.Lstat(filepath.Join(r.g.dir, filepath.FromSlash(p)))
	return errors.Is(err, os.ErrNotExist)
}

// Changes lists the files changed under root since the base of --changed
// (docs/behaviour.md#changed-units), one comparison for every unit:
// committed changes since merge-base(base, HEAD) (on a push build of the
// base branch, since HEAD^1), plus staged, unstaged and untracked files,
// so that nothing in the working tree is missed. It shells out to git,
// which reads the repository as the user's own git does (worktrees,
// sparse checkouts, config).
func Changes(ctx context.Context, root string, opt ChangeOptions) ([]FileChange, error) {
	if opt.Base == BaseApplied {
		return nil, errors.New("--base applied compares each unit with its own last applied commit; it needs the run state")
	}
	r, err := Open(ctx, root)
	if err != nil {
		return nil, err
	}
	from, _, err := r.Base(opt)
	if err != nil {
		return nil, err
	}
	return r.Changes(from)
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
		// What it printed before it failed is returned too (Open).
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return stdout.String(), fmt.Errorf("git %s: %s", args[0], msg)
		}
		return stdout.String(), fmt.Errorf("git %s: %w", args[0], err)
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
			// The refspec names the remote-tracking branch: a clone of
			// one branch fetches no other into origin/ by itself.
			fetch := "git fetch origin " + branch + ":refs/remotes/" + ref
			if g.shallow() {
				fetch = "git fetch --unshallow origin " + branch + ":refs/remotes/" + ref + " (or fetch-depth: 0 in actions/checkout)"
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

// mergeBase is the merge base of the base and HEAD.
func (g gitRepo) mergeBase(base, baseID, head string) (string, error) {
	out, err := g.output("merge-base", baseID, head)
	mb := strings.TrimSpace(out)
	if err != nil || mb == "" {
		if g.shallow() {
			return "", fmt.Errorf("--changed: no merge base of %s and HEAD: the clone is shallow; fetch history with git fetch --unshallow (or fetch-depth: 0 in actions/checkout)", base)
		}
		return "", fmt.Errorf("--changed: %s and HEAD share no history; choose a base with --base REF", base)
	}
	return mb, nil
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

// Files lists the files of a dir (relative to the project root) at a
// commit, relative to the project root; none when the commit has no such
// dir. The dir is a literal path, never a pattern.
func (r *Repo) Files(commit, dir string) ([]string, error) {
	out, err := r.g.output("ls-tree", "-r", "-z", "--name-only", "--full-tree", "--end-of-options", commit, "--", literal(path.Join(r.prefix, dir)))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range splitNUL(out) {
		if rel, ok := underPrefix(p, r.prefix); ok {
			files = append(files, rel)
		}
	}
	return files, nil
}

// FileAt reads a file (relative to the project root) as it is at commit.
func (r *Repo) FileAt(commit, p string) ([]byte, error) {
	if strings.HasPrefix(commit, "-") {
		return nil, fmt.Errorf("git cat-file: %q is no commit", commit)
	}
	out, err := r.g.output("cat-file", "blob", commit+":"+path.Join(r.prefix, p))
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// literal makes a path a pathspec that matches that path alone: a dir
// named `*` is no pattern.
func literal(p string) string { return ":(literal)" + p }

// ArchivedFile is a regular file of a commit.
type ArchivedFile struct {
	Path string // relative to the project root, "/"-separated
	Exec bool   // the executable bit
	Data []byte
}

// Archive reads the regular files of dirs (relative to the project root)
// as they are at commit: what a root module a change deleted had, to be
// put back and destroyed from its own config
// (docs/behaviour.md#deleted-dirs-put-back). Symbolic links and
// submodules are left out.
func (r *Repo) Archive(commit string, dirs []string) ([]ArchivedFile, error) {
	if strings.HasPrefix(commit, "-") {
		// git archive takes no --end-of-options: a commit is never an option.
		return nil, fmt.Errorf("git archive: %q is no commit", commit)
	}
	args := []string{"archive", "--format=tar", commit, "--"}
	for _, d := range dirs {
		args = append(args, literal(path.Join(r.prefix, d)))
	}
	out, err := r.g.output(args...)
	if err != nil {
		return nil, err
	}
	var files []ArchivedFile
	tr := tar.NewReader(strings.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("git archive %s: %w", commit, err)
		}
		rel, ok := underPrefix(strings.TrimSuffix(h.Name, "/"), r.prefix)
		if !ok || rel == "" || h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("git archive %s: %w", commit, err)
		}
		files = append(files, ArchivedFile{Path: rel, Exec: h.FileInfo().Mode()&0o111 != 0, Data: data})
	}
}

// ShortID is a commit id as people read it: its first 12 digits.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// CommitID reports whether s is a whole commit ID as git prints it: 40
// (SHA-1) or 64 (SHA-256) lowercase hex digits.
func CommitID(s string) bool { return (len(s) == 40 || len(s) == 64) && lowerHex(s) }

// CommitPrefix reports whether s names a commit as an abbreviated or
// whole SHA-1 ID does: 7 to 40 lowercase hex digits.
func CommitPrefix(s string) bool { return len(s) >= 7 && len(s) <= 40 && lowerHex(s) }

// lowerHex reports whether s is lowercase hex digits only.
func lowerHex(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && (r < 'a' || r > 'f') }) < 0
}
