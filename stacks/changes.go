package stacks

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/stacks/config"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// FileChange is one file that differs from the base of --changed.
type FileChange = git.FileChange

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
	// Commit is a commit the dir is in: the one the change was compared
	// with (set by the caller of ModifiedUnits; ModifiedSinceDeployed sets
	// it).
	Commit string
}

// ModifiedUnits decides which units a change modifies (docs/behaviour.md#changed-units). A file
// modifies a dirspace when some positive pattern of its file patterns
// matches the file and no `!` pattern does, or when the file is in a local
// module the dirspace calls, transitively (the file belongs to the nearest
// module dir above it, unless a root module dir is nearer: a module's
// examples/ root does not stand for the module), or when the dirspace or
// one of those modules reads it (docs/behaviour.md#files-a-unit-reads).
// The reason of each unit is `modified: <file>`, the first such file in
// sorted order, followed for a read by the read in parentheses
// (`read by net/main.tf:2`, `module render of tpl`). Dirspaces with
// `autoplan: false` are left out. Root module dirs the change deleted are
// returned apart: they are not units any more, and never run.
func (p *Project) ModifiedUnits(changes []FileChange) (modified map[*Unit]string, deleted []DeletedUnit) {
	all, deleted := p.modifiedUnits(p.changeIndex(), changes)
	return firstReasons(all), deleted
}

// ModifiedReasons is ModifiedUnits with every reason a unit is modified
// for, in the order of the changed files, the first as ModifiedUnits
// gives it (docs/behaviour.md#changed-units).
func (p *Project) ModifiedReasons(changes []FileChange) (modified map[*Unit][]string, deleted []DeletedUnit) {
	return p.modifiedUnits(p.changeIndex(), changes)
}

// firstReasons keeps the first of each unit's reasons.
func firstReasons(all map[*Unit][]string) map[*Unit]string {
	out := make(map[*Unit]string, len(all))
	for u, rs := range all {
		out[u] = rs[0]
	}
	return out
}

