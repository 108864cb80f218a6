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

// Graph is the DAG of the units of one run (docs/behaviour.md#the-unit-dag).
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
	g, runUnitsOf := newGraph(units)
	runStacks := make([]*Stack, 0, len(runUnitsOf))
	for s := range runUnitsOf {
		runStacks = append(runStacks, s)
	}
	sortStacks(runStacks)
	sedges := p.stackEdges(runStacks)
	count := 0
	for _, se := range sedges {
		count += len(runUnitsOf[se.from]) * len(runUnitsOf[se.to])
	}
	g.Edges = make([]Edge, 0, count)
	// Rule edges join different stacks and depends_on edges stay inside
	// one, so no edge is added twice.
	g.addRuleEdges(sedges, runUnitsOf, opt)
	for _, v := range g.Units {
		for _, u := range p.dependsOnInRun(v, g.index) {
			g.addEdge(Edge{From: u, To: v, Kind: PlanEdge, Why: "depends_on"}, opt)
		}
	}
	p.addDataEdges(g, runUnitsOf, opt)
	g.indexEdges()
	if err := g.sortTopologically(); err != nil {
		return nil, err
	}
	g.setLayers()
	return g, nil
}

// newGraph returns an edgeless graph of the sorted units and the run's
// units of each stack.
func newGraph(units []*Unit) (*Graph, map[*Stack][]*Unit) {
	g := &Graph{Units: append([]*Unit(nil), units...), Layer: make(map[*Unit]int, len(units))}
	sortUnits(g.Units)
	g.index = make(map[*Unit]int32, len(g.Units))
	runUnitsOf := map[*Stack][]*Unit{}
	for i, u := range g.Units {
		g.index[u] = int32(i)
		runUnitsOf[u.Stack] = append(runUnitsOf[u.Stack], u)
	}
	return g, runUnitsOf
}

// addEdge adds e to the graph, a plan edge reversed when destroying.
func (g *Graph) addEdge(e Edge, opt GraphOptions) {
	if opt.Destroy && e.Kind == PlanEdge {
		e.From, e.To = e.To, e.From
	}
	g.Edges = append(g.Edges, e)
}

// addRuleEdges adds an edge between every pair of run units that a stack
// edge joins.
func (g *Graph) addRuleEdges(sedges []stackEdge, runUnitsOf map[*Stack][]*Unit, opt GraphOptions) {
	for _, se := range sedges {
		why := "plan_after"
		if se.kind == ApplyEdge {
			why = "apply_after"
		}
		for _, v := range runUnitsOf[se.to] {
			for _, u := range runUnitsOf[se.from] {
				g.addEdge(Edge{From: u, To: v, Kind: se.kind, Why: why}, opt)
			}
		}
	}
}

// addDataEdges adds the edges into each unit from its input producers and
// prerequisites in the run.
func (p *Project) addDataEdges(g *Graph, runUnitsOf map[*Stack][]*Unit, opt GraphOptions) {
	// Data edges: a consumer plans only after its producers are applied,
	// so no placeholder lands in a plan (docs/behaviour.md#inputs-between-stacks). Prerequisites in the run
	// go before the units that require them (docs/behaviour.md#prerequisites).
	for _, v := range g.Units {
		seen := map[*Unit]bool{}
		for _, in := range p.inputs[v] {
			if _, ok := g.index[in.Producer]; ok && !seen[in.Producer] && in.Producer != v {
				seen[in.Producer] = true
				g.addEdge(Edge{From: in.Producer, To: v, Kind: PlanEdge, Why: "inputs"}, opt)
			}
		}
		for _, pr := range v.Stack.Prerequisites {
			for _, l := range pr.Stack.Leaves {
				for _, u := range runUnitsOf[l] {
					if u != v && !seen[u] {
						seen[u] = true
						g.addEdge(Edge{From: u, To: v, Kind: PlanEdge, Why: "prerequisite"}, opt)
					}
				}
			}
		}
	}
}

// indexEdges records the edges into and out of each unit.
func (g *Graph) indexEdges() {
	g.in = make([][]int32, len(g.Units))
	g.out = make([][]int32, len(g.Units))
	for i, e := range g.Edges {
		to, from := g.index[e.To], g.index[e.From]
		g.in[to] = append(g.in[to], int32(i))
		g.out[from] = append(g.out[from], int32(i))
	}
}

// setLayers sets the layer of each unit from the topological order.
func (g *Graph) setLayers() {
	layer := make([]int, len(g.Units))
	for _, i := range g.topoSort {
		for _, ei := range g.in[i] {
			if l := layer[g.index[g.Edges[ei].From]] + 1; l > layer[i] {
				layer[i] = l
			}
		}
		g.Layer[g.Units[i]] = layer[i]
	}
}

