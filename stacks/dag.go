package stacks

import (
	"fmt"
	"slices"
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
	// Why names the rule: "plan_after", "apply_after", "prerequisite",
	// "depends_on" or "inputs".
	Why string
}

// StackEdge is a rule between two stacks of a run, kept as one edge: every
// unit of To waits for every unit of From (docs/architecture.md#the-unit-dag).
type StackEdge struct {
	From, To *Stack
	Kind     EdgeKind
	// Why names the rule: "plan_after", "apply_after" or "prerequisite".
	Why string
}

// String renders a stack edge for messages.
func (e StackEdge) String() string {
	return fmt.Sprintf("stack %s -> stack %s (%s)", e.From.Name, e.To.Name, e.Kind)
}

// Graph is the DAG of the units of one run (docs/behaviour.md#the-unit-dag):
// the edges between units (depends_on, inputs) and the rules between the
// run's stacks, each rule once. Its size is O(units + unit edges + stack
// edges): a rule between two stacks of a thousand units each is one edge,
// not a million (docs/architecture.md#the-unit-dag).
type Graph struct {
	Units []*Unit // sorted by dir, workspace, stack
	// Edges are the edges between two units: depends_on and inputs.
	Edges []Edge
	// Stacks are the stacks with a unit in the graph, sorted; StackEdges
	// the rules between them that no other path implies.
	Stacks     []*Stack
	StackEdges []StackEdge
	// Layer of each unit: the longest path to it over plan and apply
	// edges, a stack edge counting as an edge from each unit of its From.
	Layer map[*Unit]int

	index             map[*Unit]int32
	in, out           [][]int32 // per unit (index in Units): indexes into Edges
	unitsOf           map[*Stack][]*Unit
	stackIn, stackOut map[*Stack][]int32 // indexes into StackEdges
	topoSort          []int32
}

// In returns the unit edges into u, as indexes into Edges; the stack
// edges into u's stack are StackIn(u.Stack).
func (g *Graph) In(u *Unit) []int32 { return g.in[g.index[u]] }

// Out returns the unit edges out of u, as indexes into Edges; the stack
// edges out of u's stack are StackOut(u.Stack).
func (g *Graph) Out(u *Unit) []int32 { return g.out[g.index[u]] }

// UnitsOf returns the graph's units of stack s, in the order of Units.
func (g *Graph) UnitsOf(s *Stack) []*Unit { return g.unitsOf[s] }

// StackIn returns the stack edges into s (what its units wait for), as
// indexes into StackEdges.
func (g *Graph) StackIn(s *Stack) []int32 { return g.stackIn[s] }

// StackOut returns the stack edges out of s, as indexes into StackEdges.
func (g *Graph) StackOut(s *Stack) []int32 { return g.stackOut[s] }

// Has reports whether u is in the graph.
func (g *Graph) Has(u *Unit) bool {
	_, ok := g.index[u]
	return ok
}

// Expand returns every edge between two units, each stack edge as an edge
// from every unit of its From to every unit of its To: the graph as a list
// of unit pairs, for whoever needs them (graph --expand). Its size is the
// product of the stacks' sizes; nothing strata runs uses it.
func (g *Graph) Expand() []Edge {
	out := append([]Edge(nil), g.Edges...)
	for _, se := range g.StackEdges {
		for _, v := range g.unitsOf[se.To] {
			for _, u := range g.unitsOf[se.From] {
				out = append(out, Edge{From: u, To: v, Kind: se.Kind, Why: se.Why})
			}
		}
	}
	return out
}

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

// Graph builds the unit DAG of a run. Stack edges follow the resolved
// stack rules and prerequisites between the run's stacks, an edge implied
// by others left out; unit edges follow the depends_on queries inside each
// stack, with depends_on order kept through units that are not in the
// run, and the inputs between units.
func (p *Project) Graph(units []*Unit, opt GraphOptions) (*Graph, error) {
	g := newGraph(units)
	sedges := p.stackEdges(g.Stacks)
	for _, se := range sedges {
		why := "plan_after"
		if se.kind == ApplyEdge {
			why = "apply_after"
		}
		g.addStackEdge(StackEdge{From: se.from, To: se.to, Kind: se.kind, Why: why}, opt)
	}
	g.addPrerequisiteEdges(opt)
	for _, v := range g.Units {
		for _, u := range p.dependsOnInRun(v, g.index) {
			g.addEdge(Edge{From: u, To: v, Kind: PlanEdge, Why: "depends_on"}, opt)
		}
	}
	p.addInputEdges(g, opt)
	g.indexEdges()
	if err := g.walk(); err != nil {
		return nil, err
	}
	return g, nil
}

// newGraph returns an edgeless graph of the sorted units and their stacks.
func newGraph(units []*Unit) *Graph {
	g := &Graph{Units: append([]*Unit(nil), units...), Layer: make(map[*Unit]int, len(units))}
	sortUnits(g.Units)
	g.index = make(map[*Unit]int32, len(g.Units))
	g.unitsOf = map[*Stack][]*Unit{}
	for i, u := range g.Units {
		g.index[u] = int32(i)
		if _, ok := g.unitsOf[u.Stack]; !ok {
			g.Stacks = append(g.Stacks, u.Stack)
		}
		g.unitsOf[u.Stack] = append(g.unitsOf[u.Stack], u)
	}
	sortStacks(g.Stacks)
	return g
}

// addEdge adds e to the graph, a plan edge reversed when destroying.
func (g *Graph) addEdge(e Edge, opt GraphOptions) {
	if opt.Destroy && e.Kind == PlanEdge {
		e.From, e.To = e.To, e.From
	}
	g.Edges = append(g.Edges, e)
}

