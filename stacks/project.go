// Package stacks is strata's model of a repository: the config, as
// package stacks/config decodes and checks it, resolved against the
// repository into the dirspaces (root module × workspace) found in it, the
// stacks that group them by tag query, the rules between stacks, and the
// graph of units that the runner executes, with selection and change
// detection over them. The checks of the config against the repository
// (dirs that exist, tag queries that match units, cycles between stacks)
// are made here, reported as the config's diagnostics. Everything here is
// pure: it reads files but never runs an engine, so `strata check`, `ls`,
// `stacks` and `graph` are fast and the runner can trust what it is given.
package stacks

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/stacks/config"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// Project is a loaded repository: config, dirspaces, stacks and units.
type Project struct {
	Root       string // absolute path of the repository root
	ConfigFile string // config path relative to Root, "" when there is none
	Config     *config.Config

	Dirspaces []*Dirspace // sorted by dir, then workspace
	// selected are workspaces terraform has selected in dirs that declare
	// none, as the loader was told (WithSelectedWorkspace).
	selected map[string]string
	// draft: the run is for a draft pull request (SetBranches).
	draft  bool
	Stacks []*Stack // in definition order; an implicit default comes last
	Units  []*Unit  // sorted by dir, workspace, stack
	// Unassigned are dirspaces in no stack: the user defined `default` and
	// it does not match them (docs/behaviour.md#stacks-and-membership).
	// They do not run.
	Unassigned []*Dirspace

	// ModuleCalls maps a dir to the local module dirs it calls.
	ModuleCalls map[string][]string

	Diagnostics config.Diagnostics

	sds    []sourceDir // the dirs it was built from (Tree)
	byName map[string]*Stack
	// instancesOf are the instances of each stack with for_each, or
	// nested in one, by the name the config gives it.
	instancesOf map[string][]*Stack
	unitsOf     map[string][]*Unit // dir -> its units
	// workflowQueries are the workflows' parsed tag queries, made once:
	// runner workers ask for workflows concurrently.
	workflowOnce    sync.Once
	workflowQueries []*tagquery.Query

	inputs map[*Unit][]Input
	// inputEdges are the stacks each leaf takes an explicit input from,
	// with where the input is written: the order inputs make.
	inputEdges map[*Stack][]orderEdge
	// autoEdges are the sibling stacks each leaf takes an auto_inputs
	// input from: they order it as inputEdges do.
	autoEdges map[*Stack][]orderEdge
	consumers map[*Unit][]*Unit
	modules   map[string]*moduleInfo
	modulesMu sync.Mutex
	// reads are the dirs' file function calls, parsed when change
	// detection or a content digest first needs them.
	reads   map[string]*readsInfo
	readsMu sync.Mutex
	// versionFiles finds each dir's nearest version file once.
	versionFiles engines.VersionFiles
}

// Dirspace is one root module in one workspace.
type Dirspace struct {
	Dir       string
	Workspace string
	// Tags are the dirspace's own tags: dirs and workspace tags, then
	// dir:<dir> and workspace:<workspace>.
	Tags         []string
	DirKey       string // the dirs key that configured it, "" for none
	WhenModified WhenModifiedRules
	// CreateAndSelectWorkspace false: strata runs no workspace command.
	CreateAndSelectWorkspace bool
	SharedState              bool
	// fromSelection: the dirspace is the workspace terraform has selected
	// in a dir that declares none (WithSelectedWorkspace).
	fromSelection bool
}

// ID is `dir@workspace`.
func (d *Dirspace) ID() string { return d.Dir + "@" + d.Workspace }

// WhenModifiedRules is a dirspace's when_modified after inheritance
// (workspace, then dir, then global, field by field).
type WhenModifiedRules struct {
	FilePatterns    []string
	Global          bool // FilePatterns come from the global section (Terrateam's rewrite applies)
	DependsOn       *tagquery.Query
	DependsOnPos    config.Pos // where DependsOn is written
	PruneOnNoChange bool
	Autoapply       bool
	Autoplan        bool
	// AutoplanDraftPR false: on a draft pull request the dirspace is not
	// in the modified set (Branches.Draft).
	AutoplanDraftPR bool
}

