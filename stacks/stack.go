package stacks

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/strata-iac/strata/stacks/config"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// DefaultStack is the name of the stack that holds dirspaces no other stack
// matches (docs/behaviour.md#stacks-and-membership).
const DefaultStack = "default"

// Stack is a stack after resolution: its place in the nesting, its members
// and its effective variables, engine and rules (docs/behaviour.md#stacks-and-membership,
// #nesting-and-inheritance).
type Stack struct {
	Name     string
	Def      *config.StackDef // nil for the implicit default
	Pos      config.Pos       // where its name is written
	Implicit bool             // the implicit default stack
	Leaf     bool
	Query    *tagquery.Query // leaf stacks only

	Children []*Stack
	Parents  []*Stack
	// Ancestors by distance: Ancestors[0] are the parents, [1] the
	// grandparents, … An ancestor reached at several distances counts at
	// the nearest.
	Ancestors [][]*Stack
	// Leaves are the leaf stacks under this one (itself for a leaf), by name.
	Leaves []*Stack
	// Path is the lexicographically smallest root-to-this path.
	Path []string

	Variables []Variable // effective, by name (leaves; own for nested)
	Sensitive map[string]bool
	Engine    *config.Engine // nearest stack engine, nil when none
	EngineOf  string         // the stack that set Engine
	AutoApply bool
	// AutoApplyIf is what a plan must hold for auto_apply to apply it.
	AutoApplyIf config.AutoApplyCondition
	AllForOne   bool
	Targets     []string

	// Rules after resolution: the stack's own and inherited rules,
	// expanded to leaf stacks, by name. They are direct: a stack that s
	// waits for through another one is not listed; WaitsToPlanFor and the
	// *Closure methods answer the transitive questions.
	PlanAfter     []*Stack
	ApplyAfter    []*Stack
	ModifiedBy    []*Stack
	Prerequisites []StackPrerequisite

	Units []*Unit // members; for a nested stack, its leaves' units

	// Base and Instance are, for an instance of a stack with for_each (or
	// nested in one), the stack's name as written and the instance's key:
	// net and us for net[us]; "" otherwise
	// (docs/behaviour.md#stack-instances).
	Base, Instance string
	// InstancePos is where the instance's key is written.
	InstancePos config.Pos
	// instanceDef is what the key adds, when this stack's own for_each
	// writes it.
	instanceDef *config.Instance

	index    int      // in Project.Stacks
	modifies []*Stack // the leaves whose ModifiedBy names this stack
}

// Variable is one effective stack variable.
type Variable struct {
	Name      string
	Value     string
	Sensitive bool
	From      string // the stack that set it
	// instance: the stack's instance key sets it, over the stack's own.
	instance bool
}

// StackPrerequisite is a resolved `rules.prerequisites` entry.
type StackPrerequisite struct {
	Stack  *Stack
	Within time.Duration
}

// Kind is "leaf" or "nested".
func (s *Stack) Kind() string {
	if s.Leaf {
		return "leaf"
	}
	return "nested"
}

// WaitsToPlanFor reports whether s's plan waits for t's apply: t is in
// s's plan_after, transitively.
func (s *Stack) WaitsToPlanFor(t *Stack) bool { return s.reaches(rulePlanAfter, t) }

// WaitsToApplyFor reports whether s's apply waits for t's apply: t is in
// s's apply_after, transitively.
func (s *Stack) WaitsToApplyFor(t *Stack) bool { return s.reaches(ruleApplyAfter, t) }

// IsModifiedBy reports whether t in the run puts s in the run: t is in s's
// modified_by, transitively.
func (s *Stack) IsModifiedBy(t *Stack) bool { return s.reaches(ruleModifiedBy, t) }

// PlanAfterClosure is the transitive closure of PlanAfter, by name.
func (s *Stack) PlanAfterClosure() []*Stack { return s.closure(rulePlanAfter) }

// ApplyAfterClosure is the transitive closure of ApplyAfter, by name.
func (s *Stack) ApplyAfterClosure() []*Stack { return s.closure(ruleApplyAfter) }

// ModifiedByClosure is the transitive closure of ModifiedBy, by name.
func (s *Stack) ModifiedByClosure() []*Stack { return s.closure(ruleModifiedBy) }

