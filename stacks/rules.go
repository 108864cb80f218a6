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
// stacks, (4) transitive closure per rule kind. Cycles over nesting,
// plan_after and apply_after are reported first with the full cycle.
func (p *Project) resolveRules(c *collector) {
	p.reportRuleCycles(c)

	n := len(p.Stacks)
	for i, s := range p.Stacks {
		s.index = i
	}
	for kind := rulePlanAfter; kind <= ruleModifiedBy; kind++ {
		// direct[i]: the leaves stack i names in this rule, its own and
		// inherited from every stack nesting it, expanded.
		own := make([]bitset, n)
		for i, s := range p.Stacks {
			own[i] = newBitset(n)
			for _, t := range p.ownRules(s, kind) {
				for _, l := range t.Leaves {
					own[i].set(l.index)
				}
			}
		}
		direct := make([]bitset, n)
		for i, s := range p.Stacks {
			direct[i] = newBitset(n)
			direct[i].or(own[i])
			for _, level := range s.Ancestors {
				for _, a := range level {
					direct[i].or(own[a.index])
				}
			}
		}
		// closed[i]: direct[i] and everything its leaves reach.
		closed := make([]bitset, n)
		state := make([]uint8, n) // 0 new, 1 on the path, 2 done
		var visit func(i int) bitset
		visit = func(i int) bitset {
			if state[i] != 0 {
				return closed[i] // on a cycle (reported above) this is partial
			}
			state[i] = 1
			c := newBitset(n)
			closed[i] = c
			c.or(direct[i])
			direct[i].each(func(j int) {
				if j != i {
					c.or(visit(j))
				}
			})
			state[i] = 2
			return c
		}
		for i, s := range p.Stacks {
			c := visit(i)
			if s.Leaf && c.has(i) {
				// Only a cycle puts a stack after itself; it was reported.
				c = append(bitset(nil), c...)
				c.clear(i)
			}
			var list []*Stack
			c.each(func(j int) { list = append(list, p.Stacks[j]) })
			sortStacks(list)
			switch kind {
			case rulePlanAfter:
				s.PlanAfter, s.planAfter = list, c
			case ruleApplyAfter:
				s.ApplyAfter, s.applyAfter = list, c
			case ruleModifiedBy:
				s.ModifiedBy, s.modifiedBy = list, c
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
