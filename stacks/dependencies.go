package stacks

import (
	"sort"
	"strings"
)

// WhyDependencyOf starts the `why` of a unit --with-dependencies added:
// `dependency_of: <unit> (<edge>)` names the unit it was added for and the
// edge it waits by (docs/behaviour.md#dependencies).
const WhyDependencyOf = "dependency_of: "

// addDependencies grows the run by every unit a unit of the run waits for,
// transitively, over the edges of the unit DAG that say so: plan_after and
// apply_after between stacks (through stacks without units), depends_on
// inside a stack, and inputs and auto_inputs from producers
// (docs/behaviour.md#dependencies). Prerequisites are left to their own
// rule, which brings a stale one in.
func (p *Project) addDependencies(why map[*Unit]string, also func(u *Unit, reason string)) {
	queue := make([]*Unit, 0, len(why))
	for u := range why {
		queue = append(queue, u)
	}
	sortUnits(queue)
	// The rules of a stack are the same for each of its units: walked once.
	walked := map[*Stack]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		p.dependencies(v, walked, func(u *Unit, edge string) {
			reason := WhyDependencyOf + v.Name() + " (" + edge + ")"
			if _, ok := why[u]; ok {
				also(u, reason)
				return
			}
			why[u] = reason
			queue = append(queue, u)
		})
	}
}

// dependencies calls dep for each unit v waits for directly, with the
// edge it waits by; the stack rules of a stack in walked are left out, as
// walked already.
func (p *Project) dependencies(v *Unit, walked map[*Stack]bool, dep func(u *Unit, edge string)) {
	if !walked[v.Stack] {
		walked[v.Stack] = true
		for _, r := range []struct {
			kind ruleKind
			name string
		}{{rulePlanAfter, "plan_after"}, {ruleApplyAfter, "apply_after"}} {
			for _, s := range ruleStacksWithUnits(v.Stack, r.kind) {
				for _, u := range s.Units {
					dep(u, r.name)
				}
			}
		}
	}
	for _, u := range p.dependsOn(v) {
		dep(u, "depends_on")
	}
	for _, in := range p.inputs[v] {
		if in.Producer == v {
			continue
		}
		edge := "inputs"
		if in.Auto {
			edge = "auto_inputs"
		}
		dep(in.Producer, edge)
	}
}

// keepNeeded takes out of a destroy's run each dependency
// --with-dependencies added that a unit outside the run still waits for,
// and what only those wait for in turn, each with why it stays: a destroy
// tears down what the selection alone needs, never what others still
// read (docs/behaviour.md#dependencies). One walk from the units outside
// the run: a dependency it reaches stays, and its own dependencies are
// walked in turn, as it stays to need them.
func (p *Project) keepNeeded(why map[*Unit]string) []RunUnit {
	var kept []RunUnit
	var queue []*Unit
	for _, w := range p.Units {
		if _, in := why[w]; !in {
			queue = append(queue, w)
		}
	}
	walked := map[*Stack]bool{}
	for len(queue) > 0 {
		w := queue[0]
		queue = queue[1:]
		p.dependencies(w, walked, func(u *Unit, edge string) {
			if r, in := why[u]; in && strings.HasPrefix(r, WhyDependencyOf) {
				delete(why, u)
				kept = append(kept, RunUnit{Unit: u, Why: "needed by " + w.Name() + " (" + edge + ")"})
				queue = append(queue, u)
			}
		})
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name() < kept[j].Name() })
	return kept
}

// ruleStacksWithUnits are the stacks s's rule of one kind names that have
// units, looking through those that have none, as the unit DAG orders
// through them.
func ruleStacksWithUnits(s *Stack, kind ruleKind) []*Stack {
	seen := map[*Stack]bool{s: true}
	var out []*Stack
	todo := append([]*Stack(nil), s.rule(kind)...)
	for len(todo) > 0 {
		x := todo[0]
		todo = todo[1:]
		if seen[x] {
			continue
		}
		seen[x] = true
		if len(x.Units) > 0 {
			out = append(out, x)
			continue
		}
		todo = append(todo, x.rule(kind)...)
	}
	return out
}
