package stacks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/strata-iac/strata/stacks/config"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// warnDependsOnAcrossStacks warns when a depends_on query matches units of
// other stacks: depends_on stays inside its stack (docs/behaviour.md#propagation), so those matches
// do nothing, which is rarely what the author meant.
func (p *Project) warnDependsOnAcrossStacks(c *config.Collector) {
	any := false
	for _, u := range p.Units {
		if u.WhenModified.DependsOn != nil {
			any = true
			break
		}
	}
	if !any {
		return
	}
	subjects := make([]tagquery.Subject, len(p.Units))
	for i, u := range p.Units {
		subjects[i] = u.Subject()
	}
	ix := tagquery.NewIndex(subjects)
	warned := map[string]bool{}
	for _, v := range p.Units {
		q := v.WhenModified.DependsOn
		if q == nil || warned[q.Source()+"\x00"+v.Stack.Name] {
			continue
		}
		var others []string
		q.SelectFrom(ix, v.Dir).Each(func(i int) {
			if u := p.Units[i]; u.Stack != v.Stack && len(others) < 3 {
				others = append(others, u.Name()+" (stack "+u.Stack.Name+")")
			}
		})
		if len(others) > 0 {
			warned[q.Source()+"\x00"+v.Stack.Name] = true
			c.Warnf(v.WhenModified.DependsOnPos, "when_modified.depends_on",
				"depends_on %q of %s matches units of other stacks, which it ignores: %s; depends_on stays inside a stack, write a stack rule (plan_after, modified_by) instead",
				q.Source(), v.Name(), strings.Join(others, ", "))
		}
	}
}

// warnUnsupportedEngines names each engine strata does not run, where it is
// set and the units it covers; those units fail when a command reaches them.
func (p *Project) warnUnsupportedEngines(c *config.Collector) {
	if !p.mayHaveUnsupportedEngine() {
		return
	}
	byEngine := map[string][]string{}
	at := map[string]config.Pos{}
	for _, u := range p.Units {
		e, err := p.EngineFor(u)
		if err != nil || e.Supported() {
			continue
		}
		key := fmt.Sprintf("engine %s (set by %s)", e.Name, e.From)
		byEngine[key] = append(byEngine[key], u.Name())
		at[key] = e.Pos
	}
	keys := make([]string, 0, len(byEngine))
	for k := range byEngine {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		units := byEngine[k]
		more := ""
		if len(units) > 5 {
			more = fmt.Sprintf(" and %d more", len(units)-5)
			units = units[:5]
		}
		c.Warnf(at[k], "", "%s is not supported: strata runs terraform and tofu; these units will fail: %s%s", k, strings.Join(units, ", "), more)
	}
}

func (p *Project) mayHaveUnsupportedEngine() bool {
	cfg := p.Config
	if cfg.Engine != nil && !cfg.Engine.Supported() {
		return true
	}
	for _, w := range cfg.Workflows {
		if (w.Engine != nil && !w.Engine.Supported()) || w.Cdktf.Value || w.Terragrunt.Value {
			return true
		}
	}
	for _, s := range p.Stacks {
		if s.Def != nil && s.Def.Engine != nil && !s.Def.Engine.Supported() {
			return true
		}
	}
	return false
}

// warnSensitiveUnmarked warns about a stack variable listed in sensitive
// that binds an input variable its module does not declare sensitive =
// true: strata masks the value it knows, but when the value rotates the
// engine prints the old one in the plan's diff, and only a variable the
// module marks sensitive keeps it hidden (docs/behaviour.md#what-is-masked).
// It names the config's entry and the module's declaration.
func (p *Project) warnSensitiveUnmarked(c *config.Collector) {
	type at struct {
		entry      config.Pos
		file, name string
		line       int
	}
	warned := map[at]bool{}
	for _, u := range p.Units {
		s := u.Stack
		if s == nil {
			continue
		}
		entries := sensitiveEntries(s)
		if len(entries) == 0 {
			continue
		}
		set := map[string]bool{}
		for _, v := range s.Variables {
			set[v.Name] = true
		}
		for _, e := range entries {
			name, ok := strings.CutPrefix(e.entry.Value, "TF_VAR_")
			if !ok || name == "" || !set[e.entry.Value] {
				continue
			}
			m := p.module(u.Dir)
			if m == nil {
				continue
			}
			v := m.Variables[name]
			if v == nil || v.Sensitive {
				continue
			}
			file := relTo(p.Root, v.Pos.Filename)
			k := at{e.entry.Pos, file, name, v.Pos.Line}
			if warned[k] {
				continue
			}
			warned[k] = true
			c.Warnf(e.entry.Pos, "stacks.names."+e.stack+".sensitive",
				"%s is sensitive, but variable %q (%s:%d) is not sensitive = true: when the value rotates, plans show its old value, which strata cannot mask; declare the variable with sensitive = true",
				e.entry.Value, name, file, v.Pos.Line)
		}
	}
}

// sensitiveEntry is one name of a sensitive list and the stack that wrote
// it.
type sensitiveEntry struct {
	entry config.String
	stack string
}

// sensitiveEntries are the sensitive names a stack has, its own and its
// ancestors', each where it is written.
func sensitiveEntries(s *Stack) []sensitiveEntry {
	var out []sensitiveEntry
	for _, level := range append([][]*Stack{{s}}, s.Ancestors...) {
		for _, a := range level {
			if a.Def == nil {
				continue
			}
			for _, n := range a.Def.Sensitive {
				out = append(out, sensitiveEntry{n, a.Name})
			}
		}
	}
	return out
}
