package runner

import (
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// A rule between two stacks is one edge of the graph, and the scheduler
// keeps it as one: two barriers stand between the stacks' units
// (docs/architecture.md#stack-barriers). A stack's exit barrier waits for
// every unit of the stack; a stack's entry barrier, one per kind of rule
// into it, waits for the exit barriers of the stacks it waits for, and its
// units wait for it. A rule between stacks of n and m units is then n + m
// + 1 gates, not n × m.
//
// A barrier is settled as a unit with nothing to change is, the moment its
// last gate opens: it opens the gates it holds when every unit it waits
// for opened; when some of them changed nothing but wait to apply
// themselves (openUnchanged), what waits for the barrier may plan now and
// applies once they open; a failure skips what waits for it, through it.
// So what runs when, what is skipped and why, is what an edge between
// every pair of units would give.

// linkStacks links the gates of the graph's stack edges through barriers.
func (r *runState) linkStacks() {
	exits := map[*stacks.Stack]*unitRun{}
	for _, s := range r.g.Stacks {
		if len(r.g.StackOut(s)) == 0 {
			continue
		}
		x := r.newBarrier(s, false)
		for _, u := range r.g.UnitsOf(s) {
			gate(r.byUnit[u], x, true, false)
		}
		exits[s] = x
	}
	for _, s := range r.g.Stacks {
		in := r.g.StackIn(s)
		if len(in) == 0 {
			continue
		}
		var planAfter []*stacks.Unit
		for _, kind := range []stacks.EdgeKind{stacks.PlanEdge, stacks.ApplyEdge} {
			var e *unitRun
			for _, ei := range in {
				se := r.g.StackEdges[ei]
				if se.Kind != kind {
					continue
				}
				if e == nil {
					e = r.newBarrier(s, true)
				}
				gate(exits[se.From], e, true, false)
				if kind == stacks.PlanEdge {
					planAfter = append(planAfter, r.g.UnitsOf(se.From)...)
				}
			}
			if e == nil {
				continue
			}
			for _, u := range r.g.UnitsOf(s) {
				gate(e, r.byUnit[u], kind == stacks.PlanEdge, false)
			}
		}
		if planAfter != nil {
			// One slice for the stack's units: a saved plan is not
			// reused once one of these was applied after it.
			for _, u := range r.g.UnitsOf(s) {
				ur := r.byUnit[u]
				ur.PlanAfter = append(ur.PlanAfter, planAfter)
			}
		}
	}
}

// newBarrier adds a barrier of stack s: its entry, or its exit.
func (r *runState) newBarrier(s *stacks.Stack, entry bool) *unitRun {
	b := &unitRun{role: RoleBarrier, barrier: s, entry: entry, status: report.StatusPending, waiting: -1}
	r.barriers = append(r.barriers, b)
	return b
}

// settleBarrier settles a barrier whose gates are all open, or open for
// planning: as a unit with nothing to change.
func (r *runState) settleBarrier(b *unitRun) {
	if b.phase != phaseWaitPlan || b.planWaits > 0 {
		return
	}
	b.phase, b.status = phaseDone, report.StatusNoChanges
	r.openUnchanged(b)
}
