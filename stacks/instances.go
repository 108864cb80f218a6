package stacks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-iac/strata/internal/spell"
	"github.com/strata-iac/strata/stacks/config"
)

// Stack instances (docs/behaviour.md#stack-instances): a stack with
// `for_each`, or nested in one that has it, is replaced by one stack per
// key, named `net[us]`, before anything else is resolved. Each instance is
// a stack like any other from then on: membership, inheritance, rules,
// inputs and the unit graph see instances only. What ties them together is
// Base and Instance, and the project's instancesOf.

// instancing is what expansion knows of one stack as the config writes it.
type instancing struct {
	keys []string
	// from is the stack whose for_each gives the keys: the stack itself or
	// the one ancestor that has for_each.
	from *Stack
}

// expandInstances replaces every stack that has for_each, or is nested in
// a stack that has it, by its instances, and wires the nesting between
// them: an instance's child is the child's instance of the same key; a
// stack without instances nests every instance of an instanced child.
func (p *Project) expandInstances(c *config.Collector) {
	inst := map[*Stack]instancing{}
	has := false
	for _, s := range p.Stacks {
		if s.Def != nil && s.Def.ForEach != nil {
			has = true
		}
	}
	if !has {
		return
	}
	var keysOf func(s *Stack, seen map[*Stack]bool) instancing
	keysOf = func(s *Stack, seen map[*Stack]bool) instancing {
		if in, ok := inst[s]; ok {
			return in
		}
		if seen[s] {
			return instancing{}
		}
		seen[s] = true
		var own instancing
		if s.Def != nil && s.Def.ForEach != nil {
			own = instancing{keys: s.Def.ForEach.Keys(), from: s}
		}
		for _, parent := range s.Parents {
			up := keysOf(parent, seen)
			switch {
			case up.from == nil || up.from == own.from:
			case own.from == nil:
				own = up
			case own.from == s:
				c.Errorf(s.Def.ForEach.Pos, "stacks.names."+s.Name+".for_each",
					"stack %s has for_each and is nested in %s, which has for_each too; expected for_each at one level of a nesting", s.Name, up.from.Name)
			default:
				c.Errorf(s.Pos, "stacks.names."+s.Name,
					"stack %s is nested in %s and in %s, which both have for_each; expected for_each at one level of a nesting", s.Name, own.from.Name, up.from.Name)
			}
		}
		inst[s] = own
		return own
	}
	for _, s := range p.Stacks {
		keysOf(s, map[*Stack]bool{})
	}
	p.instancesOf = map[string][]*Stack{}
	byKey := map[*Stack]map[string]*Stack{}
	var out []*Stack
	for _, s := range p.Stacks {
		in := inst[s]
		if in.from == nil {
			out = append(out, s)
			continue
		}
		byKey[s] = map[string]*Stack{}
		for _, key := range in.keys {
			is := &Stack{Name: config.InstanceName(s.Name, key), Base: s.Name, Instance: key, Def: s.Def, Pos: s.Pos, Leaf: s.Leaf, Query: s.Query}
			if in.from == s {
				e, _ := s.Def.ForEach.Lookup(key)
				is.instanceDef, is.InstancePos = &e.Value, e.KeyPos
			} else {
				e, _ := in.from.Def.ForEach.Lookup(key)
				is.InstancePos = e.KeyPos
			}
			out = append(out, is)
			byKey[s][key] = is
			p.instancesOf[s.Name] = append(p.instancesOf[s.Name], is)
		}
	}
	// The nesting between instances.
	for _, s := range p.Stacks {
		versions := []*Stack{s}
		if m := byKey[s]; m != nil {
			versions = p.instancesOf[s.Name]
		}
		for _, v := range versions {
			var children []*Stack
			for _, child := range s.Children {
				m := byKey[child]
				switch {
				case m == nil:
					children = append(children, child)
				case v.Instance != "" && m[v.Instance] != nil:
					children = append(children, m[v.Instance])
				case v.Instance == "":
					children = append(children, p.instancesOf[child.Name]...)
				}
			}
			v.Children = children
			v.Parents = nil
		}
	}
	for _, s := range out {
		for _, child := range s.Children {
			child.Parents = append(child.Parents, s)
		}
	}
	p.Stacks = out
	p.byName = make(map[string]*Stack, len(out))
	for _, s := range out {
		p.byName[s.Name] = s
	}
}

// Instances returns the instances of the stack written as name, in the
// order of its for_each keys; nil for a stack without instances.
func (p *Project) Instances(name string) []*Stack { return p.instancesOf[name] }

