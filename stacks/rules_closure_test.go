package stacks

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The rules are stored direct and the closure is walked when asked. These
// tests pin that every answer is the one the materialised closure gives,
// by computing that closure the plain way on random rule graphs.

// randomRules writes a config of n leaf stacks (one dir each, every other
// one in two workspaces) and a few
// nested stacks with rules, all pointing from a later stack to an earlier
// one so no plan_after or apply_after cycle is made; modified_by with an
// explicit empty plan_after may point anywhere, cycles included.
func randomRules(r *rand.Rand, n int) (cfg string, dirs []string) {
	var b strings.Builder
	b.WriteString("dirs:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  d%d:\n    tags: [t%d]\n", i, i)
		if i%2 == 0 {
			// Two units in one stack: propagation must add the one not seeded.
			b.WriteString("    workspaces: {blue: {tags: [blue]}, green: {tags: [green]}}\n")
		}
		dirs = append(dirs, fmt.Sprintf("d%d", i))
	}
	b.WriteString("stacks:\n  names:\n")
	earlier := func(i int) []string {
		var out []string
		for k := r.Intn(3); k > 0 && i > 0; k-- {
			out = append(out, fmt.Sprintf("s%d", r.Intn(i)))
		}
		return out
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    s%d:\n      tag_query: t%d\n      rules:\n", i, i)
		fmt.Fprintf(&b, "        apply_after: [%s]\n", strings.Join(earlier(i), ", "))
		if r.Intn(2) == 0 {
			var any []string
			for k := r.Intn(3); k > 0; k-- {
				any = append(any, fmt.Sprintf("s%d", r.Intn(n)))
			}
			fmt.Fprintf(&b, "        plan_after: []\n        modified_by: [%s]\n", strings.Join(any, ", "))
		} else {
			fmt.Fprintf(&b, "        plan_after: [%s]\n", strings.Join(earlier(i), ", "))
			fmt.Fprintf(&b, "        modified_by: [%s]\n", strings.Join(earlier(i), ", "))
		}
	}
	// Nested stacks over a contiguous range, ordered after leaves below
	// the range, so their rules bind every leaf of the range.
	for g := 0; g < n/5; g++ {
		lo := 1 + r.Intn(n-1)
		hi := lo + 1 + r.Intn(min(4, n-lo))
		var kids []string
		for k := lo; k < hi; k++ {
			kids = append(kids, fmt.Sprintf("s%d", k))
		}
		fmt.Fprintf(&b, "    g%d:\n      stacks: [%s]\n      rules:\n", g, strings.Join(kids, ", "))
		kind := []string{"plan_after", "apply_after", "modified_by"}[r.Intn(3)]
		fmt.Fprintf(&b, "        %s: [%s]\n", kind, strings.Join(earlier(lo), ", "))
	}
	return b.String(), dirs
}

// closureOf is the plain fixed point of a direct rule over every stack.
func closureOf(p *Project, kind ruleKind) map[*Stack]map[*Stack]bool {
	out := map[*Stack]map[*Stack]bool{}
	for _, s := range p.Stacks {
		set := map[*Stack]bool{}
		for _, t := range s.rule(kind) {
			set[t] = true
		}
		out[s] = set
	}
	for changed := true; changed; {
		changed = false
		for _, s := range p.Stacks {
			for t := range out[s] {
				for x := range out[t] {
					if !out[s][x] {
						out[s][x] = true
						changed = true
					}
				}
			}
		}
	}
	for _, s := range p.Stacks {
		if s.Leaf {
			delete(out[s], s) // only a cycle reaches itself; a leaf never waits for itself
		}
	}
	return out
}

