package stacks

import (
	"fmt"
	"strings"
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
// with the implicit plan_after of modified_by (§5.5 step 1) and the legacy
// on_change keys.
func (p *Project) ownRules(s *Stack, kind ruleKind) []*Stack {
	d := s.Def
	if d == nil {
		return nil
	}
	var lists []*[]String
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
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, ref := range *l {
			if t, ok := p.byName[ref.Value]; ok && !containsStack(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// resolveRules resolves every stack's rules (§5.5): (1) implicit plan_after,
// (2) inheritance from every nesting stack, (3) expansion of names to leaf
// stacks. The transitive closure (4) is not stored: a chain of n stacks has
// n²/2 ordered pairs, so the closure is answered by walking the direct
// rules when a question needs it (WaitsToPlanFor, PlanAfterClosure, the
// unit graph, propagation). Cycles over nesting, plan_after and apply_after
// are reported first with the full cycle.
func (p *Project) resolveRules(c *collector) {
	p.reportRuleCycles(c)

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
					t, ok := p.byName[pr.Stack.Value]
					d, err := ParseDuration(pr.SucceededWithin.Value)
					if ok && err == nil {
						s.Prerequisites = append(s.Prerequisites, StackPrerequisite{Stack: t, Within: d})
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

// reportRuleCycles finds cycles in the graph of stacks whose edges are
// nesting (parent -> child) and the plan_after and apply_after rules
// (stack -> the stack it waits for). Each cycle is reported once, as the
// full cycle: `base -> dev -> base`.
func (p *Project) reportRuleCycles(c *collector) {
	type edge struct {
		to   *Stack
		kind string
	}
	edges := map[*Stack][]edge{}
	for _, s := range p.Stacks {
		for _, ch := range s.Children {
			edges[s] = append(edges[s], edge{ch, "stacks"})
		}
		for _, t := range p.ownRules(s, rulePlanAfter) {
			edges[s] = append(edges[s], edge{t, "plan_after"})
		}
		for _, t := range p.ownRules(s, ruleApplyAfter) {
			edges[s] = append(edges[s], edge{t, "apply_after"})
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := map[*Stack]int{}
	var path []*Stack
	reported := map[string]bool{}
	var visit func(s *Stack)
	visit = func(s *Stack) {
		color[s] = grey
		path = append(path, s)
		for _, e := range edges[s] {
			switch color[e.to] {
			case grey:
				if e.kind == "stacks" {
					continue // a pure nesting cycle is reported by breakNestingCycles
				}
				cycle := cyclePath(path, e.to)
				key := canonicalCycle(cycle)
				if !reported[key] {
					reported[key] = true
					c.errorf(posOfStackRef(s, e.to.Name, e.kind), fmt.Sprintf("stacks.names.%s.rules.%s", s.Name, e.kind),
						"rules form a cycle: %s; expected stacks ordered without cycles (a nested stack stands for all its stacks)", strings.Join(cycle, " -> "))
				}
			case white:
				visit(e.to)
			}
		}
		path = path[:len(path)-1]
		color[s] = black
	}
	for _, s := range p.Stacks {
		if color[s] == white {
			visit(s)
		}
	}
}

// canonicalCycle names a cycle independently of where it was entered.
func canonicalCycle(cycle []string) string {
	names := cycle[:len(cycle)-1]
	best := 0
	for i := range names {
		if names[i] < names[best] {
			best = i
		}
	}
	rot := append(append([]string(nil), names[best:]...), names[:best]...)
	return strings.Join(rot, " ")
}