// Variable returns the value of an effective variable.
func (s *Stack) Variable(name string) (string, bool) {
	i := sort.Search(len(s.Variables), func(i int) bool { return s.Variables[i].Name >= name })
	if i < len(s.Variables) && s.Variables[i].Name == name {
		return s.Variables[i].Value, true
	}
	return "", false
}

// buildStacks creates the stacks and their nesting, reporting nesting
// cycles.
func (p *Project) buildStacks(c *config.Collector) {
	cfg := p.Config
	if cfg.Stacks == nil || cfg.Stacks.Names == nil {
		return
	}
	for i := range cfg.Stacks.Names.Entries {
		e := &cfg.Stacks.Names.Entries[i]
		s := &Stack{Name: e.Key, Def: &e.Value, Pos: e.KeyPos, Leaf: e.Value.TagQuery != nil}
		if s.Leaf {
			if q, err := tagquery.Parse(e.Value.TagQuery.Value); err == nil {
				s.Query = q
			}
		}
		p.Stacks = append(p.Stacks, s)
		p.byName[s.Name] = s
	}
	for _, s := range p.Stacks {
		if s.Leaf || s.Def.Stacks == nil {
			continue
		}
		for _, ref := range *s.Def.Stacks {
			if child, ok := p.byName[ref.Value]; ok && !containsStack(s.Children, child) {
				s.Children = append(s.Children, child)
				child.Parents = append(child.Parents, s)
			}
		}
	}
	p.breakNestingCycles(c)
	p.expandInstances(c)
	for _, s := range p.Stacks {
		s.Ancestors = ancestorsByDistance(s)
		s.Leaves = leavesOf(s, map[*Stack]bool{})
		sortStacks(s.Leaves)
	}
}

func containsStack(ss []*Stack, s *Stack) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// breakNestingCycles reports every stack that nests itself and removes the
// edge that closes the cycle, so the rest of resolution terminates.
func (p *Project) breakNestingCycles(c *config.Collector) {
	const (
		white = iota
		grey
		black
	)
	color := map[*Stack]int{}
	var stack []*Stack
	var visit func(s *Stack)
	visit = func(s *Stack) {
		color[s] = grey
		stack = append(stack, s)
		for i := 0; i < len(s.Children); i++ {
			child := s.Children[i]
			switch color[child] {
			case grey:
				cycle := cyclePath(stack, child)
				c.Errorf(posOfStackRef(s, child, "stacks"), "stacks.names."+s.Name+".stacks",
					"stack nests itself: %s; expected nesting without cycles", strings.Join(cycle, " -> "))
				s.Children = append(s.Children[:i], s.Children[i+1:]...)
				child.Parents = removeStack(child.Parents, s)
				i--
			case white:
				visit(child)
			}
		}
		stack = stack[:len(stack)-1]
		color[s] = black
	}
	for _, s := range p.Stacks {
		if color[s] == white {
			visit(s)
		}
	}
}