// refStackEdges is the unit graph's stack-level reduction computed from the
// materialised closure, as it was before the closure was dropped.
func refStackEdges(runStacks []*Stack, plan, apply map[*Stack]map[*Stack]bool) []stackEdge {
	n := len(runStacks)
	planPreds := make([][]int, n)
	applyPreds := make([][]int, n)
	for i, s := range runStacks {
		for j, t := range runStacks {
			switch {
			case i == j:
			case plan[s][t]:
				planPreds[i] = append(planPreds[i], j)
			case apply[s][t]:
				applyPreds[i] = append(applyPreds[i], j)
			}
		}
	}
	reach := make([]map[int]bool, n)
	var visit func(i int) map[int]bool
	visit = func(i int) map[int]bool {
		if reach[i] != nil {
			return reach[i]
		}
		r := map[int]bool{}
		reach[i] = r
		for _, preds := range [][]int{planPreds[i], applyPreds[i]} {
			for _, j := range preds {
				r[j] = true
				for k := range visit(j) {
					r[k] = true
				}
			}
		}
		return r
	}
	var out []stackEdge
	for i := range runStacks {
		viaPlan, viaAny := map[int]bool{}, map[int]bool{}
		for _, j := range planPreds[i] {
			for k := range visit(j) {
				viaPlan[k], viaAny[k] = true, true
			}
		}
		for _, j := range applyPreds[i] {
			for k := range visit(j) {
				viaAny[k] = true
			}
		}
		for _, j := range planPreds[i] {
			if !viaPlan[j] {
				out = append(out, stackEdge{runStacks[j], runStacks[i], PlanEdge})
			}
		}
		for _, j := range applyPreds[i] {
			if !viaAny[j] {
				out = append(out, stackEdge{runStacks[j], runStacks[i], ApplyEdge})
			}
		}
	}
	return out
}

func TestRulesMatchClosure(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for iter := 0; iter < 40; iter++ {
		n := 3 + r.Intn(18)
		cfg, dirs := randomRules(r, n)
		root := testRepo(t, cfg, dirs...)
		p, diags := loadDiags(t, root)
		if diags.HasErrors() {
			t.Fatalf("config %d: %v\n%s", iter, diags.Errors(), cfg)
		}
		c := closureCheck{t: t, r: r, iter: iter, cfg: cfg, p: p,
			plan: closureOf(p, rulePlanAfter), apply: closureOf(p, ruleApplyAfter), mod: closureOf(p, ruleModifiedBy)}
		c.closures()
		c.stackEdges()
		c.propagation()
	}
}

// closureCheck compares one random config's project with the reference
// closures plan, apply and mod.
type closureCheck struct {
	t                *testing.T
	r                *rand.Rand
	iter             int
	cfg              string
	p                *Project
	plan, apply, mod map[*Stack]map[*Stack]bool
}

// closures checks each stack's rule closures and what it answers about
// every stack.
func (c closureCheck) closures() {
	t, p := c.t, c.p
	for _, s := range p.Stacks {
		for _, k := range []struct {
			name string
			got  []*Stack
			ref  map[*Stack]bool
			ask  func(*Stack) bool
		}{
			{"plan_after", s.PlanAfterClosure(), c.plan[s], s.WaitsToPlanFor},
			{"apply_after", s.ApplyAfterClosure(), c.apply[s], s.WaitsToApplyFor},
			{"modified_by", s.ModifiedByClosure(), c.mod[s], s.IsModifiedBy},
		} {
			var want []string
			for x := range k.ref {
				want = append(want, x.Name)
			}
			sort.Strings(want)
			if got := stackNames(k.got); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("config %d: %s closure of %s = %v, want %v\n%s", c.iter, k.name, s.Name, got, want, c.cfg)
			}
			for _, x := range p.Stacks {
				if k.ask(x) != k.ref[x] {
					t.Errorf("config %d: %s of %s asked about %s = %t", c.iter, k.name, s.Name, x.Name, k.ask(x))
				}
			}
		}
	}
}

