package report

import (
	"sort"
	"strings"
)

// pageBox is a stack's box on the graph page: a leaf's holds its units
// in rows per column, a nested stack's the boxes of its children.
type pageBox struct {
	name     string
	parent   *pageBox
	children []*pageBox
	// leaves are the leaf stacks drawn inside the box, itself for a leaf.
	leaves      []string
	first, last int         // the columns it spans
	rows        map[int]int // a leaf's units per column
	levels      int         // boxes from it down to a leaf, 1 for a leaf
	y, h        int
	view        stackView
}

func (b *pageBox) parentName() string {
	if b.parent == nil {
		return ""
	}
	return b.parent.name
}

// pageTree is the stacks of the page as their boxes nest: a stack with
// several parents is drawn once, under the stacks of its unit's stack
// path.
type pageTree struct {
	tops   []*pageBox
	leafOf map[string]*pageBox
	levels int
}

// stackTree nests the boxes of the page's stacks along the units' stack
// paths, the boxes in each box in the order of their first column, then
// of their first unit.
func stackTree(p *GraphPage) *pageTree {
	t := &pageTree{leafOf: map[string]*pageBox{}}
	byPath := map[string]*pageBox{}
	for _, u := range p.Units {
		path := u.StackPath
		if len(path) == 0 || path[len(path)-1] != u.Stack {
			path = []string{u.Stack}
		}
		leaf := t.leafOf[u.Stack]
		if leaf == nil {
			var parent *pageBox
			for i, name := range path {
				key := strings.Join(path[:i+1], "\x00")
				b := byPath[key]
				if b == nil {
					b = &pageBox{name: name, parent: parent, first: u.Layer, last: u.Layer}
					byPath[key] = b
					if parent == nil {
						t.tops = append(t.tops, b)
					} else {
						parent.children = append(parent.children, b)
					}
				}
				parent = b
			}
			leaf = parent
			leaf.rows = map[int]int{}
			t.leafOf[u.Stack] = leaf
			for b := leaf; b != nil; b = b.parent {
				b.leaves = append(b.leaves, u.Stack)
			}
		}
		leaf.rows[u.Layer]++
		for b := leaf; b != nil; b = b.parent {
			b.first, b.last = min(b.first, u.Layer), max(b.last, u.Layer)
		}
	}
	var order func(bs []*pageBox) int
	order = func(bs []*pageBox) int {
		sortStable(bs)
		levels := 0
		for _, b := range bs {
			b.levels = 1 + order(b.children)
			levels = max(levels, b.levels)
		}
		return levels
	}
	t.levels = order(t.tops)
	return t
}

func sortStable(bs []*pageBox) {
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].first < bs[j].first })
}

// liftedRule is a rule between stacks as the page draws it, between two
// boxes.
type liftedRule struct {
	from, to *pageBox
	edge     PageEdge
}

// maxLiftLeaves bounds the leaf stacks over which liftRules looks for
// the boxes a rule holds for whole: past it, each rule is drawn between
// the two leaves it joins, as the graph keeps it.
const maxLiftLeaves = 500

// liftRules draws each rule between stacks between the outermost two
// boxes, one holding its From and one its To, for which every leaf in
// the second waits for every leaf in the first over the rules: a rule a
// nested stack passes to its leaves is drawn once between its box and
// the other's (docs/behaviour.md#the-unit-dag). Rules that come to the
// same two boxes, kind and rule are drawn once.
func (t *pageTree) liftRules(edges []PageEdge) []liftedRule {
	before := map[string][]string{}
	for _, e := range edges {
		before[e.To] = append(before[e.To], e.From)
	}
	waits := map[string]map[string]bool{}
	var waitsFor func(leaf string) map[string]bool
	waitsFor = func(leaf string) map[string]bool {
		if w, ok := waits[leaf]; ok {
			return w
		}
		w := map[string]bool{}
		waits[leaf] = w // a cycle, which the graph refuses, ends here
		for _, b := range before[leaf] {
			w[b] = true
			for x := range waitsFor(b) {
				w[x] = true
			}
		}
		return w
	}
	holds := func(from, to *pageBox) bool {
		for _, q := range to.leaves {
			w := waitsFor(q)
			for _, p := range from.leaves {
				if !w[p] {
					return false
				}
			}
		}
		return true
	}
	type key struct {
		from, to *pageBox
		apply    bool
		via      string
	}
	seen := map[key]bool{}
	var out []liftedRule
	for _, e := range edges {
		fb, tb := t.leafOf[e.From], t.leafOf[e.To]
		if fb == nil || tb == nil {
			continue
		}
		from, to := fb, tb
		if len(t.leafOf) <= maxLiftLeaves {
			from, to = lift(fb, tb, holds)
		}
		k := key{from, to, e.Apply, e.Via}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, liftedRule{from: from, to: to, edge: e})
	}
	return out
}

// lift is the outermost two boxes, one on fb's path and one on tb's,
// below the boxes both paths share, for which holds.
func lift(fb, tb *pageBox, holds func(from, to *pageBox) bool) (*pageBox, *pageBox) {
	pf, pt := chain(fb), chain(tb)
	d := 0
	for d < len(pf) && d < len(pt) && pf[d] == pt[d] {
		d++
	}
	// Pairs further out first: the fewer boxes down from where the paths
	// part, the further out.
	for down := 0; down <= len(pf)+len(pt)-2*d; down++ {
		for i := d; i < len(pf) && i-d <= down; i++ {
			j := d + down - (i - d)
			if j >= len(pt) {
				continue
			}
			from, to := pf[i], pt[j]
			if !within(from, to) && !within(to, from) && holds(from, to) {
				return from, to
			}
		}
	}
	return fb, tb
}

// chain is the boxes from a top box down to b.
func chain(b *pageBox) []*pageBox {
	var out []*pageBox
	for ; b != nil; b = b.parent {
		out = append(out, b)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// within says box a is b or inside it.
func within(a, b *pageBox) bool {
	for ; a != nil; a = a.parent {
		if a == b {
			return true
		}
	}
	return false
}
