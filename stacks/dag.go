package stacks

import (
	"fmt"
	"sort"
	"strings"
)

// EdgeKind says what an edge of the unit graph holds back.
type EdgeKind string

const (
	// PlanEdge: the later unit plans only after the earlier one is applied.
	PlanEdge EdgeKind = "plan"
	// ApplyEdge: the later unit applies only after the earlier one is
	// applied; planning is not held.
	ApplyEdge EdgeKind = "apply"
)

// Edge is From -> To: To waits for From.
type Edge struct {
	From, To *Unit
	Kind     EdgeKind
	// Why names the rule: "plan_after", "apply_after" or "depends_on".
	Why string
}

// Graph is the DAG of the units of one run (§6).
type Graph struct {
	Units []*Unit // sorted by dir, workspace, stack
	Edges []Edge
	// Layer of each unit: the longest path to it over plan and apply edges.
	Layer map[*Unit]int

	index    map[*Unit]int32
	in, out  [][]int32 // per unit (index in Units): indexes into Edges
	topoSort []int32
}

// In returns the edges into u (what u waits for), as indexes into Edges.
func (g *Graph) In(u *Unit) []int32 { return g.in[g.index[u]] }

// Out returns the edges out of u (what waits for u), as indexes into Edges.
func (g *Graph) Out(u *Unit) []int32 { return g.out[g.index[u]] }

// GraphOptions shape the graph of a command.
type GraphOptions struct {
	// Destroy reverses plan edges (data flows the other way) and keeps
	// apply edges (promotion order).
	Destroy bool
}

// CycleError reports a cycle between units.
type CycleError struct {
	Cycle []string
}

func (e *CycleError) Error() string {
	return "units form a cycle: " + strings.Join(e.Cycle, " -> ") + "; expected depends_on queries and stack rules without cycles"
}

// Graph builds the unit DAG of a run. Edges follow the resolved stack rules
// and the depends_on queries inside each stack; an edge implied by others
// between the run's stacks is left out, and depends_on order is kept through
// units that are not in the run.
func (p *Project) Graph(units []*Unit, opt GraphOptions) (*Graph, error) {
	g := &Graph{Units: append([]*Unit(nil), units...), Layer: make(map[*Unit]int, len(units))}
	sortUnits(g.Units)
	g.index = make(map[*Unit]int32, len(g.Units))
	runUnitsOf := map[*Stack][]*Unit{}
	for i, u := range g.Units {
		g.index[u] = int32(i)
		runUnitsOf[u.Stack] = append(runUnitsOf[u.Stack], u)
	}
	runStacks := make([]*Stack, 0, len(runUnitsOf))
	for s := range runUnitsOf {
		runStacks = append(runStacks, s)
	}
	sortStacks(runStacks)
	sedges := stackEdges(runStacks)
	count := 0
	for _, se := range sedges {
		count += len(runUnitsOf[se.from]) * len(runUnitsOf[se.to])
	}
	g.Edges = make([]Edge, 0, count)
	add := func(e Edge) {
		if opt.Destroy && e.Kind == PlanEdge {
			e.From, e.To = e.To, e.From
		}
		g.Edges = append(g.Edges, e)
	}
	// Rule edges join different stacks and depends_on edges stay inside
	// one, so no edge is added twice.
	for _, se := range sedges {
		why := "plan_after"
		if se.kind == ApplyEdge {
			why = "apply_after"
		}
		for _, v := range runUnitsOf[se.to] {
			for _, u := range runUnitsOf[se.from] {
				add(Edge{From: u, To: v, Kind: se.kind, Why: why})
			}
		}
	}
	for _, v := range g.Units {
		for _, u := range p.dependsOnInRun(v, g.index) {
			add(Edge{From: u, To: v, Kind: PlanEdge, Why: "depends_on"})
		}
	}
	// Data edges: a consumer plans only after its producers are applied,
	// so no placeholder lands in a plan (§10.1). Prerequisites in the run
	// go before the units that require them (§10.2).
	for _, v := range g.Units {
		seen := map[*Unit]bool{}
		for _, in := range p.inputs[v] {
			if _, ok := g.index[in.Producer]; ok && !seen[in.Producer] && in.Producer != v {
				seen[in.Producer] = true
				add(Edge{From: in.Producer, To: v, Kind: PlanEdge, Why: "inputs"})
			}
		}
		for _, pr := range v.Stack.Prerequisites {
			for _, l := range pr.Stack.Leaves {
				for _, u := range runUnitsOf[l] {
					if u != v && !seen[u] {
						seen[u] = true
						add(Edge{From: u, To: v, Kind: PlanEdge, Why: "prerequisite"})
					}
				}
			}
		}
	}
	g.in = make([][]int32, len(g.Units))
	g.out = make([][]int32, len(g.Units))
	for i, e := range g.Edges {
		to, from := g.index[e.To], g.index[e.From]
		g.in[to] = append(g.in[to], int32(i))
		g.out[from] = append(g.out[from], int32(i))
	}
	if err := g.sortTopologically(); err != nil {
		return nil, err
	}
	layer := make([]int, len(g.Units))
	for _, i := range g.topoSort {
		for _, ei := range g.in[i] {
			if l := layer[g.index[g.Edges[ei].From]] + 1; l > layer[i] {
				layer[i] = l
			}
		}
		g.Layer[g.Units[i]] = layer[i]
	}
	return g, nil
}

type stackEdge struct {
	from, to *Stack
	kind     EdgeKind
}