// modifiedUnits is ModifiedUnits with an index made once for several
// changes (its memos are caches, valid for any change).
func (p *Project) modifiedUnits(ix *changeIndex, changes []FileChange) (modified map[*Unit][]string, deleted []DeletedUnit) {
	files := make([]string, 0, len(changes))
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		if !seen[c.Path] && !engineData(c.Path) {
			seen[c.Path] = true
			files = append(files, c.Path)
		}
	}
	sort.Strings(files)

	// reasons are each dirspace's, in the order of the files; a file
	// gives a dirspace one reason, its first.
	reasons := map[*Dirspace][]string{}
	byFile := map[*Dirspace]string{}
	current := ""
	mark := func(ds *Dirspace, why func() string) {
		if byFile[ds] != current {
			byFile[ds] = current
			reasons[ds] = append(reasons[ds], why())
		}
	}
	if len(files) > 0 && ix.reads == nil {
		ix.reads = p.newReadIndex(ix.autoplan)
	}
	for _, f := range files {
		current = f
		plain := func() string { return "modified: " + f }
		ix.reads.readers(f, func(ref readRef) {
			mark(ref.ds, func() string { return "modified: " + f + " (" + p.readWhy(ref) + ")" })
		})
		ix.byPatterns(f, func(ds *Dirspace) { mark(ds, plain) })
		for _, ds := range ix.moduleOf(f) {
			mark(ds, plain)
		}
	}
	modified = make(map[*Unit][]string, len(reasons))
	for ds, why := range reasons {
		for _, u := range p.unitsOf[ds.Dir] {
			if u.Dirspace == ds {
				modified[u] = why
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
	// reads finds the dirspaces that read a file, made the first time
	// a change has files.
	reads *readIndex
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
		if !p.autoplans(ds) {
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
		global = config.Strings(*wm.FilePatterns)
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
		if ix.roots[dir] || len(ix.callers[dir]) > 0 || HoldsTerraform(absDir(p.Root, dir)) {
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
				// As assign and settleInstanceState make the live units.
				u := &Unit{Dirspace: ds, Stack: s}
				if s.Instance != "" {
					u = instanceUnit(ds, s)
				}
				u.Tags = unitTags(u.Dirspace, s)
				p.placeInstance(u)
				out = append(out, DeletedUnit{Dir: dir, Workspace: u.Workspace, Stack: s, Tags: u.Tags, File: firstFile[dir]})
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

// HoldsTerraform reports whether a dir holds a Terraform or OpenTofu file
// (*.tf, *.tf.json, *.tofu).
func HoldsTerraform(dir string) bool {
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
func (p *Project) dirsEntry(dir string) (entry *config.MapEntry[config.Dir], exact bool) {
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
	if distinctBases(out) > 1 && (p.Config.Stacks == nil || !p.Config.Stacks.AllowWorkspaceInMultipleStacks.Value) {
		out = firstBase(out)
	}
	if len(out) == 0 && userDefault != nil && userDefault.Leaf && userDefault.Query != nil && userDefault.Query.Match(subject) {
		out = append(out, userDefault)
	}
	return out
}

// unitTags are the tags of dirspace ds as a unit of stack s: its own,
// then stack_name: of the stack and each of its ancestors; an instance
// adds stack_name: of the stack as written and stack_instance: of its key
// (docs/behaviour.md#stack-instances).
func unitTags(ds *Dirspace, s *Stack) []string {
	tags := append(append([]string(nil), ds.Tags...), "stack_name:"+s.Name)
	if s.Instance != "" {
		tags = append(tags, "stack_name:"+s.Base, "stack_instance:"+s.Instance)
	}
	for _, level := range s.Ancestors {
		for _, a := range level {
			tags = append(tags, "stack_name:"+a.Name)
			if a.Base != "" {
				tags = append(tags, "stack_name:"+a.Base)
			}
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

// Whys of units that --changed compares with the commit of their own last
// successful apply (docs/behaviour.md#changed-units).
const (
	WhyNeverApplied = "never applied"
)

// ErrCommitMissing is what changesSince returns for a commit this clone
// does not have.
var ErrCommitMissing = errors.New("commit not in this clone")

// ModifiedSinceDeployed decides which units a change modifies when each
// unit is compared with the commit of its own last successful apply
// (deployed, by unit; "" for a unit never applied), so that a push whose
// CI run was skipped or cancelled is applied by the next one
// (docs/behaviour.md#changed-units). changesSince lists the files that
// differ between a commit and the working tree. A unit never applied is
// modified, and so is one whose commit the clone lacks (a rewritten
// history): there is nothing to compare it with. The units sharing a
// commit are decided by one comparison. Deleted root module dirs are those
// any comparison finds deleted.
func (p *Project) ModifiedSinceDeployed(deployed map[*Unit]string, changesSince func(commit string) ([]FileChange, error)) (modified map[*Unit]string, deleted []DeletedUnit, err error) {
	groups := map[string][]*Unit{}
	modified = map[*Unit]string{}
	for _, u := range p.Units {
		if !p.autoplans(u.Dirspace) {
			continue
		}
		c := deployed[u]
		if c == "" {
			modified[u] = WhyNeverApplied
			continue
		}
		groups[c] = append(groups[c], u)
	}
	commits := make([]string, 0, len(groups))
	for c := range groups {
		commits = append(commits, c)
	}
	sort.Strings(commits)
	seen := map[string]bool{}
	ix := p.changeIndex()
	for _, c := range commits {
		changes, err := changesSince(c)
		if errors.Is(err, ErrCommitMissing) {
			for _, u := range groups[c] {
				modified[u] = fmt.Sprintf("last applied at %s, which this clone does not have", git.ShortID(c))
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		m, del := p.modifiedUnits(ix, changes)
		for _, u := range groups[c] {
			if why, ok := m[u]; ok {
				modified[u] = why[0]
			}
		}
		for _, d := range del {
			k := d.Dir + "\x00" + d.Workspace + "\x00" + stackName(d.Stack)
			if !seen[k] {
				seen[k] = true
				d.Commit = c
				deleted = append(deleted, d)
			}
		}
	}
	sort.Slice(deleted, func(i, j int) bool {
		a, b := deleted[i], deleted[j]
		if a.Dir != b.Dir {
			return a.Dir < b.Dir
		}
		if a.Workspace != b.Workspace {
			return a.Workspace < b.Workspace
		}
		return stackName(a.Stack) < stackName(b.Stack)
	})
	return modified, deleted, nil
}

func stackName(s *Stack) string {
	if s == nil {
		return ""
	}
	return s.Name
}

// DependentsOfDeleted are the units that deleted root modules leave to
// run (docs/behaviour.md#changed-units): in a deleted unit's stack, those
// whose depends_on matched it, and every unit of a stack modified_by that
// stack; each with its why. What waited for a root module must be planned
// again once it is gone.
func (p *Project) DependentsOfDeleted(deleted []DeletedUnit) map[*Unit]string {
	out := map[*Unit]string{}
	add := func(u *Unit, why string) {
		if _, ok := out[u]; !ok {
			out[u] = why
		}
	}
	mods := newModifiedByWalk(len(p.Stacks))
	for _, d := range deleted {
		if d.Stack == nil {
			continue
		}
		subject := tagquery.Subject{Tags: d.Tags, Dir: d.Dir}
		name := d.Dir + "@" + d.Workspace
		for _, v := range d.Stack.Units {
			if q := v.WhenModified.DependsOn; q != nil && q.MatchFrom(subject, v.Dir) {
				add(v, "depends_on: "+name+" ("+WhyDeleted+")")
			}
		}
		for _, s := range mods.of(d.Stack) {
			for _, v := range s.Units {
				add(v, "modified_by: "+d.Stack.Name)
			}
		}
	}
	return out
}

// autoplans says a change can make the dirspace modified: its autoplan,
// and on a draft pull request its autoplan_draft_pr
// (docs/behaviour.md#changed-units).
func (p *Project) autoplans(ds *Dirspace) bool {
	return ds.WhenModified.Autoplan && (!p.draft || ds.WhenModified.AutoplanDraftPR)
}
