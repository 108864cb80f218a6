package stacks

import (
	"cmp"
	"fmt"
	"sort"

	"github.com/strata-iac/strata/internal/spell"

	"github.com/strata-iac/strata/stacks/tagquery"
)

// Selection is what a command was asked to work on (docs/behaviour.md#commands scope, docs/behaviour.md#selection).
type Selection struct {
	// Cwd is the repo-relative dir strata was started in ("." at the root).
	Cwd string
	// All, Stacks, Query, Dirs and Workspace are the selection flags.
	All       bool
	Stacks    []string
	Query     string
	Dirs      []string
	Workspace string
	// EnvWorkspace is $TF_WORKSPACE, else the workspace terraform has
	// selected in the dir; it picks the unit in the drop-in case.
	EnvWorkspace string
	// TFWorkspace is $TF_WORKSPACE: outside a unit's dir it selects that
	// workspace's units, as Workspace does, when Workspace is not given
	// (docs/behaviour.md#selection).
	TFWorkspace string
	// Modified seeds propagation with these units instead of the selected
	// ones, each with its reason (`modified: <file>`); used by --changed.
	// Propagation (docs/behaviour.md#propagation) is on under --changed.
	Modified map[*Unit]string
	// ModifiedAll are every reason of the modified units that have more
	// than one, the first as in Modified (ModifiedReasons).
	ModifiedAll map[*Unit][]string
	// Propagate turns propagation on without --changed: an explicit
	// selection (a flag, or the dir strata runs in) otherwise runs what it
	// names and no more.
	Propagate bool
	// NoPropagate turns propagation off under --changed.
	NoPropagate bool
	// WithDependencies adds what the run's units wait for, transitively
	// (docs/behaviour.md#dependencies).
	WithDependencies bool
	// Destroying: the run destroys. A dependency a unit outside the run
	// still waits for is then kept out of it (Run.Kept).
	Destroying bool
}

// propagates reports whether a selection's run grows by propagation:
// under --changed, where a change reaches what depends on it, unless
// --no-propagate; elsewhere only when asked with --propagate
// (docs/behaviour.md#propagation).
func (sel Selection) propagates() bool {
	return (sel.Modified != nil || sel.Propagate) && !sel.NoPropagate
}

// Reasons a unit is in the run (the `why` of ls and the report).
const (
	WhySelected = "selected"
)

// RunUnit is a unit in the run with why it is there: the first reason,
// and every reason strata found, that one first (Whys).
type RunUnit struct {
	*Unit
	Why  string
	Whys []string
}

// Run is the set of units a command works on.
type Run struct {
	Units []RunUnit // sorted by dir, workspace, stack; callers only append
	// DropIn is true when strata runs in a dir holding units with no
	// selection flag: the `terraform` replacement case.
	DropIn bool
	// Kept are the dependencies a destroy --with-dependencies leaves
	// deployed, each with the unit outside the run that still needs it.
	Kept []RunUnit

	index   map[*Unit]bool // the first indexed units of Units
	indexed int
}

// Has reports whether u is in the run. The index follows appends to Units.
func (r *Run) Has(u *Unit) bool {
	if r.index == nil {
		r.index = make(map[*Unit]bool, len(r.Units))
	}
	for ; r.indexed < len(r.Units); r.indexed++ {
		r.index[r.Units[r.indexed].Unit] = true
	}
	return r.index[u]
}

// List returns the run's units.
func (r *Run) List() []*Unit {
	out := make([]*Unit, len(r.Units))
	for i, ru := range r.Units {
		out[i] = ru.Unit
	}
	return out
}

// SelectionError is a selection flag strata cannot honour.
type SelectionError struct{ Msg string }

func (e *SelectionError) Error() string { return e.Msg }

// selectionFilter is a Selection's flags, parsed once.
type selectionFilter struct {
	cwd       string
	leaves    map[*Stack]bool // nil: no --stack
	query     *tagquery.Query
	dirs      []string
	workspace string
}

