package stacks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/strata-iac/strata/stacks/tagquery"
)

// Selection is what a command was asked to work on (§1 scope, §7.3).
type Selection struct {
	// Cwd is the repo-relative dir strata was started in ("." at the root).
	Cwd string
	// All, Stacks, Query, Dirs and Workspace are the selection flags.
	All       bool
	Stacks    []string
	Query     string
	Dirs      []string
	Workspace string
	// EnvWorkspace is $TF_WORKSPACE; it picks the unit in the drop-in case.
	EnvWorkspace string
	// Modified seeds propagation with these units instead of the selected
	// ones, each with its reason (`modified: <file>`); used by --changed.
	Modified map[*Unit]string
	// NoPropagate turns propagation (§7.2) off.
	NoPropagate bool
}

// Reasons a unit is in the run (the `why` of ls and the report).
const (
	WhySelected = "selected"
)

// RunUnit is a unit in the run with why it is there.
type RunUnit struct {
	*Unit
	Why string
}

// Run is the set of units a command works on.
type Run struct {
	Units []RunUnit // sorted by dir, workspace, stack
	// DropIn is true when strata runs in a dir holding units with no
	// selection flag: the `terraform` replacement case.
	DropIn bool
}

// Has reports whether u is in the run.
func (r *Run) Has(u *Unit) bool {
	for _, ru := range r.Units {
		if ru.Unit == u {
			return true
		}
	}
	return false
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

// Select computes the run: scope, then the selection flags, then
// propagation (§1, §7.2, §7.3).
func (p *Project) Select(sel Selection) (*Run, error) {
	cwd := sel.Cwd
	if cwd == "" {
		cwd = "."
	}
	var leafFilter map[*Stack]bool
	if len(sel.Stacks) > 0 {
		leafFilter = map[*Stack]bool{}
		for _, name := range sel.Stacks {
			s, ok := p.byName[name]
			if !ok {
				return nil, &SelectionError{fmt.Sprintf("--stack %s: no such stack; expected one of: %s", name, strings.Join(p.stackNamesSorted(), ", "))}
			}
			for _, l := range s.Leaves {
				leafFilter[l] = true
			}
		}
	}
	var query *tagquery.Query
	if sel.Query != "" {
		q, err := tagquery.Parse(sel.Query)
		if err != nil {
			return nil, &SelectionError{"--query: " + err.Error()}
		}
		query = q
	}
	dirs := make([]string, len(sel.Dirs))
	for i, d := range sel.Dirs {
		dirs[i] = cleanDir(d)
	}

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
			if !DirWithin(u.Dir, cwd) {
				continue
			}
			if leafFilter != nil && !leafFilter[u.Stack] {
				continue
			}
			if query != nil && !query.Match(u.Subject()) {
				continue
			}
			if len(dirs) > 0 && !withinAny(u.Dir, dirs) {
				continue
			}
			if sel.Workspace != "" && u.Workspace != sel.Workspace {
				continue
			}
			scope = append(scope, u)
		}
	}
	why := map[*Unit]string{}
	if sel.Modified != nil {
		inScope := make(map[*Unit]bool, len(scope))
		for _, u := range scope {
			inScope[u] = true
		}
		for u, reason := range sel.Modified {
			if inScope[u] {
				why[u] = reason
			}
		}
	} else {
		for _, u := range scope {
			why[u] = WhySelected
		}
	}
	if !sel.NoPropagate {
		p.propagate(why)
	}
	for u, w := range why {
		run.Units = append(run.Units, RunUnit{Unit: u, Why: w})
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
	sort.Strings(names)
	return names
}

// propagate grows the run to a fixed point (§7.2): units whose depends_on
// matches a unit in the run, every unit of a stack modified_by a stack in
// the run, and every unit of an all-for-one stack with a unit in the run.
// Units only propagation added whose depends_on sets prune_on_no_change
// are removed afterwards; the graph keeps the order through them.
func (p *Project) propagate(why map[*Unit]string) {
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
	queue := make([]*Unit, 0, len(why))
	for u := range why {
		queue = append(queue, u)
	}
	sortUnits(queue)
	add := func(u *Unit, reason string) {
		if _, ok := why[u]; !ok {
			why[u] = reason
			queue = append(queue, u)
		}
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
		for _, s := range p.Stacks {
			if s.Leaf && s.IsModifiedBy(u.Stack) {
				for _, v := range s.Units {
					add(v, "modified_by: "+u.Stack.Name)
				}
			}
		}
	}
	for u := range why {
		if !seeded[u] && u.WhenModified.DependsOn != nil && u.WhenModified.PruneOnNoChange {
			delete(why, u)
		}
	}
}
