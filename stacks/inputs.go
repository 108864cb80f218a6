package stacks

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/stacks/config"
)

// Input is one input variable of a unit fed from another unit's output
// (docs/behaviour.md#inputs-between-stacks).
type Input struct {
	Var      string // the consumer's variable
	Producer *Unit
	Output   string
	// From is how the config names it: "network.vpc_id", or
	// "db/prod@default.url" for a {dir, workspace, output} reference.
	From      string
	Sensitive bool // the output is sensitive
	Auto      bool // wired by auto_inputs
}

// Inputs returns a unit's wired inputs, by variable name.
func (p *Project) Inputs(u *Unit) []Input { return p.inputs[u] }

// Consumers returns the units that take an input from u.
func (p *Project) Consumers(u *Unit) []*Unit { return p.consumers[u] }

// moduleInfo is what terraform-config-inspect reads of a dir, once: the
// module, or why it could not read it (warned about by warnUninspectable).
type moduleInfo struct {
	once sync.Once
	mod  *tfconfig.Module
	err  error
}

func (p *Project) module(dir string) *tfconfig.Module {
	p.modulesMu.Lock()
	mi, ok := p.modules[dir]
	if !ok {
		mi = &moduleInfo{}
		p.modules[dir] = mi
	}
	p.modulesMu.Unlock()
	mi.once.Do(func() {
		mi.mod, mi.err = engines.InspectModule(tfconfig.NewOsFs(), filepath.Join(p.Root, filepath.FromSlash(dir)))
	})
	return mi.mod
}

// ModuleAt is the module in an absolute dir as the project read it when it
// loaded (read once, then kept); a dir outside the project is read
// now. A module terraform-config-inspect could not read is its error.
func (p *Project) ModuleAt(dir string) (*tfconfig.Module, error) {
	rel, err := filepath.Rel(p.Root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return engines.InspectModule(tfconfig.NewOsFs(), dir)
	}
	rel = filepath.ToSlash(rel)
	if mod := p.module(rel); mod != nil {
		return mod, nil
	}
	p.modulesMu.Lock()
	err = p.modules[rel].err
	p.modulesMu.Unlock()
	if err == nil {
		err = fmt.Errorf("the module in %s could not be read", rel)
	}
	return nil, err
}

func (p *Project) declaresVar(u *Unit, name string) (*tfconfig.Variable, bool) {
	m := p.module(u.Dir)
	if m == nil {
		return nil, false
	}
	v, ok := m.Variables[name]
	return v, ok
}

func (p *Project) declaresOutput(u *Unit, name string) (*tfconfig.Output, bool) {
	m := p.module(u.Dir)
	if m == nil {
		return nil, false
	}
	o, ok := m.Outputs[name]
	return o, ok
}

// resolveInputs wires every stack's inputs and auto_inputs to producer
// units (docs/behaviour.md#inputs-between-stacks), with errors at the reference: a producer that is not
// exactly one unit (listing the candidates), a variable no unit declares, a
// sensitive output into a variable not declared sensitive, two producers
// for one auto input.
func (p *Project) resolveInputs(c *config.Collector) {
	p.inputs = map[*Unit][]Input{}
	p.consumers = map[*Unit][]*Unit{}
	any := false
	for _, s := range p.Stacks {
		if s.Def != nil && (s.Def.Inputs.Len() > 0 || s.Def.AutoInputs.Value) {
			any = true
		}
	}
	if !any {
		return
	}
	// Every explicit input first: auto_inputs follow the order that other
	// stacks' inputs make too.
	var autos []*Stack
	for _, s := range p.Stacks {
		if !s.Leaf {
			continue
		}
		explicit, auto := p.stackInputs(s)
		for _, e := range explicit {
			p.wireExplicit(s, e.key, e.ref, e.owner, c)
		}
		if auto {
			autos = append(autos, s)
		}
	}
	if len(autos) > 0 {
		w := p.newAutoWiring()
		for _, s := range autos {
			p.wireAuto(s, w, c)
		}
	}
	for u, ins := range p.inputs {
		sort.Slice(ins, func(i, j int) bool { return ins[i].Var < ins[j].Var })
		seen := map[*Unit]bool{}
		for _, in := range ins {
			if !seen[in.Producer] {
				seen[in.Producer] = true
				p.consumers[in.Producer] = append(p.consumers[in.Producer], u)
			}
		}
	}
	for _, cs := range p.consumers {
		sortUnits(cs)
	}
}