// stackEdges returns the edges between the run's stacks that no other path
// implies. The rules are transitive, so the run's stacks are linked by
// every relation they have; an edge T -> S is left out when S already waits
// for T through another of the run's stacks: a plan edge when some plan
// predecessor X of S waits for T, an apply edge when any predecessor does
// (any path to S ends with S's apply after T's).
func stackEdges(runStacks []*Stack) []stackEdge {
	n := len(runStacks)
	index := make(map[*Stack]int, n)
	for i, s := range runStacks {
		index[s] = i
	}
	planPreds := make([][]int, n)
	applyPreds := make([][]int, n)
	for i, s := range runStacks {
		for j, t := range runStacks {
			switch {
			case i == j:
			case s.WaitsToPlanFor(t):
				planPreds[i] = append(planPreds[i], j)
			case s.WaitsToApplyFor(t):
				applyPreds[i] = append(applyPreds[i], j)
			}
		}
	}
	// reach[i]: every run stack that stack i waits for, by any path.
	reach := make([]bitset, n)
	done := make([]bool, n)
	var visit func(i int) bitset
	visit = func(i int) bitset {
		if done[i] || reach[i] != nil {
			return reach[i]
		}
		r := newBitset(n)
		reach[i] = r // a cycle cannot occur: rule cycles are config errors
		for _, preds := range [][]int{planPreds[i], applyPreds[i]} {
			for _, j := range preds {
				r.set(j)
				r.or(visit(j))
			}
		}
		done[i] = true
		return r
	}
	var out []stackEdge
	for i := range runStacks {
		viaPlan, viaAny := newBitset(n), newBitset(n)
		for _, j := range planPreds[i] {
			viaPlan.or(visit(j))
			viaAny.or(visit(j))
		}
		for _, j := range applyPreds[i] {
			viaAny.or(visit(j))
		}
		for _, j := range planPreds[i] {
			if !viaPlan.has(j) {
				out = append(out, stackEdge{runStacks[j], runStacks[i], PlanEdge})
			}
		}
		for _, j := range applyPreds[i] {
			if !viaAny.has(j) {
				out = append(out, stackEdge{runStacks[j], runStacks[i], ApplyEdge})
			}
		}
	}
	return out
}

// dependsOn returns the units of v's stack that v's depends_on query
// matches (§7.2: depends_on stays inside its stack).
func (p *Project) dependsOn(v *Unit) []*Unit {
	q := v.WhenModified.DependsOn
	if q == nil {
		return nil
	}
	var out []*Unit
	for _, u := range v.Stack.Units {
		if u != v && q.MatchFrom(u.Subject(), v.Dir) {
			out = append(out, u)
		}
	}
	return out
}

// dependsOnInRun returns the units in the run that v waits for by
// depends_on, looking through units that are not in the run.
func (p *Project) dependsOnInRun(v *Unit, inRun map[*Unit]int32) []*Unit {
	if v.WhenModified.DependsOn == nil {
		return nil
	}
	seen := map[*Unit]bool{v: true}
	var out []*Unit
	queue := p.dependsOn(v)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			continue
		}
		seen[u] = true
		if _, ok := inRun[u]; ok {
			out = append(out, u)
			continue
		}
		queue = append(queue, p.dependsOn(u)...)
	}
	sortUnits(out)
	return out
}

// sortTopologically orders the units so that every edge goes forward, or
// returns a CycleError naming one cycle.
func (g *Graph) sortTopologically() error {
	pending := make([]int32, len(g.Units))
	for i := range g.Units {
		pending[i] = int32(len(g.in[i]))
	}
	order := make([]int32, 0, len(g.Units))
	for i := range g.Units {
		if pending[i] == 0 {
			order = append(order, int32(i))
		}
	}
	for k := 0; k < len(order); k++ {
		for _, ei := range g.out[order[k]] {
			to := g.index[g.Edges[ei].To]
			if pending[to]--; pending[to] == 0 {
				order = append(order, to)
			}
		}
	}
	if len(order) == len(g.Units) {
		g.topoSort = order
		return nil
	}
	return &CycleError{Cycle: g.findCycle(pending)}
}

func (g *Graph) findCycle(pending []int32) []string {
	start := int32(-1)
	for i := range g.Units {
		if pending[i] > 0 {
			start = int32(i)
			break
		}
	}
	// Walk predecessors that are themselves stuck until one repeats.
	seenAt := map[int32]int{}
	var path []int32
	for u := start; ; {
		if i, ok := seenAt[u]; ok {
			cyc := path[i:]
			names := make([]string, 0, len(cyc)+1)
			for j := len(cyc) - 1; j >= 0; j-- {
				names = append(names, g.Units[cyc[j]].Name())
			}
			return append(names, g.Units[cyc[len(cyc)-1]].Name())
		}
		seenAt[u] = len(path)
		path = append(path, u)
		for _, ei := range g.in[u] {
			if from := g.index[g.Edges[ei].From]; pending[from] > 0 {
				u = from
				break
			}
		}
	}
}

// Order returns the units by layer, then by name: a stable display order
// that respects every edge.
func (g *Graph) Order() []*Unit {
	out := append([]*Unit(nil), g.Units...)
	sort.SliceStable(out, func(i, j int) bool { return g.Layer[out[i]] < g.Layer[out[j]] })
	return out
}

// String renders an edge for messages.
func (e Edge) String() string {
	return fmt.Sprintf("%s -> %s (%s)", e.From.Name(), e.To.Name(), e.Kind)
}
