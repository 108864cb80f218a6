package stacks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/strata-iac/strata/stacks/tagquery"
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

// GitChanges lists the files changed under root since the base (docs/behaviour.md#changed-units):
// committed changes since merge-base(base, HEAD), plus staged, unstaged and
// untracked files, so that nothing in the working tree is missed. A rename
// is listed as its two paths. It shells out to git, which reads the
// repository as the user's own git does (worktrees, sparse checkouts,
// config). Files outside root are dropped; paths are relative to root.
func GitChanges(ctx context.Context, root string, opt ChangeOptions) ([]FileChange, error) {
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

// WhyDeleted is the `why` of a unit whose dir the change deleted.
const WhyDeleted = "deleted"

// DeletedUnit is a unit whose root module dir the change deleted (docs/behaviour.md#changed-units):
// listed with why `deleted`, never run.
type DeletedUnit struct {
	Dir       string
	Workspace string
	// Stack is the leaf stack the config puts the dir in; nil when it would
	// be in no stack, or in the implicit default stack that no existing
	// dirspace needs.
	Stack *Stack
	// Tags are the unit tags the dirspace would have.
	Tags []string
	// File is the first deleted Terraform file of the dir, sorted.
	File string
}

// ModifiedUnits decides which units a change modifies (docs/behaviour.md#changed-units). A file
// modifies a dirspace when some positive pattern of its file patterns
// matches the file and no `!` pattern does, or when the file is in a local
// module the dirspace calls, transitively (the file belongs to the nearest
// module dir above it, unless a root module dir is nearer: a module's
// examples/ root does not stand for the module). The reason of each unit is
// `modified: <file>`, the first such file in sorted order. Dirspaces with
// `autoplan: false` are left out. Root module dirs the change deleted are
// returned apart: they are not units any more, and never run.
func (p *Project) ModifiedUnits(changes []FileChange) (modified map[*Unit]string, deleted []DeletedUnit) {
	files := make([]string, 0, len(changes))
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		if !seen[c.Path] && !engineData(c.Path) {
			seen[c.Path] = true
			files = append(files, c.Path)
		}
	}
	sort.Strings(files)

	ix := p.changeIndex()
	first := map[*Dirspace]string{}
	mark := func(ds *Dirspace, file string) {
		if _, ok := first[ds]; !ok {
			first[ds] = file
		}
	}
	for _, f := range files {
		ix.byPatterns(f, func(ds *Dirspace) { mark(ds, f) })
		for _, ds := range ix.moduleOf(f) {
			mark(ds, f)
		}
	}
	modified = make(map[*Unit]string, len(first))
	for ds, f := range first {
		for _, u := range p.unitsOf[ds.Dir] {
			if u.Dirspace == ds {
				modified[u] = "modified: " + f
			}
		}
	}
	return modified, p.deletedUnits(changes, ix)
}

// engineData reports whether a path is in a dir the engine or strata
// writes (.terraform/, .strata/): never a source of change.
func engineData(p string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if seg == ".terraform" || seg == ".strata" {
			return true
		}
	}
	return false
}

// parentKey is the index key of the dir holding key: "a/b/c" → "a/b",
// "a" → "".
func parentKey(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return ""
}

// changeIndex finds the dirspaces a changed file can modify without trying
// every dirspace. Most dirspaces' patterns all start with their own dir
// (Terrateam's rewrite of global patterns, `${DIR}/…`): those are filed
// under their dir and their patterns expanded only when a file below the
// dir changes. The others' positive patterns are expanded up front and
// filed under the literal dir they start with ("" when they start with a
// metacharacter). A file is tested only against what is filed under one
// of its ancestors. Module dirs map to the dirs that call them.
type changeIndex struct {
	byDir    map[string][]*Dirspace
	byPrefix map[string][]*dirspacePatterns
	expanded map[*Dirspace]*dirspacePatterns
	// callers maps a local module dir to the dirs that call it.
	callers map[string][]string
	// roots are the dirs holding dirspaces.
	roots map[string]bool
	// autoplan maps a dir to its dirspaces with autoplan on.
	autoplan map[string][]*Dirspace
	// modules memoizes a module dir's transitive callers' dirspaces.
	modules map[string][]*Dirspace
}

// dirspacePatterns is a dirspace's expanded file patterns, split by sign.
type dirspacePatterns struct {
	ds *Dirspace
	filePatterns
}