// StacksNamed returns the stacks a name given by a user stands for: one
// instance (`net[eu]`), every instance of a stack with for_each (`net`),
// or the stack of that name.
func (p *Project) StacksNamed(name string) []*Stack {
	if s, ok := p.byName[name]; ok {
		return []*Stack{s}
	}
	return p.instancesOf[name]
}

// refStacks resolves a reference the config of stack from makes to
// another stack (docs/behaviour.md#stack-instances): `net[eu]` is that
// instance; `net`, for a stack with instances, is the instance of from's
// own key when from is an instance, else every instance; any other name is
// the stack of that name. why is not "" when the reference cannot be
// resolved: from's key is not one of net's keys.
func (p *Project) refStacks(from *Stack, name string) (out []*Stack, why string) {
	if s, ok := p.byName[name]; ok {
		return []*Stack{s}, ""
	}
	all := p.instancesOf[name]
	if len(all) == 0 {
		if base, key, ok := config.SplitInstance(name); ok && key != "" {
			if insts := p.instancesOf[base]; len(insts) > 0 {
				// Word for word the config's own check (stacks/config,
				// stackRefs.ref), which reports a stack's own keys: the
				// two fold into one error.
				keys := instanceKeys(insts)
				msg := fmt.Sprintf("stack %s has no instance %q; expected one of its for_each keys: %s", base, key, spell.List(keys))
				if best := spell.Typo(key, keys); best != "" {
					msg += " (did you mean " + strconv.Quote(best) + "?)"
				}
				return nil, msg
			}
			if _, ok := p.byName[base]; ok {
				return nil, fmt.Sprintf("stack %s has no instances; expected %s, or for_each on %s", base, base, base)
			}
		}
		return nil, ""
	}
	if from == nil || from.Instance == "" {
		return all, ""
	}
	if s, ok := p.byName[config.InstanceName(name, from.Instance)]; ok {
		return []*Stack{s}, ""
	}
	return nil, fmt.Sprintf("%s has instance key %q and %s has no instance of that key (its keys: %s); expected %s's keys among %s's, or one instance named, as %s[%s]",
		from.Name, from.Instance, name, strings.Join(instanceKeys(all), ", "), from.BaseName(), name, name, all[0].Instance)
}

func instanceKeys(ss []*Stack) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Instance
	}
	return out
}

// BaseName is the name the config gives the stack: `net` for each of
// net's instances, the stack's Name otherwise.
func (s *Stack) BaseName() string {
	if s.Base != "" {
		return s.Base
	}
	return s.Name
}

// instanceWorkspace is the workspace an instance of key runs a dirspace of
// workspace in by default: the key, or `<workspace>-<key>` outside
// default (docs/behaviour.md#stack-instances).
func instanceWorkspace(workspace, key string) string {
	if workspace == "default" {
		return key
	}
	return workspace + "-" + key
}

// instanceUnit is the unit of dirspace ds in instance s: the dirspace in
// the instance's own workspace, until settleInstanceState finds the
// instance keeps its state apart itself.
func instanceUnit(ds *Dirspace, s *Stack) *Unit {
	own := *ds
	own.Workspace = instanceWorkspace(ds.Workspace, s.Instance)
	own.Tags = replaceWorkspaceTag(ds.Tags, ds.Workspace, own.Workspace)
	return &Unit{Dirspace: &own, Stack: s, Origin: ds}
}

func replaceWorkspaceTag(tags []string, from, to string) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		if t == "workspace:"+from {
			t = "workspace:" + to
		}
		out[i] = t
	}
	return out
}