// Unit is a dirspace in one leaf stack: what runs.
type Unit struct {
	*Dirspace
	Stack *Stack
	// Tags are the dirspace's tags plus stack_name:<s> for the leaf and each
	// of its ancestors.
	Tags []string
	// Shared is true when the dirspace is in several stacks
	// (docs/behaviour.md#stacks-and-membership); the
	// unit's display name then carries the stack.
	Shared bool
	// Origin is, for a unit of a stack instance, the dirspace as found in
	// the repository; Dirspace is then the instance's own copy of it, in
	// the instance's workspace (docs/behaviour.md#stack-instances).
	Origin *Dirspace
	// OwnBackend: the unit's workflow gives init a backend config naming
	// its instance, so it keeps its dirspace's workspace and a data dir of
	// its own.
	OwnBackend bool
}

// AutoApplies says a plan applies the unit's changes itself: its stack is
// auto_apply, or its dirspace's when_modified.autoapply is true
// (docs/behaviour.md#auto-apply).
func (u *Unit) AutoApplies() bool { return u.Stack.AutoApply || u.WhenModified.Autoapply }

// ID is `dir@workspace#stack`, unique in a project.
func (u *Unit) ID() string { return u.Dir + "@" + u.Workspace + "#" + u.Stack.Name }

// Name is how the unit is shown: `dir@workspace`, or `dir@workspace#stack`
// when its dirspace is in several stacks.
func (u *Unit) Name() string {
	if u.Shared {
		return u.ID()
	}
	return u.Dirspace.ID()
}

// Subject is the unit as a tag query sees it.
func (u *Unit) Subject() tagquery.Subject {
	return tagquery.Subject{Tags: u.Tags, Dir: u.Dir}
}

// Stack returns the stack called name.
func (p *Project) Stack(name string) (*Stack, bool) {
	s, ok := p.byName[name]
	return s, ok
}

// UnitsIn returns the units of one dir.
func (p *Project) UnitsIn(dir string) []*Unit { return p.unitsOf[dir] }

// Load reads the config at configPath (which may be "") and the repository
// at root, and builds the project. A config with errors yields a
// *config.Error listing all of them; the project is still returned, as far
// as it could be built, so `check` can show everything at once.
func Load(root, configPath string) (*Project, error) {
	return LoadFrom(root, configPath, nil)
}

// LoadFrom is Load with the repository's files read by someone else: once
// the config is read and has no errors, tree is called, and the project is
// built from the Tree it returns instead of from reading the repository (a
// CI job builds from the tree of the commit its run started on, fetched
// while the config is read). A nil tree func, or a nil Tree, reads the
// repository.
func LoadFrom(root, configPath string, tree func() (*Tree, error), opts ...LoadOption) (*Project, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	display := ""
	if configPath != "" {
		if rel, err := filepath.Rel(root, configPath); err == nil && !strings.HasPrefix(rel, "..") {
			display = filepath.ToSlash(rel)
		} else {
			display = configPath
		}
	}
	cfg, diags, err := config.Load(configPath, display)
	if err != nil {
		return nil, err
	}
	var (
		sds   []sourceDir
		calls map[string][]string
	)
	if tree != nil && !diags.HasErrors() {
		t, err := tree()
		if err != nil {
			return nil, err
		}
		if t != nil {
			if sds, calls, err = t.sourceDirs(); err != nil {
				return nil, err
			}
		}
	}
	if sds == nil && config.OverBudget(configPath) {
		// A config over its size budget is refused before the
		// repository is walked: nothing the walk finds could be checked
		// against a config that was not read, and a large repository
		// takes seconds to walk.
		sds = []sourceDir{}
	}
	if sds == nil {
		if sds, err = scanTree(root); err != nil {
			return nil, err
		}
	}
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	p := build(root, display, cfg, sds, calls, diags, o)
	if p.Diagnostics.HasErrors() {
		return p, &config.Error{Diagnostics: p.Diagnostics}
	}
	return p, nil
}

// Build assembles a project from a decoded config and the scanned tree.
func Build(root, configFile string, cfg *config.Config, sds []sourceDir, diags config.Diagnostics) *Project {
	return build(root, configFile, cfg, sds, nil, diags, loadOptions{})
}