// stackEdges checks the stack-level reduction, for the whole run and
// random parts.
func (c closureCheck) stackEdges() {
	t, p := c.t, c.p
	var leaves []*Stack
	for _, s := range p.Stacks {
		if s.Leaf {
			leaves = append(leaves, s)
		}
	}
	for k := 0; k < 5; k++ {
		var runStacks []*Stack
		for _, s := range leaves {
			if k == 0 || c.r.Intn(2) == 0 {
				runStacks = append(runStacks, s)
			}
		}
		sortStacks(runStacks)
		got, want := p.stackEdges(runStacks), refStackEdges(runStacks, c.plan, c.apply)
		if !reflect.DeepEqual(edgeNames(got), edgeNames(want)) {
			t.Errorf("config %d, run %v:\n got %v\nwant %v\n%s", c.iter, stackNames(runStacks), edgeNames(got), edgeNames(want), c.cfg)
		}
	}
}

// propagation checks propagation from each unit, and from a few units
// together.
func (c closureCheck) propagation() {
	t, p := c.t, c.p
	for k := 0; k < len(p.Units)+3; k++ {
		seed := map[*Unit]string{}
		if k < len(p.Units) {
			seed[p.Units[k]] = "selected"
		} else {
			for _, u := range p.Units {
				if c.r.Intn(3) == 0 {
					seed[u] = "selected"
				}
			}
		}
		got, want := map[*Unit]string{}, map[*Unit]string{}
		for u, w := range seed {
			got[u], want[u] = w, w
		}
		p.propagate(got, func(*Unit, string) {})
		refPropagate(p, want, c.mod)
		if !reflect.DeepEqual(whyNames(got), whyNames(want)) {
			t.Errorf("config %d, seed %v:\n got %v\nwant %v\n%s", c.iter, whyNames(seed), whyNames(got), whyNames(want), c.cfg)
		}
	}
}

// refPropagate is propagate's modified_by step over the materialised
// closure (the configs here have no depends_on or all-for-one).
func refPropagate(p *Project, why map[*Unit]string, mod map[*Stack]map[*Stack]bool) {
	stacksIn := map[*Stack]bool{}
	var queue []*Unit
	for u := range why {
		queue = append(queue, u)
	}
	sortUnits(queue)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if stacksIn[u.Stack] {
			continue
		}
		stacksIn[u.Stack] = true
		for _, s := range p.Stacks {
			if s.Leaf && mod[s][u.Stack] {
				for _, v := range s.Units {
					if _, ok := why[v]; !ok {
						why[v] = "modified_by: " + u.Stack.Name
						queue = append(queue, v)
					}
				}
			}
		}
	}
}

func edgeNames(es []stackEdge) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.from.Name+"->"+e.to.Name+":"+string(e.kind))
	}
	return out
}

func whyNames(why map[*Unit]string) []string {
	var out []string
	for u, w := range why {
		out = append(out, u.Name()+": "+w)
	}
	sort.Strings(out)
	return out
}

// TestPropagateModifiedByCycle: with a modified_by cycle (allowed when
// plan_after is written out), a stack is never modified by itself, but the
// other stack of the cycle puts all its units in the run.
func TestPropagateModifiedByCycle(t *testing.T) {
	root := testRepo(t, `dirs:
  a:
    tags: [a]
    workspaces: {blue: {tags: [blue]}, green: {tags: [green]}}
  b:
    tags: [b]
  c:
    tags: [c]
stacks:
  names:
    a: {tag_query: a, rules: {plan_after: [], modified_by: [b]}}
    b: {tag_query: b, rules: {plan_after: [], modified_by: [a]}}
    c: {tag_query: c, rules: {modified_by: [b]}}
`, "a", "b", "c")
	p := loadRepo(t, root)
	why := map[*Unit]string{p.UnitsIn("a")[0]: "selected"}
	p.propagate(why, func(*Unit, string) {})
	want := []string{"a@blue: selected", "a@green: modified_by: b", "b@default: modified_by: a", "c@default: modified_by: a"}
	if got := whyNames(why); !reflect.DeepEqual(got, want) {
		t.Errorf("run:\n got %v\nwant %v", got, want)
	}
}