func removeStack(ss []*Stack, s *Stack) []*Stack {
	out := ss[:0]
	for _, x := range ss {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// cyclePath renders the cycle that closes at `to`, from the DFS stack.
func cyclePath(stack []*Stack, to *Stack) []string {
	i := len(stack) - 1
	for i > 0 && stack[i] != to {
		i--
	}
	var names []string
	for _, s := range stack[i:] {
		names = append(names, s.Name)
	}
	return append(names, to.Name)
}

// posOfStackRef finds where stack s names stack to in one of its lists:
// by its name, or for an instance by its stack's name as well (net names
// net[us]).
func posOfStackRef(s *Stack, to *Stack, list string) config.Pos {
	if s.Def == nil {
		return s.Pos
	}
	var lists []*[]config.String
	switch list {
	case "stacks":
		lists = append(lists, s.Def.Stacks)
	case "plan_after", "apply_after":
		if r := s.Def.Rules; r != nil {
			lists = append(lists, r.PlanAfter, r.ApplyAfter, r.ModifiedBy)
		}
		if oc := s.Def.OnChange; oc != nil {
			lists = append(lists, oc.ApplyAfter, oc.CanApplyAfter)
		}
	}
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, r := range *l {
			if r.Value == to.Name || to.Base != "" && r.Value == to.Base {
				return r.Pos
			}
		}
	}
	return s.Pos
}

func ancestorsByDistance(s *Stack) [][]*Stack {
	var out [][]*Stack
	seen := map[*Stack]bool{s: true}
	level := s.Parents
	for len(level) > 0 {
		var cur, next []*Stack
		for _, a := range level {
			if seen[a] {
				continue
			}
			seen[a] = true
			cur = append(cur, a)
			next = append(next, a.Parents...)
		}
		if len(cur) == 0 {
			break
		}
		sortStacks(cur)
		out = append(out, cur)
		level = next
	}
	return out
}

func leavesOf(s *Stack, seen map[*Stack]bool) []*Stack {
	if seen[s] {
		return nil
	}
	seen[s] = true
	if s.Leaf {
		return []*Stack{s}
	}
	var out []*Stack
	for _, c := range s.Children {
		out = append(out, leavesOf(c, seen)...)
	}
	return out
}

func sortStacks(ss []*Stack) {
	sort.Slice(ss, func(i, j int) bool { return ss[i].Name < ss[j].Name })
}

// assign matches every dirspace against the leaf stacks and creates the
// units (docs/behaviour.md#stacks-and-membership).
func (p *Project) assign(c *config.Collector) {
	subjects := make([]tagquery.Subject, len(p.Dirspaces))
	for i, ds := range p.Dirspaces {
		subjects[i] = tagquery.Subject{Tags: ds.Tags, Dir: ds.Dir}
	}
	ix := tagquery.NewIndex(subjects)
	userDefault := p.byName[DefaultStack]
	matches := make([][]*Stack, len(p.Dirspaces))
	selects := map[*Stack]bool{}
	for _, s := range p.Stacks {
		if !s.Leaf || s.Query == nil {
			continue
		}
		set := s.Query.Select(ix)
		selects[s] = !set.IsEmpty()
		if s != userDefault {
			set.Each(func(i int) { matches[i] = append(matches[i], s) })
		}
	}
	p.warnUnmatchedQueries(ix, selects, c)
	allow := p.Config.Stacks != nil && p.Config.Stacks.AllowWorkspaceInMultipleStacks.Value
	var implicit *Stack
	dropped := map[*Dirspace]bool{}
	for i, ds := range p.Dirspaces {
		m := matches[i]
		if ds.fromSelection && len(m) > 0 && m[0].Instance != "" && distinctBases(m) == 1 {
			// The workspace selected in an instanced dir is one of its
			// instances' (docs/behaviour.md#workspaces-in-drop-in).
			dropped[ds] = true
			continue
		}
		if len(m) == 0 {
			switch {
			case userDefault == nil:
				if implicit == nil {
					implicit = &Stack{Name: DefaultStack, Implicit: true, Leaf: true, Query: tagquery.MustParse("")}
					implicit.Leaves = []*Stack{implicit}
					p.Stacks = append(p.Stacks, implicit)
					p.byName[DefaultStack] = implicit
				}
				m = []*Stack{implicit}
			case userDefault.Leaf && userDefault.Query != nil && userDefault.Query.Match(subjects[i]):
				m = []*Stack{userDefault}
			default:
				p.Unassigned = append(p.Unassigned, ds)
				continue
			}
		}
		bases := distinctBases(m)
		if bases > 1 && !allow {
			// The first stack keeps the dirspace, with all its instances;
			// the error points at the next stack's tag query.
			first := m[0].BaseName()
			next := m[slices.IndexFunc(m, func(s *Stack) bool { return s.BaseName() != first })]
			names := stackNames(m)
			c.Errorf(next.Def.TagQuery.Pos, "stacks.names."+next.BaseName()+".tag_query",
				"dirspace %s matches stacks %s; expected one stack per dirspace: narrow the tag queries, or set stacks.allow_workspace_in_multiple_stacks: true",
				ds.ID(), strings.Join(names, ", "))
			m = firstBase(m)
			bases = 1
		}
		for _, s := range m {
			u := &Unit{Dirspace: ds, Stack: s}
			if s.Instance != "" {
				u = instanceUnit(ds, s)
			}
			u.Shared = bases > 1
			p.Units = append(p.Units, u)
			s.Units = append(s.Units, u)
			p.unitsOf[ds.Dir] = append(p.unitsOf[ds.Dir], u)
		}
	}
	if len(dropped) > 0 {
		p.Dirspaces = slices.DeleteFunc(p.Dirspaces, func(ds *Dirspace) bool { return dropped[ds] })
	}
	if n := len(p.Unassigned); n > 0 {
		ids := make([]string, 0, n)
		for _, ds := range p.Unassigned {
			ids = append(ids, ds.ID())
		}
		c.Warnf(p.byName[DefaultStack].Pos, "stacks.names.default",
			"%d dirspace(s) match no stack and will not run, because default is defined and does not match them: %s", n, strings.Join(ids, ", "))
	}
	sortUnits(p.Units)
	for _, s := range p.Stacks {
		sortUnits(s.Units)
	}
}

// resolveStacks computes paths, effective variables, engine and auto_apply,
// and the rules after inheritance and expansion.
func (p *Project) resolveStacks(c *config.Collector) {
	paths := map[*Stack][]string{}
	for _, s := range p.Stacks {
		s.Path = smallestPath(s, paths)
	}
	for _, s := range p.Stacks {
		p.resolveInherited(s, c)
	}
	// Nested stacks gather their leaves' units.
	for _, s := range p.Stacks {
		if !s.Leaf {
			for _, l := range s.Leaves {
				s.Units = append(s.Units, l.Units...)
			}
			sortUnits(s.Units)
		}
	}
	for _, u := range p.Units {
		u.Tags = unitTags(u.Dirspace, u.Stack)
	}
	p.resolveRules(c)
	p.checkInstanceRefs(c)
}

func smallestPath(s *Stack, memo map[*Stack][]string) []string {
	if p, ok := memo[s]; ok {
		return p
	}
	memo[s] = []string{s.Name} // guards against cycles, which are reported elsewhere
	var best []string
	for _, parent := range s.Parents {
		cand := append(append([]string(nil), smallestPath(parent, memo)...), s.Name)
		if best == nil || lessPath(cand, best) {
			best = cand
		}
	}
	if best == nil {
		best = []string{s.Name}
	}
	memo[s] = best
	return best
}

func lessPath(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// resolveInherited computes what a stack takes from itself and its
// ancestors: variables (nearest wins), sensitive names, engine, auto_apply,
// run strategy and targets. Two ancestors at the same distance that
// disagree are an error naming both.
func (p *Project) resolveInherited(s *Stack, c *config.Collector) {
	levels := append([][]*Stack{{s}}, s.Ancestors...)
	vars := map[string]Variable{}
	s.Sensitive = map[string]bool{}
	engineSet, autoSet, strategySet, targetsSet := false, false, false, false
	for _, level := range levels {
		levelVars := map[string]Variable{}
		var levelEngine *Stack
		var levelAuto *Stack
		// The engine and auto_apply an instance's own key sets, which win
		// over its stack's at the same level.
		var levelEngineDef *config.Engine
		var levelAutoDef config.AutoApply
		for _, a := range level {
			d := a.Def
			if d == nil {
				continue
			}
			if in := a.instanceDef; in != nil {
				p.inheritInstance(s, a, in, levelVars, &targetsSet)
				if !engineSet && in.Engine != nil && levelEngine == nil {
					levelEngine, levelEngineDef = a, in.Engine
				}
				if !autoSet && in.AutoApply.Set() && levelAuto == nil {
					levelAuto, levelAutoDef = a, in.AutoApply
				}
			}
			for _, n := range d.Sensitive {
				s.Sensitive[n.Value] = true
			}
			if d.Variables != nil {
				for _, v := range d.Variables.Entries {
					if prev, ok := levelVars[v.Key]; ok && prev.instance && prev.From == a.Name {
						continue
					}
					if prev, ok := levelVars[v.Key]; ok && prev.Value != v.Value.Value {
						c.Errorf(v.KeyPos, "stacks.names."+a.Name+".variables."+v.Key,
							"stacks %s and %s are both %s of %s and set %s differently (%q, %q); expected one value at one distance",
							prev.From, a.Name, relation(s, a), s.Name, v.Key, prev.Value, v.Value.Value)
						continue
					}
					levelVars[v.Key] = Variable{Name: v.Key, Value: v.Value.Value, From: a.Name}
				}
			}
			if !engineSet && d.Engine != nil && !(levelEngine == a && levelEngineDef != nil) {
				if levelEngine != nil && !sameEngine(engineOfLevel(levelEngine, levelEngineDef), d.Engine) {
					c.Errorf(d.Engine.Pos, "stacks.names."+a.Name+".engine",
						"stacks %s and %s are both %s of %s and set different engines; expected one engine at one distance", levelEngine.Name, a.Name, relation(s, a), s.Name)
				} else if levelEngine == nil {
					levelEngine = a
				}
			}
			if !autoSet && !(levelAuto == a && levelAutoDef.Set()) {
				if v, ok := explicitAutoApply(d); ok {
					if levelAuto != nil {
						if w := autoApplyOfLevel(levelAuto, levelAutoDef); w.On() != v.On() || w.Condition() != v.Condition() {
							c.Errorf(d.Pos, "stacks.names."+a.Name+".auto_apply",
								"stacks %s and %s are both %s of %s and set auto_apply differently; expected one value at one distance", levelAuto.Name, a.Name, relation(s, a), s.Name)
						}
					} else {
						levelAuto = a
					}
				}
			}
			if !strategySet && d.OnChange != nil && d.OnChange.RunStrategy.Set {
				s.AllForOne, strategySet = d.OnChange.RunStrategy.Value == "all-for-one", true
			}
			if !targetsSet && len(d.Targets) > 0 {
				s.Targets, targetsSet = config.Strings(d.Targets), true
			}
		}
		for name, v := range levelVars {
			if _, nearer := vars[name]; !nearer {
				vars[name] = v
			}
		}
		if levelEngine != nil {
			s.Engine, s.EngineOf, engineSet = engineOfLevel(levelEngine, levelEngineDef), levelEngine.Name, true
		}
		if levelAuto != nil {
			a := autoApplyOfLevel(levelAuto, levelAutoDef)
			s.AutoApply, s.AutoApplyIf = a.On(), a.Condition()
			autoSet = true
		}
	}
	s.Variables = make([]Variable, 0, len(vars))
	for _, v := range vars {
		v.Sensitive = s.Sensitive[v.Name] || strings.HasSuffix(v.Name, "_secret")
		s.Variables = append(s.Variables, v)
	}
	sort.Slice(s.Variables, func(i, j int) bool { return s.Variables[i].Name < s.Variables[j].Name })
}

// inheritInstance adds what stack a's instance key sets (its variables
// and targets) to the level of a being resolved for s: over a's own.
func (p *Project) inheritInstance(s, a *Stack, in *config.Instance, levelVars map[string]Variable, targetsSet *bool) {
	if in.Variables != nil {
		for _, v := range in.Variables.Entries {
			levelVars[v.Key] = Variable{Name: v.Key, Value: v.Value.Value, From: a.Name, instance: true}
		}
	}
	if !*targetsSet && len(in.Targets) > 0 {
		s.Targets, *targetsSet = config.Strings(in.Targets), true
	}
}

// engineOfLevel is the engine the stack that set a level's engine sets:
// its instance key's, else its own.
func engineOfLevel(a *Stack, inst *config.Engine) *config.Engine {
	if inst != nil {
		return inst
	}
	return a.Def.Engine
}

// autoApplyOfLevel is the auto_apply the stack that set a level's sets:
// its instance key's, else its own.
func autoApplyOfLevel(a *Stack, inst config.AutoApply) config.AutoApply {
	if inst.Set() {
		return inst
	}
	v, _ := explicitAutoApply(a.Def)
	return v
}

func relation(s, a *Stack) string {
	if s == a {
		return "the stack itself"
	}
	for i, level := range s.Ancestors {
		if containsStack(level, a) {
			switch i {
			case 0:
				return "parents"
			case 1:
				return "grandparents"
			default:
				return fmt.Sprintf("ancestors at distance %d", i+1)
			}
		}
	}
	return "ancestors"
}

// explicitAutoApply is the auto_apply a stack writes, rules' or its own.
func explicitAutoApply(d *config.StackDef) (config.AutoApply, bool) {
	if d == nil {
		return config.AutoApply{}, false
	}
	if d.Rules != nil && d.Rules.AutoApply.Set() {
		return d.Rules.AutoApply, true
	}
	if d.AutoApply.Set() {
		return d.AutoApply, true
	}
	return config.AutoApply{}, false
}

func sameEngine(a, b *config.Engine) bool {
	return a.Name.Value == b.Name.Value && a.VersionString().Value == b.VersionString().Value
}

// firstBase keeps the stacks of m named as the first one is written: a
// dirspace that matches more than one stack where the config does not
// allow it stays with the first, and all its instances.
func firstBase(m []*Stack) []*Stack {
	first := m[0].BaseName()
	return slices.DeleteFunc(slices.Clone(m), func(s *Stack) bool { return s.BaseName() != first })
}