func expandedPatterns(ds *Dirspace) *dirspacePatterns {
	wm := ds.WhenModified
	return &dirspacePatterns{ds: ds, filePatterns: compilePatterns(wm.FilePatterns, ds.Dir, ds.Workspace, wm.Global)}
}

// withinDir reports whether every positive pattern of a dirspace can only
// match files below its dir, judging from the patterns as written.
func withinDir(wm WhenModifiedRules) bool {
	for _, raw := range wm.FilePatterns {
		if strings.HasPrefix(raw, "!") {
			continue
		}
		switch {
		case strings.HasPrefix(raw, "${DIR}/") && !strings.Contains(raw, ".."):
		case wm.Global && (strings.HasPrefix(raw, "**/") || strings.HasPrefix(raw, "*")) && !strings.Contains(raw, ".."):
		default:
			return false
		}
	}
	return true
}

func (p *Project) changeIndex() *changeIndex {
	ix := &changeIndex{
		byDir:    map[string][]*Dirspace{},
		byPrefix: map[string][]*dirspacePatterns{},
		expanded: map[*Dirspace]*dirspacePatterns{},
		callers:  map[string][]string{},
		roots:    map[string]bool{},
		autoplan: map[string][]*Dirspace{},
		modules:  map[string][]*Dirspace{},
	}
	for _, ds := range p.Dirspaces {
		ix.roots[ds.Dir] = true
		if !ds.WhenModified.Autoplan {
			continue
		}
		ix.autoplan[ds.Dir] = append(ix.autoplan[ds.Dir], ds)
		if withinDir(ds.WhenModified) {
			key := ds.Dir
			if key == "." {
				key = ""
			}
			ix.byDir[key] = append(ix.byDir[key], ds)
			continue
		}
		e := expandedPatterns(ds)
		ix.expanded[ds] = e
		var keys []string
		for _, pat := range e.pos {
			k := parentKey(literalPrefix(pat) + "x")
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
				ix.byPrefix[k] = append(ix.byPrefix[k], e)
			}
		}
	}
	for caller, mods := range p.ModuleCalls {
		for _, m := range mods {
			ix.callers[m] = append(ix.callers[m], caller)
		}
	}
	return ix
}

// byPatterns calls fn with each dirspace whose file patterns match file.
func (ix *changeIndex) byPatterns(file string, fn func(*Dirspace)) {
	for key := file; ; key = parentKey(key) {
		for _, e := range ix.byPrefix[key] {
			if e.match(file) {
				fn(e.ds)
			}
		}
		for _, ds := range ix.byDir[key] {
			e := ix.expanded[ds]
			if e == nil {
				e = expandedPatterns(ds)
				ix.expanded[ds] = e
			}
			if e.match(file) {
				fn(ds)
			}
		}
		if key == "" {
			return
		}
	}
}

// moduleOf returns the dirspaces (autoplan on) that call, transitively,
// the local module a file belongs to: the nearest dir above the file that
// is a module dir, unless a root module dir is nearer.
func (ix *changeIndex) moduleOf(file string) []*Dirspace {
	for dir := parentKey(file); ; dir = parentKey(dir) {
		key := dir
		if key == "" {
			key = "."
		}
		if _, ok := ix.callers[key]; ok {
			return ix.callersOf(key)
		}
		if ix.roots[key] || dir == "" {
			return nil
		}
	}
}

// callersOf returns the dirspaces that call module dir m, transitively.
func (ix *changeIndex) callersOf(m string) []*Dirspace {
	if out, ok := ix.modules[m]; ok {
		return out
	}
	ix.modules[m] = nil // a call cycle ends here
	seen := map[string]bool{m: true}
	var out []*Dirspace
	queue := []string{m}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, c := range ix.callers[d] {
			if !seen[c] {
				seen[c] = true
				out = append(out, ix.autoplan[c]...)
				queue = append(queue, c)
			}
		}
	}
	ix.modules[m] = out
	return out
}

