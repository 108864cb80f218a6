package stacks

import (
	"fmt"
	"strings"

	"github.com/strata-iac/strata/stacks/config"
)

// ruleKind names one of the three stack relations.
type ruleKind int

const (
	rulePlanAfter ruleKind = iota
	ruleApplyAfter
	ruleModifiedBy
)

func (k ruleKind) String() string {
	return [...]string{"plan_after", "apply_after", "modified_by"}[k]
}

// ownRules returns the stacks a stack's own definition names in one rule,
// with the implicit plan_after of modified_by (docs/behaviour.md#rules step 1) and the legacy
// on_change keys.
func (p *Project) ownRules(s *Stack, kind ruleKind) []*Stack {
	d := s.Def
	if d == nil {
		return nil
	}
	var lists []*[]config.String
	r := d.Rules
	switch kind {
	case rulePlanAfter:
		if r != nil {
			if r.PlanAfter != nil {
				lists = append(lists, r.PlanAfter)
			} else {
				lists = append(lists, r.ModifiedBy)
			}
		}
	case ruleApplyAfter:
		if r != nil {
			lists = append(lists, r.ApplyAfter)
		}
		if d.OnChange != nil {
			lists = append(lists, d.OnChange.CanApplyAfter, d.OnChange.ApplyAfter)
		}
	case ruleModifiedBy:
		if r != nil {
			lists = append(lists, r.ModifiedBy)
		}
	}
	var out []*Stack
	seen := map[*Stack]bool{}
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, ref := range *l {
			// A plain stack naming an instanced one gets every instance:
			// a set, not a search of the list so far.
			ts, _ := p.refStacks(s, ref.Value)
			for _, t := range ts {
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// resolveRules resolves every stack's rules (docs/behaviour.md#rules): (1) implicit plan_after,
// (2) inheritance from every nesting stack, (3) expansion of names to leaf
// stacks. The transitive closure (4) is not stored: a chain of n stacks has
// n²/2 ordered pairs, so the closure is answered by walking the direct
// rules when a question needs it (WaitsToPlanFor, PlanAfterClosure, the
// unit graph, propagation). Cycles over nesting, plan_after and apply_after
// are reported by reportCycles, once the inputs are wired.
func (p *Project) resolveRules(c *config.Collector) {
	for i, s := range p.Stacks {
		s.index = i
	}
	n := len(p.Stacks)
	seen := make([]int, n) // stamp of the stack and kind being resolved
	for kind := rulePlanAfter; kind <= ruleModifiedBy; kind++ {
		own := make([][]*Stack, len(p.Stacks))
		for i, s := range p.Stacks {
			for _, t := range p.ownRules(s, kind) {
				own[i] = append(own[i], t.Leaves...)
			}
		}
		for i, s := range p.Stacks {
			var list []*Stack
			stamp := int(kind)*n + i + 1
			add := func(ts []*Stack) {
				for _, t := range ts {
					// Only a cycle puts a leaf after itself, and a cycle is
					// reported, so a leaf never waits for itself.
					if seen[t.index] != stamp && !(s.Leaf && t == s) {
						seen[t.index] = stamp
						list = append(list, t)
					}
				}
			}
			add(own[i])
			for _, level := range s.Ancestors {
				for _, a := range level {
					add(own[a.index])
				}
			}
			sortStacks(list)
			switch kind {
			case rulePlanAfter:
				s.PlanAfter = list
			case ruleApplyAfter:
				s.ApplyAfter = list
			case ruleModifiedBy:
				s.ModifiedBy = list
			}
		}
	}
	for _, s := range p.Stacks {
		s.modifies = nil
	}
	for _, s := range p.Stacks {
		if s.Leaf {
			for _, t := range s.ModifiedBy {
				t.modifies = append(t.modifies, s)
			}
		}
	}
	for _, s := range p.Stacks {
		levels := append([][]*Stack{{s}}, s.Ancestors...)
		for _, level := range levels {
			for _, a := range level {
				if a.Def == nil || a.Def.Rules == nil {
					continue
				}
				for _, pr := range a.Def.Rules.Prerequisites {
					ts, _ := p.refStacks(a, pr.Stack.Value)
					d, err := config.ParseDuration(pr.SucceededWithin.Value)
					for _, t := range ts {
						if err == nil {
							s.Prerequisites = append(s.Prerequisites, StackPrerequisite{Stack: t, Within: d})
						}
					}
				}
			}
		}
	}
}

// rule returns the stack's resolved direct rule of one kind.
func (s *Stack) rule(kind ruleKind) []*Stack {
	switch kind {
	case rulePlanAfter:
		return s.PlanAfter
	case ruleApplyAfter:
		return s.ApplyAfter
	default:
		return s.ModifiedBy
	}
}

// reaches reports whether t is in s's rule of one kind, transitively. A
// stack never reaches itself: only a cycle would make it, and cycles are
// reported.
func (s *Stack) reaches(kind ruleKind, t *Stack) bool {
	if s == t {
		return false
	}
	seen := map[*Stack]bool{}
	todo := append([]*Stack(nil), s.rule(kind)...)
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if x == t {
			return true
		}
		if !seen[x] {
			seen[x] = true
			todo = append(todo, x.rule(kind)...)
		}
	}
	return false
}

// closure returns every stack in s's rule of one kind, transitively, by
// name, without s itself.
func (s *Stack) closure(kind ruleKind) []*Stack {
	seen := map[*Stack]bool{s: true}
	var out []*Stack
	todo := append([]*Stack(nil), s.rule(kind)...)
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
			todo = append(todo, x.rule(kind)...)
		}
	}
	sortStacks(out)
	return out
}