// settleInstanceState decides where each instance unit keeps its state
// (docs/behaviour.md#stack-instances): a unit whose workflow gives init a
// backend config naming STRATA_STACK_INSTANCE keeps its dirspace's own
// workspace and its own data dir (it is then shown with its stack, as a
// dirspace in several stacks is); every other one has the workspace of
// its instance. Two units that would still share one state are an error.
func (p *Project) settleInstanceState(c *config.Collector) {
	if len(p.instancesOf) == 0 {
		return
	}
	for _, u := range p.Units {
		p.placeInstance(u)
	}
	for _, u := range p.Units {
		if u.Origin != nil && !u.OwnBackend && !u.CreateAndSelectWorkspace {
			pos := u.Stack.InstancePos
			c.Errorf(pos, "stacks.names."+u.Stack.Base+".for_each",
				"instance %s of dir %s would share the state of workspace %s: the dir sets create_and_select_workspace: false, so strata selects no workspace of its own for the instance; expected create_and_select_workspace left on, or a workflow whose init names ${STRATA_STACK_INSTANCE} in -backend-config",
				u.Stack.Name, u.Dir, u.Origin.Workspace)
		}
	}
	// Units keyed by where their state is: dir, workspace and, for a unit
	// with a backend of its own, its stack.
	type place struct{ dir, ws, stack string }
	at := map[place]*Unit{}
	reported := map[config.Pos]bool{}
	for _, u := range p.Units {
		k := place{u.Dir, u.Workspace, ""}
		if u.OwnBackend {
			k.stack = u.Stack.Name
		}
		if u.Shared && !u.OwnBackend {
			// A dirspace in several stacks: checkShared's to decide.
			continue
		}
		o, ok := at[k]
		if !ok {
			at[k] = u
			continue
		}
		if o.Origin == nil && u.Origin == nil {
			continue
		}
		inst := u
		if inst.Origin == nil {
			inst = o
		}
		pos := inst.Stack.InstancePos
		if reported[pos] {
			continue
		}
		reported[pos] = true
		c.Errorf(pos, "stacks.names."+inst.Stack.Base+".for_each",
			"units %s (stack %s) and %s (stack %s) would share one state, in dir %s, workspace %s; expected an instance key whose workspace no other dirspace of the dir has, or a workflow whose init names ${STRATA_STACK_INSTANCE} in -backend-config",
			o.ID(), o.Stack.Name, u.ID(), u.Stack.Name, u.Dir, u.Workspace)
	}
}

// instanceBackend says a workflow gives init a backend config that names
// the instance, so that each instance has a state of its own in one
// workspace.
// placeInstance gives an instance unit whose workflow gives init a
// backend config naming STRATA_STACK_INSTANCE its dirspace's own
// workspace back (settleInstanceState; a deleted dir's units too).
func (p *Project) placeInstance(u *Unit) {
	if u.Origin == nil || !instanceBackend(p.WorkflowFor(u)) {
		return
	}
	ws := u.Workspace
	u.Workspace = u.Origin.Workspace
	u.Tags = replaceWorkspaceTag(u.Tags, ws, u.Workspace)
	u.Dirspace.Tags = replaceWorkspaceTag(u.Dirspace.Tags, ws, u.Workspace)
	u.Shared, u.OwnBackend = true, true
}

func instanceBackend(w *config.Workflow) bool {
	return initBackendConfig(w, func(v string) bool { return strings.Contains(v, "STRATA_STACK_INSTANCE") })
}

// checkInstanceRefs reports the references between stacks that name an
// instanced stack whose keys do not match the referring instance's, once
// for each place they are written.
func (p *Project) checkInstanceRefs(c *config.Collector) {
	reported := map[config.Pos]bool{}
	// key names the reference in an error: built only for one, since each
	// of a stack's instances checks its stack's references again.
	report := func(from *Stack, ref config.String, key func() string) {
		if reported[ref.Pos] {
			return
		}
		if _, why := p.refStacks(from, ref.Value); why != "" {
			reported[ref.Pos] = true
			c.Errorf(ref.Pos, key(), "%s", why)
		}
	}
	for _, s := range p.Stacks {
		d := s.Def
		if d == nil {
			continue
		}
		key := "stacks.names." + s.BaseName()
		lists := map[string]*[]config.String{}
		if r := d.Rules; r != nil {
			lists["rules.plan_after"], lists["rules.apply_after"], lists["rules.modified_by"] = r.PlanAfter, r.ApplyAfter, r.ModifiedBy
			for i, pr := range r.Prerequisites {
				report(s, pr.Stack, func() string { return fmt.Sprintf("%s.rules.prerequisites[%d].stack", key, i) })
			}
		}
		if oc := d.OnChange; oc != nil {
			lists["on_change.apply_after"], lists["on_change.can_apply_after"] = oc.ApplyAfter, oc.CanApplyAfter
		}
		for name, l := range lists {
			if l == nil {
				continue
			}
			for i, ref := range *l {
				report(s, ref, func() string { return fmt.Sprintf("%s.%s[%d]", key, name, i) })
			}
		}
		if d.Inputs != nil {
			for _, e := range d.Inputs.Entries {
				if e.Value.Stack.Set {
					report(s, e.Value.Stack, func() string { return key + ".inputs." + e.Key })
				}
			}
		}
	}
}

// distinctBases counts the stacks a dirspace matches, each stack's
// instances once.
func distinctBases(ms []*Stack) int {
	if len(ms) < 2 {
		return len(ms)
	}
	seen := map[string]bool{}
	for _, s := range ms {
		seen[s.BaseName()] = true
	}
	return len(seen)
}