// addStackEdge adds e to the graph, a plan edge reversed when destroying.
func (g *Graph) addStackEdge(e StackEdge, opt GraphOptions) {
	if opt.Destroy && e.Kind == PlanEdge {
		e.From, e.To = e.To, e.From
	}
	g.StackEdges = append(g.StackEdges, e)
}

// addPrerequisiteEdges adds an edge into each run stack from the run
// stacks its prerequisites stand for (docs/behaviour.md#prerequisites).
func (g *Graph) addPrerequisiteEdges(opt GraphOptions) {
	for _, s := range g.Stacks {
		var seen []*Stack
		for _, pr := range s.Prerequisites {
			for _, l := range pr.Stack.Leaves {
				if l == s || g.unitsOf[l] == nil || containsStack(seen, l) {
					continue
				}
				seen = append(seen, l)
				g.addStackEdge(StackEdge{From: l, To: s, Kind: PlanEdge, Why: "prerequisite"}, opt)
			}
		}
	}
}

// addInputEdges adds the edges into each unit from its input producers in
// the run: a consumer plans only after its producers are applied, so no
// placeholder lands in a plan (docs/behaviour.md#inputs-between-stacks).
func (p *Project) addInputEdges(g *Graph, opt GraphOptions) {
	for _, v := range g.Units {
		var seen []*Unit
		for _, in := range p.inputs[v] {
			if _, ok := g.index[in.Producer]; ok && in.Producer != v && !slices.Contains(seen, in.Producer) {
				seen = append(seen, in.Producer)
				g.addEdge(Edge{From: in.Producer, To: v, Kind: PlanEdge, Why: "inputs"}, opt)
			}
		}
	}
}

// indexEdges records the edges into and out of each unit and stack.
func (g *Graph) indexEdges() {
	g.in = make([][]int32, len(g.Units))
	g.out = make([][]int32, len(g.Units))
	for i, e := range g.Edges {
		to, from := g.index[e.To], g.index[e.From]
		g.in[to] = append(g.in[to], int32(i))
		g.out[from] = append(g.out[from], int32(i))
	}
	g.stackIn = map[*Stack][]int32{}
	g.stackOut = map[*Stack][]int32{}
	for i, e := range g.StackEdges {
		g.stackIn[e.To] = append(g.stackIn[e.To], int32(i))
		g.stackOut[e.From] = append(g.stackOut[e.From], int32(i))
	}
}

// walk sorts the units topologically and sets their layers, or returns a
// CycleError naming one cycle. It walks a graph of the units and two
// nodes per stack, its exit (every unit of the stack done) and its entry
// (every stack edge into it open), so a stack edge costs one edge here
// too: unit -> its stack's exit -> entry of each stack waiting for it ->
// each unit of that stack.
func (g *Graph) walk() error {
	n, m := len(g.Units), len(g.Stacks)
	stackAt := make(map[*Stack]int32, m)
	for i, s := range g.Stacks {
		stackAt[s] = int32(i)
	}
	exit := func(s *Stack) int32 { return int32(n) + stackAt[s] }
	entry := func(s *Stack) int32 { return int32(n+m) + stackAt[s] }
	nodes := n + 2*m
	// succ[i]: the nodes after node i.
	succ := make([][]int32, nodes)
	pending := make([]int32, nodes)
	link := func(from, to int32) {
		succ[from] = append(succ[from], to)
		pending[to]++
	}
	for i, u := range g.Units {
		if len(g.stackOut[u.Stack]) > 0 {
			link(int32(i), exit(u.Stack))
		}
		if len(g.stackIn[u.Stack]) > 0 {
			link(entry(u.Stack), int32(i))
		}
		for _, ei := range g.out[i] {
			link(int32(i), g.index[g.Edges[ei].To])
		}
	}
	for _, e := range g.StackEdges {
		link(exit(e.From), entry(e.To))
	}
	order := make([]int32, 0, nodes)
	for i := range nodes {
		if pending[i] == 0 {
			order = append(order, int32(i))
		}
	}
	layer := make([]int, nodes)
	for k := 0; k < len(order); k++ {
		x := order[k]
		for _, y := range succ[x] {
			// A unit to a unit and an exit to an entry add a layer; a
			// unit to its stack's exit and an entry to its units do not.
			step := 0
			if (x < int32(n)) == (y < int32(n)) {
				step = 1
			}
			layer[y] = max(layer[y], layer[x]+step)
			if pending[y]--; pending[y] == 0 {
				order = append(order, y)
			}
		}
	}
	if len(order) < nodes {
		return &CycleError{Cycle: g.findCycle(succ, pending)}
	}
	g.topoSort = make([]int32, 0, n)
	for _, x := range order {
		if x < int32(n) {
			g.topoSort = append(g.topoSort, x)
			g.Layer[g.Units[x]] = layer[x]
		}
	}
	return nil
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

// findCycle names the units of one cycle among the nodes walk could not
// order: it walks back over stuck predecessors until one repeats.
func (g *Graph) findCycle(succ [][]int32, pending []int32) []string {
	pred := make([][]int32, len(succ))
	for x, ys := range succ {
		for _, y := range ys {
			pred[y] = append(pred[y], int32(x))
		}
	}
	start := int32(-1)
	for i := range pending {
		if pending[i] > 0 {
			start = int32(i)
			break
		}
	}
	seenAt := map[int32]int{}
	var path []int32
	for x := start; ; {
		if i, ok := seenAt[x]; ok {
			cyc := path[i:]
			var names []string
			for j := len(cyc) - 1; j >= 0; j-- {
				if int(cyc[j]) < len(g.Units) {
					names = append(names, g.Units[cyc[j]].Name())
				}
			}
			return append(names, names[0])
		}
		seenAt[x] = len(path)
		path = append(path, x)
		for _, p := range pred[x] {
			if pending[p] > 0 {
				x = p
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