// orderEdge is one edge of the graph of stacks that cycles are found in:
// from waits for to (or, for nesting, to stands inside from).
type orderEdge struct {
	to   *Stack
	kind string     // "stacks", "plan_after", "apply_after" or "inputs"
	pos  config.Pos // the entry that makes the edge
	key  string     // the entry's config key
}

// reportCycles finds cycles in the graph of stacks whose edges are nesting
// (parent -> child), the plan_after and apply_after rules (stack -> the
// stack it waits for), the rules a leaf inherits from the stacks that nest
// it, and the inputs a leaf takes from other stacks (consumer -> producer:
// an input orders its consumer after its producer as plan_after does). It
// runs after the explicit inputs are wired, so `check` finds a cycle through
// inputs as the unit graph would.
//
// Each distinct cycle is reported once, whichever of its members the search
// entered it from: it is written from its member defined first in the
// config, and reported at the last rule or inputs entry before the cycle
// comes back to that member (the entry that closes it; nesting is never the
// culprit, a cycle needs a rule or an input).
func (p *Project) reportCycles(c *config.Collector) {
	for i, s := range p.Stacks {
		s.index = i
	}
	own := make([][]orderEdge, len(p.Stacks))
	for i, s := range p.Stacks {
		for _, kind := range []ruleKind{rulePlanAfter, ruleApplyAfter} {
			for _, t := range p.ownRules(s, kind) {
				own[i] = append(own[i], orderEdge{to: t, kind: kind.String(), pos: posOfStackRef(s, t, kind.String()),
					key: fmt.Sprintf("stacks.names.%s.rules.%s", s.BaseName(), kind)})
			}
		}
	}
	edges := make([][]orderEdge, len(p.Stacks))
	for i, s := range p.Stacks {
		for _, ch := range s.Children {
			edges[i] = append(edges[i], orderEdge{to: ch, kind: "stacks", pos: posOfStackRef(s, ch, "stacks"), key: "stacks.names." + s.BaseName() + ".stacks"})
		}
		edges[i] = append(edges[i], own[i]...)
		if s.Leaf {
			// A leaf waits for what the stacks nesting it wait for; its
			// own nesting stacks are left out (a rule of a group naming one
			// of its own stacks orders the others after it).
			for _, level := range s.Ancestors {
				for _, a := range level {
					for _, e := range own[a.index] {
						if e.to != s {
							edges[i] = append(edges[i], e)
						}
					}
				}
			}
			edges[i] = append(edges[i], p.inputEdges[s]...)
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int8, len(p.Stacks))
	var path []*Stack
	var via []orderEdge // via[i] is the edge from path[i] to path[i+1]
	reported := map[string]bool{}
	var visit func(s *Stack)
	visit = func(s *Stack) {
		color[s.index] = grey
		path = append(path, s)
		for _, e := range edges[s.index] {
			switch color[e.to.index] {
			case grey:
				if e.kind == "stacks" {
					continue // a pure nesting cycle is reported by breakNestingCycles
				}
				p.reportCycle(c, path, append(via, e), e.to, reported)
			case white:
				via = append(via, e)
				visit(e.to)
				via = via[:len(via)-1]
			}
		}
		path = path[:len(path)-1]
		color[s.index] = black
	}
	for _, s := range p.Stacks {
		if color[s.index] == white {
			visit(s)
		}
	}
}

// reportCycle reports the cycle that the edge last in via closes at to,
// once: path[k] = to, and via[j] leads from path[j] on.
func (p *Project) reportCycle(c *config.Collector, path []*Stack, via []orderEdge, to *Stack, reported map[string]bool) {
	k := len(path) - 1
	for k > 0 && path[k] != to {
		k--
	}
	members, steps := path[k:], via[k:]
	first := 0
	for i, s := range members {
		if s.index < members[first].index {
			first = i
		}
	}
	n := len(members)
	names := make([]string, 0, n+1)
	rot := make([]orderEdge, 0, n)
	for i := 0; i < n; i++ {
		names = append(names, members[(first+i)%n].Name)
		rot = append(rot, steps[(first+i)%n])
	}
	names = append(names, members[first].Name)
	// One cycle as written: the same cycle through each instance of a
	// stack (net[us] -> app -> net[us], net[eu] -> …) is one error.
	written := make([]string, 0, n)
	for i := 0; i < n; i++ {
		written = append(written, members[(first+i)%n].BaseName())
	}
	id := strings.Join(written, " ")
	if reported[id] {
		return
	}
	reported[id] = true
	// The closing entry is the last rule or input of the cycle: a cycle
	// always has one, nesting alone is broken before.
	var closing orderEdge
	rules, inputs := false, false
	for _, e := range rot {
		switch e.kind {
		case "stacks":
			continue
		case "inputs":
			inputs = true
		default:
			rules = true
		}
		closing = e
	}
	if !inputs {
		c.Errorf(closing.pos, closing.key, "rules form a cycle: %s; expected stacks ordered without cycles (a nested stack stands for all its stacks)", strings.Join(names, " -> "))
		return
	}
	what := "inputs form"
	if rules {
		what = "rules and inputs form"
	}
	c.Errorf(closing.pos, closing.key, "%s a cycle: %s; expected stacks ordered without cycles (a stack that takes an input from another is ordered after it)",
		what, strings.Join(names, " -> "))
}