type inputEntry struct {
	key   string
	ref   config.InputRef
	pos   config.Pos
	owner *Stack
}

// stackInputs gathers a leaf's inputs, its own and its ancestors' (the
// nearest wins for a variable), and whether auto_inputs is on.
func (p *Project) stackInputs(s *Stack) ([]inputEntry, bool) {
	levels := append([][]*Stack{{s}}, s.Ancestors...)
	byVar := map[string]inputEntry{}
	auto := false
	for _, level := range levels {
		for _, a := range level {
			if a.Def == nil {
				continue
			}
			auto = auto || a.Def.AutoInputs.Value
			if a.Def.Inputs == nil {
				continue
			}
			for _, e := range a.Def.Inputs.Entries {
				if _, nearer := byVar[e.Key]; !nearer {
					byVar[e.Key] = inputEntry{key: e.Key, ref: e.Value, pos: e.KeyPos, owner: a}
				}
			}
		}
	}
	out := make([]inputEntry, 0, len(byVar))
	for _, e := range byVar {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, auto
}

func (p *Project) wireExplicit(s *Stack, varName string, ref config.InputRef, owner *Stack, c *config.Collector) {
	key := fmt.Sprintf("stacks.names.%s.inputs.%s", owner.BaseName(), varName)
	var cands []*Unit
	from := ""
	switch {
	case ref.Dir.Set:
		ws := ref.Workspace.Value
		if ws == "" {
			ws = "default"
		}
		from = fmt.Sprintf("%s@%s.%s", cleanDir(ref.Dir.Value), ws, ref.Output.Value)
		var of []*Stack
		if ref.Stack.Set {
			of, _ = p.refStacks(s, ref.Stack.Value)
		}
		for _, u := range p.unitsOf[cleanDir(ref.Dir.Value)] {
			if !ref.Stack.Set || containsStack(of, u.Stack) {
				if u.Workspace == ws || (u.Origin != nil && u.Origin.Workspace == ws && (len(of) == 1 || s.Instance == "" || u.Stack.Instance == s.Instance)) {
					cands = append(cands, u)
				}
			}
		}
		if len(cands) == 0 {
			c.Errorf(ref.Pos, key, "no unit %s@%s%s; expected the dir and workspace of a unit", ref.Dir.Value, ws, stackNote(ref))
			return
		}
	case ref.Stack.Set:
		from = ref.Stack.Value + "." + ref.Output.Value
		ts, _ := p.refStacks(s, ref.Stack.Value)
		if len(ts) == 0 {
			return // reported as an unknown stack, or a key net has not
		}
		for _, t := range ts {
			for _, l := range t.Leaves {
				cands = append(cands, l.Units...)
			}
		}
	default:
		c.Errorf(ref.Pos, key, "expected <stack>.<output> or {dir, workspace, output}")
		return
	}
	var producers []*Unit
	var all []string
	for _, u := range cands {
		if _, ok := p.declaresOutput(u, ref.Output.Value); ok {
			producers = append(producers, u)
		}
		all = append(all, u.Name())
	}
	switch {
	case len(producers) == 0:
		c.Errorf(ref.Pos, key, "%s: no unit declares output %q (looked in %s)", from, ref.Output.Value, strings.Join(all, ", "))
		return
	case len(producers) > 1:
		names := make([]string, len(producers))
		for i, u := range producers {
			names[i] = u.Name()
		}
		c.Errorf(ref.Pos, key, "%s: %d units declare output %q: %s; name one with {dir, workspace, output}", from, len(producers), ref.Output.Value, strings.Join(names, ", "))
		return
	}
	prod := producers[0]
	out, _ := p.declaresOutput(prod, ref.Output.Value)
	declared, wired := false, false
	for _, u := range s.Units {
		v, ok := p.declaresVar(u, varName)
		if !ok {
			continue
		}
		declared = true
		if out.Sensitive && !v.Sensitive {
			c.Errorf(ref.Pos, key, "%s is a sensitive output and %s declares variable %q without sensitive = true; expected a sensitive variable", from, u.Name(), varName)
			continue
		}
		p.inputs[u] = append(p.inputs[u], Input{Var: varName, Producer: prod, Output: ref.Output.Value, From: from, Sensitive: out.Sensitive})
		wired = true
	}
	if wired && prod.Stack != s {
		if p.inputEdges == nil {
			p.inputEdges = map[*Stack][]orderEdge{}
		}
		p.inputEdges[s] = append(p.inputEdges[s], orderEdge{to: prod.Stack, kind: "inputs", pos: ref.Pos, key: key})
	}
	if !declared && len(s.Units) > 0 {
		c.Errorf(ref.Pos, key, "no unit of stack %s declares variable %q; expected a variable the input feeds", s.Name, varName)
	}
}

func stackNote(ref config.InputRef) string {
	if ref.Stack.Set {
		return " in stack " + ref.Stack.Value
	}
	return ""
}

// autoWiring is what auto_inputs needs of the whole project, made once:
// the units declaring each output, the top-level stacks, and the stacks
// each stack is ordered after, found when first asked.
type autoWiring struct {
	producers map[string][]*Unit // output name -> units declaring it, by stack name then unit
	after     map[*Stack]map[*Stack]bool
	top       []*Stack // stacks no stack nests: siblings of one another
}

func (p *Project) newAutoWiring() *autoWiring {
	w := &autoWiring{producers: map[string][]*Unit{}, after: map[*Stack]map[*Stack]bool{}}
	units := append([]*Unit(nil), p.Units...)
	sort.SliceStable(units, func(i, j int) bool { return units[i].Stack.Name < units[j].Stack.Name })
	for _, u := range units {
		m := p.module(u.Dir)
		if m == nil {
			continue
		}
		for n := range m.Outputs {
			w.producers[n] = append(w.producers[n], u)
		}
	}
	for _, s := range p.Stacks {
		if len(s.Parents) == 0 {
			w.top = append(w.top, s)
		}
	}
	return w
}

// orderedAfter returns the stacks s is ordered after: its plan_after and
// the producers of its explicit inputs, transitively through both, without
// s itself. apply_after does not count: it leaves planning free, and a
// consumer plans only after its producers are applied. Wirings auto_inputs
// made do not count either, so what one stack wires never depends on the
// order stacks are wired in.
func (p *Project) orderedAfter(s *Stack, w *autoWiring) map[*Stack]bool {
	if set, ok := w.after[s]; ok {
		return set
	}
	set := map[*Stack]bool{}
	seen := map[*Stack]bool{s: true}
	todo := []*Stack{s}
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		next := func(t *Stack) {
			if !seen[t] {
				seen[t] = true
				set[t] = true
				todo = append(todo, t)
			}
		}
		for _, t := range x.PlanAfter {
			next(t)
		}
		for _, e := range p.inputEdges[x] {
			next(e.to)
		}
	}
	w.after[s] = set
	return set
}