// build is Build with the local module calls already known when calls is
// not nil.
func build(root, configFile string, cfg *config.Config, sds []sourceDir, calls map[string][]string, diags config.Diagnostics, o loadOptions) *Project {
	p := &Project{Root: root, ConfigFile: configFile, Config: cfg, sds: sds, byName: map[string]*Stack{}, unitsOf: map[string][]*Unit{}, modules: map[string]*moduleInfo{}, selected: o.selected}
	p.versionFiles.Root = root
	c := &config.Collector{File: configFile, Diags: diags}
	p.ModuleCalls = calls
	if calls == nil {
		p.ModuleCalls = p.moduleCalls(sds)
	}
	p.discover(sds, c)
	p.buildStacks(c)
	p.assign(c)
	p.resolveStacks(c)
	p.settleInstanceState(c)
	p.checkShared(c)
	p.resolveInputs(c)
	p.reportCycles(c)
	p.warnSensitiveUnmarked(c)
	p.warnUninspectable(c)
	p.warnDependsOnAcrossStacks(c)
	p.warnUnsupportedEngines(c)
	c.Diags.Sort()
	p.Diagnostics = c.Diags.Dedupe()
	return p
}

// discover turns the scanned dirs into dirspaces
// (docs/behaviour.md#root-modules-and-tags).
func (p *Project) discover(sds []sourceDir, c *config.Collector) {
	keys := p.splitDirKeys(c)
	roots := p.patternRoots(sds, keys.exact)
	var spellDirs *speller
	spell := func() *speller {
		if spellDirs == nil {
			spellDirs = dirSpeller(sds)
		}
		return spellDirs
	}
	p.addListedRoots(roots, keys.exact, sds, spell, c)
	dirs := make([]string, 0, len(roots))
	for d := range roots {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	used := map[*config.MapEntry[config.Dir]]bool{}
	for _, dir := range dirs {
		entry := keys.exact[dir]
		if entry == nil {
			if entry = keys.globFor(dir); entry != nil {
				used[entry] = true
			}
		}
		p.addDirspaces(dir, entry)
	}
	if len(used) < len(keys.globs) {
		p.warnUnmatchedDirKeys(keys.globs, used, dirs, spell(), c)
	}
}

// dirKeys are the dirs keys of the config that lie inside the repository,
// split into exact dirs and globs.
type dirKeys struct {
	exact map[string]*config.MapEntry[config.Dir]
	// globs are longest key first: among globs the longest key wins.
	globs []*config.MapEntry[config.Dir]
	// globPrefix is the literal prefix of each glob: a glob can match only
	// dirs that start with it.
	globPrefix []string
	// byFirst indexes the globs whose literal prefix holds a whole first
	// path segment by that segment, each list longest key first; loose
	// are the others (a prefix such as "" or "mod"), which any dir may
	// match. A dir is tried against its first segment's globs and the
	// loose ones alone, so a load with thousands of glob keys does not
	// try every key for every dir.
	byFirst map[string][]int
	loose   []int
}

// splitDirKeys returns the config's dirs keys that lie inside the
// repository.
func (p *Project) splitDirKeys(c *config.Collector) dirKeys {
	cfg := p.Config
	keys := dirKeys{exact: map[string]*config.MapEntry[config.Dir]{}}
	if cfg.Dirs != nil {
		for i := range cfg.Dirs.Entries {
			e := &cfg.Dirs.Entries[i]
			if !dirKeyInside(e, c) {
				continue
			}
			key := strings.TrimSuffix(e.Key, "/")
			if strings.ContainsAny(key, "*?[{") {
				keys.globs = append(keys.globs, e)
			} else {
				keys.exact[cleanDir(key)] = e
			}
		}
	}
	keys.indexGlobs()
	return keys
}

// indexGlobs orders the globs longest key first and indexes them by
// their literal prefix's first segment.
func (k *dirKeys) indexGlobs() {
	globs := k.globs
	sort.SliceStable(globs, func(i, j int) bool { return len(globs[i].Key) > len(globs[j].Key) })
	k.globPrefix = make([]string, len(globs))
	k.byFirst, k.loose = map[string][]int{}, nil
	for i, g := range globs {
		prefix := literalPrefix(g.Key)
		k.globPrefix[i] = prefix
		if first, _, whole := strings.Cut(prefix, "/"); whole {
			k.byFirst[first] = append(k.byFirst[first], i)
		} else {
			k.loose = append(k.loose, i)
		}
	}
}

// globFor returns the longest glob key that matches dir, or nil: among
// the globs of dir's first segment and the loose ones, in the order of
// globs (longest key first).
func (k dirKeys) globFor(dir string) *config.MapEntry[config.Dir] {
	dirSlash := dir + "/"
	first, _, _ := strings.Cut(dir, "/")
	a, b := k.byFirst[first], k.loose
	for len(a) > 0 || len(b) > 0 {
		var i int
		if len(b) == 0 || len(a) > 0 && a[0] < b[0] {
			i, a = a[0], a[1:]
		} else {
			i, b = b[0], b[1:]
		}
		if g := k.globs[i]; strings.HasPrefix(dirSlash, k.globPrefix[i]) && matchPath(strings.TrimSuffix(g.Key, "/"), dir) {
			return g
		}
	}
	return nil
}

// patternRoots returns the scanned dirs holding a file the global file
// patterns match, less those only called as local modules.
func (p *Project) patternRoots(sds []sourceDir, exact map[string]*config.MapEntry[config.Dir]) map[string]bool {
	cfg := p.Config
	globalPatterns := DefaultFilePatterns
	if cfg.WhenModified != nil && cfg.WhenModified.FilePatterns != nil {
		globalPatterns = config.Strings(*cfg.WhenModified.FilePatterns)
	}
	called := map[string]bool{}
	for _, calls := range p.ModuleCalls {
		for _, d := range calls {
			called[d] = true
		}
	}
	roots := map[string]bool{}
	for _, sd := range sds {
		if called[sd.dir] && exact[sd.dir] == nil {
			continue
		}
		pats := compilePatterns(globalPatterns, sd.dir, "default", true)
		for _, f := range sd.files {
			file := f
			if sd.dir != "." {
				file = sd.dir + "/" + f
			}
			if pats.match(file) {
				roots[sd.dir] = true
				break
			}
		}
	}
	return roots
}

// addListedRoots adds to roots the exact dirs keys that are directories
// inside the repository, and warns about those that do not exist.
func (p *Project) addListedRoots(roots map[string]bool, exact map[string]*config.MapEntry[config.Dir], sds []sourceDir, spell func() *speller, c *config.Collector) {
	// A dir the scan found was reached through directories, never a
	// symbolic link, so it is one and lies inside the repository; only the
	// others are checked on disk.
	scanned := make(map[string]bool, len(sds))
	for _, sd := range sds {
		scanned[sd.dir] = true
	}
	resolvesInside := p.resolvesInside(c)
	for dir, e := range exact {
		switch {
		case scanned[dir]:
			roots[dir] = true
		case !isDir(filepath.Join(p.Root, filepath.FromSlash(dir))):
			if near := spell().nearest(dir); near != "" {
				c.Warnf(e.KeyPos, "dirs."+e.Key, "dir %q does not exist; did you mean %q?", e.Key, near)
			} else {
				c.Warnf(e.KeyPos, "dirs."+e.Key, "dir %q does not exist", e.Key)
			}
		case resolvesInside(dir, e):
			roots[dir] = true
		}
	}
}

func (p *Project) addDirspaces(dir string, entry *config.MapEntry[config.Dir]) {
	cfg := p.Config
	var dc *config.Dir
	key := ""
	if entry != nil {
		dc, key = &entry.Value, entry.Key
	}
	var dirTags []string
	workspaces := []string{"default"}
	var wsConf map[string]*config.Workspace
	if dc != nil {
		dirTags = config.Strings(dc.Tags)
		if dc.Workspaces.Len() > 0 {
			workspaces = workspaces[:0]
			wsConf = map[string]*config.Workspace{}
			for i := range dc.Workspaces.Entries {
				e := &dc.Workspaces.Entries[i]
				workspaces = append(workspaces, e.Key)
				wsConf[e.Key] = &e.Value
			}
			sort.Strings(workspaces)
		}
	}
	selected := ""
	if ws := p.selected[dir]; ws != "" && wsConf == nil && !slices.Contains(workspaces, ws) {
		// docs/behaviour.md#workspaces-in-drop-in
		workspaces = append(workspaces, ws)
		selected = ws
	}
	for _, ws := range workspaces {
		tags := append([]string(nil), dirTags...)
		var wsWM *config.WhenModified
		if w := wsConf[ws]; w != nil {
			tags = append(tags, config.Strings(w.Tags)...)
			wsWM = w.WhenModified
		}
		tags = append(tags, "dir:"+dir, "workspace:"+ws)
		ds := &Dirspace{
			Dir: dir, Workspace: ws, Tags: dedupe(tags), DirKey: key,
			CreateAndSelectWorkspace: cfg.CreateAndSelectWorkspace.Get(true),
			fromSelection:            ws == selected,
		}
		var dirWM *config.WhenModified
		if dc != nil {
			ds.CreateAndSelectWorkspace = dc.CreateAndSelectWorkspace.Get(ds.CreateAndSelectWorkspace)
			ds.SharedState = dc.SharedState.Value
			dirWM = dc.WhenModified
		}
		ds.WhenModified = inheritWhenModified(wsWM, dirWM, cfg.WhenModified)
		p.Dirspaces = append(p.Dirspaces, ds)
	}
}

// inheritWhenModified takes each field from the nearest level that sets it.
func inheritWhenModified(levels ...*config.WhenModified) WhenModifiedRules {
	r := WhenModifiedRules{FilePatterns: DefaultFilePatterns, Global: true, Autoplan: true, AutoplanDraftPR: true}
	patternsSet, dependsSet, applySet, planSet, draftSet := false, false, false, false, false
	for i, w := range levels {
		if w == nil {
			continue
		}
		if !patternsSet && w.FilePatterns != nil {
			r.FilePatterns, r.Global, patternsSet = config.Strings(*w.FilePatterns), i == len(levels)-1, true
		}
		if !dependsSet && w.DependsOn != nil && w.DependsOn.TagQuery.Set {
			if q, err := tagquery.Parse(w.DependsOn.TagQuery.Value); err == nil {
				r.DependsOn, r.DependsOnPos, r.PruneOnNoChange = q, w.DependsOn.TagQuery.Pos, w.DependsOn.PruneOnNoChange.Value
			}
			dependsSet = true
		}
		if !applySet && w.Autoapply.Set {
			r.Autoapply, applySet = w.Autoapply.Value, true
		}
		if !planSet && w.Autoplan.Set {
			r.Autoplan, planSet = w.Autoplan.Value, true
		}
		if !draftSet && w.AutoplanDraftPR.Set {
			r.AutoplanDraftPR, draftSet = w.AutoplanDraftPR.Value, true
		}
	}
	return r
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func cleanDir(d string) string {
	d = filepath.ToSlash(filepath.Clean(d))
	if d == "" {
		return "."
	}
	return d
}

func isDir(p string) bool {
	st, err := statFn(p)
	return err == nil && st.IsDir()
}

// DirWithin reports whether dir is base or below it.
func DirWithin(dir, base string) bool {
	if base == "." || base == "" {
		return true
	}
	return dir == base || strings.HasPrefix(dir, base+"/")
}

func sortUnits(us []*Unit) {
	sort.Slice(us, func(i, j int) bool {
		a, b := us[i], us[j]
		if a.Dir != b.Dir {
			return a.Dir < b.Dir
		}
		if a.Workspace != b.Workspace {
			return a.Workspace < b.Workspace
		}
		return a.Stack.Name < b.Stack.Name
	})
}

func stackNames(ss []*Stack) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// Variables are the variables the module in dir declares, read once per
// command; nil when it could not be read (the engine says why).
func (p *Project) Variables(dir string) map[string]*tfconfig.Variable {
	if m := p.module(dir); m != nil {
		return m.Variables
	}
	return nil
}