func (p *Project) compileSelection(sel Selection) (*selectionFilter, error) {
	if sel.Propagate && sel.NoPropagate {
		return nil, &SelectionError{"--propagate and --no-propagate: choose one"}
	}
	f := &selectionFilter{cwd: sel.Cwd, workspace: cmp.Or(sel.Workspace, sel.TFWorkspace)}
	if f.cwd == "" {
		f.cwd = "."
	}
	if len(sel.Stacks) > 0 {
		f.leaves = map[*Stack]bool{}
		for _, name := range sel.Stacks {
			named := p.StacksNamed(name)
			if len(named) == 0 {
				if _, why := p.refStacks(nil, name); why != "" {
					// An instance key the stack does not have, said as
					// the config's references say it.
					return nil, &SelectionError{fmt.Sprintf("--stack %s: %s", name, why)}
				}
				names := p.stackNamesSorted()
				mean := ""
				if near := spell.Typo(name, names); near != "" {
					mean = fmt.Sprintf("; did you mean %s?", near)
				}
				return nil, &SelectionError{fmt.Sprintf("--stack %s: no such stack%s; expected one of: %s", name, mean, spell.List(names))}
			}
			for _, s := range named {
				for _, l := range s.Leaves {
					f.leaves[l] = true
				}
			}
		}
	}
	if sel.Query != "" {
		q, err := tagquery.Parse(sel.Query)
		if err != nil {
			return nil, &SelectionError{"--query: " + err.Error()}
		}
		f.query = q
	}
	for _, d := range sel.Dirs {
		f.dirs = append(f.dirs, cleanDir(d))
	}
	return f, nil
}

// matches reports whether a dirspace of a stack passes every selection
// flag and lies at or below the current dir.
func (f *selectionFilter) matches(dir, workspace string, stack *Stack, subject tagquery.Subject) bool {
	switch {
	case !DirWithin(dir, f.cwd),
		f.leaves != nil && !f.leaves[stack],
		f.query != nil && !f.query.Match(subject),
		len(f.dirs) > 0 && !withinAny(dir, f.dirs),
		f.workspace != "" && workspace != f.workspace:
		return false
	}
	return true
}

// Select computes the run: scope, then the selection flags, then, under
// --changed or --propagate, propagation, then with --with-dependencies what
// the run waits for (docs/behaviour.md#commands,
// docs/behaviour.md#propagation, docs/behaviour.md#selection,
// docs/behaviour.md#dependencies).
func (p *Project) Select(sel Selection) (*Run, error) {
	f, err := p.compileSelection(sel)
	if err != nil {
		return nil, err
	}
	cwd, leafFilter, query, dirs := f.cwd, f.leaves, f.query, f.dirs

	run := &Run{}
	here := p.unitsOf[cwd]
	pickers := leafFilter == nil || stacksIntersect(here, leafFilter)
	var scope []*Unit
	if len(here) > 0 && !sel.All && query == nil && len(dirs) == 0 && pickers {
		run.DropIn = true
		ws := sel.Workspace
		if ws == "" {
			ws = sel.EnvWorkspace
		}
		for _, u := range here {
			if (ws == "" || u.Workspace == ws) && (leafFilter == nil || leafFilter[u.Stack]) {
				scope = append(scope, u)
			}
		}
	} else {
		for _, u := range p.Units {
			if f.matches(u.Dir, u.Workspace, u.Stack, u.Subject()) {
				scope = append(scope, u)
			}
		}
	}
	why := map[*Unit]string{}
	// more are the reasons of a unit past its first, in the order found,
	// each once: a unit many wait for gathers many.
	more := map[*Unit][]string{}
	seen := map[*Unit]map[string]bool{}
	also := func(u *Unit, reason string) {
		if why[u] == reason || seen[u][reason] {
			return
		}
		if seen[u] == nil {
			seen[u] = map[string]bool{}
		}
		seen[u][reason] = true
		more[u] = append(more[u], reason)
	}
	if sel.Modified != nil {
		inScope := make(map[*Unit]bool, len(scope))
		for _, u := range scope {
			inScope[u] = true
		}
		for u, reason := range sel.Modified {
			if inScope[u] {
				why[u] = reason
				for _, r := range sel.ModifiedAll[u] {
					also(u, r)
				}
			}
		}
	} else {
		for _, u := range scope {
			why[u] = WhySelected
		}
	}
	if sel.propagates() {
		p.propagate(why, also)
	}
	if sel.WithDependencies {
		p.addDependencies(why, also)
		if sel.Destroying {
			run.Kept = p.keepNeeded(why)
		}
	}
	for u, w := range why {
		run.Units = append(run.Units, RunUnit{Unit: u, Why: w, Whys: append([]string{w}, more[u]...)})
	}
	sort.Slice(run.Units, func(i, j int) bool {
		a, b := run.Units[i], run.Units[j]
		if a.Dir != b.Dir {
			return a.Dir < b.Dir
		}
		if a.Workspace != b.Workspace {
			return a.Workspace < b.Workspace
		}
		return a.Stack.Name < b.Stack.Name
	})
	return run, nil
}

func stacksIntersect(units []*Unit, leaves map[*Stack]bool) bool {
	for _, u := range units {
		if leaves[u.Stack] {
			return true
		}
	}
	return false
}

