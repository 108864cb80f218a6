package stacks

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
func (p *Project) addDependencies(why map[*Unit]string) {
	queue := make([]*Unit, 0, len(why))
	for u := range why {
		queue = append(queue, u)
	}
	sortUnits(queue)
	add := func(u, of *Unit, edge string) {
		if _, ok := why[u]; !ok {
			why[u] = WhyDependencyOf + of.Name() + " (" + edge + ")"
			queue = append(queue, u)
		}
	}
	// The rules of a stack are the same for each of its units: walked once.
	walked := map[*Stack]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if !walked[v.Stack] {
			walked[v.Stack] = true
			for _, r := range []struct {
				kind ruleKind
				name string
			}{{rulePlanAfter, "plan_after"}, {ruleApplyAfter, "apply_after"}} {
				for _, s := range ruleStacksWithUnits(v.Stack, r.kind) {
					for _, u := range s.Units {
						add(u, v, r.name)
					}
				}
			}
		}
		for _, u := range p.dependsOn(v) {
			add(u, v, "depends_on")
		}
		for _, in := range p.inputs[v] {
			if in.Producer == v {
				continue
			}
			edge := "inputs"
			if in.Auto {
				edge = "auto_inputs"
			}
			add(in.Producer, v, edge)
		}
	}
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