// autoOwner is the stack whose auto_inputs a leaf follows, where its
// errors point: itself, else the nearest stack nesting it that turns
// auto_inputs on.
func autoOwner(s *Stack) *Stack {
	levels := append([][]*Stack{{s}}, s.Ancestors...)
	for _, level := range levels {
		for _, a := range level {
			if a.Def != nil && a.Def.AutoInputs.Value {
				return a
			}
		}
	}
	return s
}

// siblingLevels returns the leaf stacks auto_inputs looks among when no
// stack s is ordered after has an output, nearest first: the leaves of s's
// siblings (the other stacks under one of its parents; top-level stacks
// are siblings of one another), then those of its parents' siblings (its
// cousins), and so on up upTo levels. s and the stacks nesting it are
// never its siblings.
func (p *Project) siblingLevels(s *Stack, upTo int, w *autoWiring) []map[*Stack]bool {
	levels := append([][]*Stack{{s}}, s.Ancestors...)
	mine := map[*Stack]bool{}
	for _, level := range levels {
		for _, a := range level {
			mine[a] = true
		}
	}
	seen := map[*Stack]bool{}
	out := make([]map[*Stack]bool, 0, upTo+1)
	for d := 0; d <= upTo && d < len(levels); d++ {
		leaves := map[*Stack]bool{}
		for _, x := range levels[d] {
			sibs := w.top
			if len(x.Parents) > 0 {
				sibs = nil
				for _, parent := range x.Parents {
					sibs = append(sibs, parent.Children...)
				}
			}
			for _, y := range sibs {
				if mine[y] {
					continue
				}
				for _, l := range y.Leaves {
					// An instance takes from the instances of its own key
					// (docs/behaviour.md#stack-instances).
					if s.Instance != "" && l.Instance != "" && l.Instance != s.Instance {
						continue
					}
					if !seen[l] && !mine[l] {
						seen[l] = true
						leaves[l] = true
					}
				}
			}
		}
		out = append(out, leaves)
	}
	return out
}