type stackEdge struct {
	from, to *Stack
	kind     EdgeKind
}

// stackEdges returns the edges between the run's stacks that no other path
// implies. A run stack S waits to plan for every run stack its plan_after
// reaches and to apply for every other run stack its apply_after reaches;
// an edge T -> S is left out when S already waits for T through another of
// the run's stacks: a plan edge when some plan predecessor X of S waits for
// T, an apply edge when any predecessor does (any path to S ends with S's
// apply after T's).
//
// The closure is never built: a rule path from S to T that passes through
// another run stack X makes X a predecessor of S that waits for T, so only
// the run stacks reached without passing another one (S's frontier) can
// give an edge, and the predecessors of S wait for exactly what its
// frontier waits for. A chain of n stacks is then n edges, not n²/2 pairs.
func (p *Project) stackEdges(runStacks []*Stack) []stackEdge {
	planF, applyF := p.frontiers(runStacks)
	return unimpliedEdges(runStacks, planF, applyF)
}

// frontiers returns the plan and apply frontiers of each run stack.
func (p *Project) frontiers(runStacks []*Stack) (planF, applyF [][]int32) {
	n := len(runStacks)
	run := make([]int32, len(p.Stacks)) // 1+ index in runStacks, 0 outside the run
	for i, s := range runStacks {
		run[s.index] = int32(i) + 1
	}
	// planF[i], applyF[i]: the frontier of run stack i per rule kind, as
	// indexes into runStacks, in increasing order. A stack in both is a
	// plan predecessor only.
	planF = make([][]int32, n)
	applyF = make([][]int32, n)
	seen := make([]int32, len(p.Stacks)) // stamp of the walk that reached a stack
	stamp := int32(0)
	frontier := func(s *Stack, kind ruleKind) []int32 {
		stamp++
		seen[s.index] = stamp
		var out []int32
		todo := append([]*Stack(nil), s.rule(kind)...)
		for len(todo) > 0 {
			x := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if seen[x.index] == stamp {
				continue
			}
			seen[x.index] = stamp
			if r := run[x.index]; r > 0 {
				out = append(out, r-1)
				continue
			}
			todo = append(todo, x.rule(kind)...)
		}
		sortInt32s(out)
		return out
	}
	for i, s := range runStacks {
		planF[i] = frontier(s, rulePlanAfter)
		applyF[i] = subtractSorted(frontier(s, ruleApplyAfter), planF[i])
	}
	return planF, applyF
}

// unimpliedEdges returns the edges from each run stack's frontier that no
// other predecessor implies.
func unimpliedEdges(runStacks []*Stack, planF, applyF [][]int32) []stackEdge {
	// reached[j] == mark: run stack j waits, by any path, for one of the
	// predecessors of the stack being reduced.
	reached := make([]int32, len(runStacks))
	mark := int32(0)
	var todo []int32
	walkFrom := func(preds []int32) {
		for _, j := range preds {
			todo = append(todo, planF[j]...)
			todo = append(todo, applyF[j]...)
		}
		for len(todo) > 0 {
			k := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if reached[k] != mark {
				reached[k] = mark
				todo = append(todo, planF[k]...)
				todo = append(todo, applyF[k]...)
			}
		}
	}
	var out []stackEdge
	for i := range runStacks {
		mark++
		// With one predecessor nothing else can imply its edge.
		single := len(planF[i])+len(applyF[i]) == 1
		if !single {
			walkFrom(planF[i])
		}
		for _, j := range planF[i] {
			if single || reached[j] != mark {
				out = append(out, stackEdge{runStacks[j], runStacks[i], PlanEdge})
			}
		}
		if !single {
			walkFrom(applyF[i])
		}
		for _, j := range applyF[i] {
			if single || reached[j] != mark {
				out = append(out, stackEdge{runStacks[j], runStacks[i], ApplyEdge})
			}
		}
	}
	return out
}

func sortInt32s(a []int32) {
	sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
}

// subtractSorted returns the members of a that are not in b; both sorted.
func subtractSorted(a, b []int32) []int32 {
	out := a[:0]
	k := 0
	for _, x := range a {
		for k < len(b) && b[k] < x {
			k++
		}
		if k < len(b) && b[k] == x {
			continue
		}
		out = append(out, x)
	}
	return out
}

// dependsOn returns the units of v's stack that v's depends_on query
// matches (docs/behaviour.md#propagation: depends_on stays inside its stack).
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