func withinAny(dir string, bases []string) bool {
	for _, b := range bases {
		if DirWithin(dir, b) {
			return true
		}
	}
	return false
}

func (p *Project) stackNamesSorted() []string {
	names := make([]string, 0, len(p.Stacks))
	for _, s := range p.Stacks {
		names = append(names, s.Name)
	}
	for base := range p.instancesOf {
		names = append(names, base)
	}
	sort.Strings(names)
	return names
}

// propagate grows the run to a fixed point (docs/behaviour.md#propagation): units whose depends_on
// matches a unit in the run, every unit of a stack modified_by a stack in
// the run, and every unit of an all-for-one stack with a unit in the run.
// Units only propagation added whose depends_on sets prune_on_no_change
// are removed afterwards; the graph keeps the order through them.
func (p *Project) propagate(why map[*Unit]string, also func(u *Unit, reason string)) {
	seeded := make(map[*Unit]bool, len(why))
	for u := range why {
		seeded[u] = true
	}
	// dependents[u]: units whose depends_on matches u.
	dependents := map[*Unit][]*Unit{}
	for _, v := range p.Units {
		for _, u := range p.dependsOn(v) {
			dependents[u] = append(dependents[u], v)
		}
	}
	stacksIn := map[*Stack]*Unit{}
	mods := newModifiedByWalk(len(p.Stacks))
	queue := make([]*Unit, 0, len(why))
	for u := range why {
		queue = append(queue, u)
	}
	sortUnits(queue)
	add := func(u *Unit, reason string) {
		if _, ok := why[u]; ok {
			also(u, reason)
			return
		}
		why[u] = reason
		queue = append(queue, u)
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range dependents[u] {
			add(v, "depends_on: "+u.Name())
		}
		if _, seen := stacksIn[u.Stack]; seen {
			continue
		}
		stacksIn[u.Stack] = u
		if u.Stack.AllForOne {
			for _, v := range u.Stack.Units {
				add(v, "all_for_one: "+u.Name())
			}
		}
		for _, s := range mods.of(u.Stack) {
			for _, v := range s.Units {
				add(v, "modified_by: "+u.Stack.Name)
			}
		}
	}
	for u := range why {
		if !seeded[u] && u.WhenModified.DependsOn != nil && u.WhenModified.PruneOnNoChange {
			delete(why, u)
		}
	}
}

// modifiedByWalk answers, for each stack that enters the run, which leaf
// stacks modified_by puts in the run because of it, transitively, walking
// the direct rules backwards instead of a stored closure.
//
// Each stack is walked past once: when a walk from T ends without coming
// back to T, every stack it passed has had all its units added, and so has
// everything behind it, so a later walk can stop there. A walk that comes
// back to its start (a modified_by cycle) leaves that start's units out,
// as T is never modified by itself, and so marks nothing.
type modifiedByWalk struct {
	done  []bool  // the stack and all it puts in the run have been added
	seen  []int32 // stamp of the walk that reached a stack
	stamp int32
}

func newModifiedByWalk(n int) *modifiedByWalk {
	return &modifiedByWalk{done: make([]bool, n), seen: make([]int32, n)}
}

// of returns the leaves that t in the run puts in the run and that no
// earlier walk has returned, in Project.Stacks order.
func (w *modifiedByWalk) of(t *Stack) []*Stack {
	if w.done[t.index] {
		return nil // an earlier walk added all t puts in the run
	}
	w.stamp++
	var out []*Stack
	backToStart := false
	todo := append([]*Stack(nil), t.modifies...)
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if s == t {
			backToStart = true
			continue
		}
		if w.seen[s.index] == w.stamp || w.done[s.index] {
			continue
		}
		w.seen[s.index] = w.stamp
		out = append(out, s)
		todo = append(todo, s.modifies...)
	}
	if !backToStart {
		for _, s := range out {
			w.done[s.index] = true
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// UnitsCalling are the units whose root module calls the local module in
// dir, directly or through other local modules, in unit order; none when
// no root module calls it.
func (p *Project) UnitsCalling(dir string) []*Unit {
	callers := map[string][]string{}
	for caller, mods := range p.ModuleCalls {
		for _, m := range mods {
			callers[m] = append(callers[m], caller)
		}
	}
	seen := map[string]bool{dir: true}
	queue := []string{dir}
	roots := map[string]bool{}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, c := range callers[d] {
			if seen[c] {
				continue
			}
			seen[c] = true
			if len(p.unitsOf[c]) > 0 {
				roots[c] = true
			}
			queue = append(queue, c)
		}
	}
	var out []*Unit
	for _, u := range p.Units {
		if roots[u.Dir] {
			out = append(out, u)
		}
	}
	return out
}