// wireAuto wires each declared variable with no explicit input to the
// output of the same name of exactly one unit: among the stacks this one is
// ordered after, else among its siblings and cousins, nearest first
// (docs/behaviour.md#inputs-between-stacks). A sibling or cousin producer
// orders the consumer after it, as an inputs entry does. Two producers at
// the level that has one are an error, and so is a sibling or cousin
// wiring that would close a cycle.
func (p *Project) wireAuto(s *Stack, w *autoWiring, c *config.Collector) {
	owner := autoOwner(s)
	pos, key := autoPos(owner), "stacks.names."+owner.BaseName()+".auto_inputs"
	// Up to the top, wherever auto_inputs was set: a cousin's output is
	// found as the parent's setting would find it.
	scope := &autoScope{p: p, s: s, upTo: len(s.Ancestors), w: w, after: p.orderedAfter(s, w)}
	for _, u := range s.Units {
		m := p.module(u.Dir)
		if m == nil {
			continue
		}
		names := make([]string, 0, len(m.Variables))
		for n := range m.Variables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if hasInput(p.inputs[u], n) {
				continue
			}
			producers, where := scope.producers(n)
			switch len(producers) {
			case 0:
				continue
			case 1:
			default:
				names := make([]string, len(producers))
				for i, pu := range producers {
					names[i] = pu.Name() + " (stack " + pu.Stack.Name + ")"
				}
				c.Errorf(pos, key, "variable %q of %s: %d %s units declare output %q: %s; expected exactly one producer: settle it with an inputs entry",
					n, u.Name(), len(producers), where, n, strings.Join(names, ", "))
				continue
			}
			prod := producers[0]
			if where != "upstream" {
				if cycle := p.orderCycle(s, prod.Stack); cycle != nil {
					c.Errorf(pos, key, "variable %q of %s: wiring it to output %q of %s (stack %s) would close a cycle: %s; expected a producer that is not ordered after %s: set the variable with an inputs entry or drop the rule that orders %s after %s",
						n, u.Name(), n, prod.Name(), prod.Stack.Name, strings.Join(cycle, " -> "), s.Name, prod.Stack.Name, s.Name)
					continue
				}
			}
			out, _ := p.declaresOutput(prod, n)
			if v := m.Variables[n]; out.Sensitive && !v.Sensitive {
				c.Errorf(pos, key,
					"%s.%s is a sensitive output and %s declares variable %q without sensitive = true; expected a sensitive variable", prod.Stack.Name, n, u.Name(), n)
				continue
			}
			p.inputs[u] = append(p.inputs[u], Input{Var: n, Producer: prod, Output: n, From: prod.Stack.Name + "." + n, Sensitive: out.Sensitive, Auto: true})
			if where != "upstream" {
				p.addAutoEdge(s, prod.Stack, pos, key)
			}
		}
	}
}