// deletedUnits finds the root module dirs a change deleted: a deleted
// Terraform file whose dir holds no dirspace and no Terraform file any
// more, is not a local module, and was a root (the file matches the global
// patterns, or the dir is an exact dirs key). Their units are rebuilt from
// the config as discovery would have built them.
func (p *Project) deletedUnits(changes []FileChange, ix *changeIndex) []DeletedUnit {
	global := DefaultFilePatterns
	if wm := p.Config.WhenModified; wm != nil && wm.FilePatterns != nil {
		global = strs(*wm.FilePatterns)
	}
	firstFile := map[string]string{}
	var dirs []string
	for _, c := range changes {
		if !c.Deleted || !isTerraformFile(path.Base(c.Path)) || hiddenPath(c.Path) {
			continue
		}
		dir := path.Dir(c.Path)
		if _, ok := firstFile[dir]; ok {
			continue
		}
		if ix.roots[dir] || len(ix.callers[dir]) > 0 || holdsTerraform(absDir(p.Root, dir)) {
			continue
		}
		_, exact := p.dirsEntry(dir)
		if !exact && !MatchFilePatterns(global, c.Path, dir, "default", true) {
			continue
		}
		firstFile[dir] = c.Path
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	var out []DeletedUnit
	for _, dir := range dirs {
		entry, _ := p.dirsEntry(dir)
		gone := &Project{Config: p.Config}
		gone.addDirspaces(dir, entry)
		for _, ds := range gone.Dirspaces {
			stacks := p.stacksOf(ds)
			if len(stacks) == 0 {
				out = append(out, DeletedUnit{Dir: dir, Workspace: ds.Workspace, Tags: ds.Tags, File: firstFile[dir]})
			}
			for _, s := range stacks {
				out = append(out, DeletedUnit{Dir: dir, Workspace: ds.Workspace, Stack: s, Tags: unitTags(ds, s), File: firstFile[dir]})
			}
		}
	}
	return out
}

func hiddenPath(p string) bool {
	for _, seg := range strings.Split(path.Dir(p), "/") {
		if seg != "." && skipDir(seg) {
			return true
		}
	}
	return false
}

func holdsTerraform(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && isTerraformFile(e.Name()) {
			return true
		}
	}
	return false
}

// dirsEntry returns the dirs entry that configures dir as discovery picks
// it: an exact key, else the longest matching glob. exact reports an exact
// key.
func (p *Project) dirsEntry(dir string) (entry *MapEntry[Dir], exact bool) {
	if p.Config.Dirs == nil {
		return nil, false
	}
	for i := range p.Config.Dirs.Entries {
		e := &p.Config.Dirs.Entries[i]
		key := strings.TrimSuffix(e.Key, "/")
		if !strings.ContainsAny(key, "*?[{") && cleanDir(key) == dir {
			return e, true
		}
	}
	for i := range p.Config.Dirs.Entries {
		e := &p.Config.Dirs.Entries[i]
		key := strings.TrimSuffix(e.Key, "/")
		if strings.ContainsAny(key, "*?[{") && matchPath(key, dir) && (entry == nil || len(e.Key) > len(entry.Key)) {
			entry = e
		}
	}
	return entry, false
}

// stacksOf returns the leaf stacks a dirspace belongs to, as membership
// (docs/behaviour.md#stacks-and-membership) decides it.
func (p *Project) stacksOf(ds *Dirspace) []*Stack {
	subject := tagquery.Subject{Tags: ds.Tags, Dir: ds.Dir}
	userDefault := p.byName[DefaultStack]
	var out []*Stack
	for _, s := range p.Stacks {
		if s.Leaf && s != userDefault && s.Query != nil && s.Query.Match(subject) {
			out = append(out, s)
		}
	}
	if len(out) > 1 && (p.Config.Stacks == nil || !p.Config.Stacks.AllowWorkspaceInMultipleStacks.Value) {
		out = out[:1]
	}
	if len(out) == 0 && userDefault != nil && userDefault.Leaf && userDefault.Query != nil && userDefault.Query.Match(subject) {
		out = append(out, userDefault)
	}
	return out
}

func unitTags(ds *Dirspace, s *Stack) []string {
	tags := append(append([]string(nil), ds.Tags...), "stack_name:"+s.Name)
	for _, level := range s.Ancestors {
		for _, a := range level {
			tags = append(tags, "stack_name:"+a.Name)
		}
	}
	return tags
}

// DeletedIn keeps the deleted units a selection covers: at or below its
// dir, and matching its --stack, --query, --dir and --workspace.
func (p *Project) DeletedIn(sel Selection, deleted []DeletedUnit) ([]DeletedUnit, error) {
	f, err := p.compileSelection(sel)
	if err != nil {
		return nil, err
	}
	var out []DeletedUnit
	for _, d := range deleted {
		if f.matches(d.Dir, d.Workspace, d.Stack, tagquery.Subject{Tags: d.Tags, Dir: d.Dir}) {
			out = append(out, d)
		}
	}
	return out, nil
}