// autoScope is where auto_inputs looks for the producers of one stack's
// variables.
type autoScope struct {
	p        *Project
	s        *Stack
	upTo     int
	w        *autoWiring
	after    map[*Stack]bool
	siblings []map[*Stack]bool // found when first needed
}

// producers returns the units that output n at the nearest level that has
// one, and whether that level is "upstream", "sibling" or "cousin".
func (a *autoScope) producers(n string) ([]*Unit, string) {
	producers, where := producersAmong(a.w.producers[n], a.after), "upstream"
	if len(producers) == 0 {
		if a.siblings == nil {
			a.siblings = a.p.siblingLevels(a.s, a.upTo, a.w)
		}
		for d, level := range a.siblings {
			if producers = producersAmong(a.w.producers[n], level); len(producers) > 0 {
				where = map[bool]string{true: "sibling", false: "cousin"}[d == 0]
				break
			}
		}
	}
	return producers, where
}

// producersAmong returns the units of units whose stack is in stacks.
func producersAmong(units []*Unit, stacks map[*Stack]bool) []*Unit {
	var out []*Unit
	for _, u := range units {
		if stacks[u.Stack] {
			out = append(out, u)
		}
	}
	return out
}

// addAutoEdge records that s takes an input from t by auto_inputs: s is
// ordered after t, as by an inputs entry.
func (p *Project) addAutoEdge(s, t *Stack, pos config.Pos, key string) {
	for _, e := range p.autoEdges[s] {
		if e.to == t {
			return
		}
	}
	if p.autoEdges == nil {
		p.autoEdges = map[*Stack][]orderEdge{}
	}
	p.autoEdges[s] = append(p.autoEdges[s], orderEdge{to: t, kind: "inputs", pos: pos, key: key})
}

// orderCycle returns the cycle that ordering s after t would close, as
// stack names from s back to s, or nil: t waits for s already, by
// plan_after, apply_after or inputs (auto_inputs wirings included).
func (p *Project) orderCycle(s, t *Stack) []string {
	if s == t {
		return []string{s.Name, s.Name}
	}
	parent := map[*Stack]*Stack{t: nil}
	queue := []*Stack{t}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range p.waitsFor(x) {
			if _, ok := parent[y]; ok {
				continue
			}
			parent[y] = x
			if y == s {
				var path []string
				for z := y; z != nil; z = parent[z] {
					path = append(path, z.Name)
				}
				// path runs s, …, t; the cycle is s -> t -> … -> s.
				out := []string{s.Name}
				for i := len(path) - 1; i >= 0; i-- {
					out = append(out, path[i])
				}
				return out
			}
			queue = append(queue, y)
		}
	}
	return nil
}

// waitsFor lists the stacks x waits for directly: its resolved plan_after
// and apply_after, and the producers of its inputs.
func (p *Project) waitsFor(x *Stack) []*Stack {
	out := append(append([]*Stack(nil), x.PlanAfter...), x.ApplyAfter...)
	for _, e := range p.inputEdges[x] {
		out = append(out, e.to)
	}
	for _, e := range p.autoEdges[x] {
		out = append(out, e.to)
	}
	return out
}

func hasInput(ins []Input, name string) bool {
	for _, in := range ins {
		if in.Var == name {
			return true
		}
	}
	return false
}

func autoPos(s *Stack) config.Pos {
	if s.Def != nil && s.Def.AutoInputs.Set {
		return s.Def.AutoInputs.Pos
	}
	return s.Pos
}
