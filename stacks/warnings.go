package stacks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/strata-iac/strata/stacks/tagquery"
)

// warnDependsOnAcrossStacks warns when a depends_on query matches units of
// other stacks: depends_on stays inside its stack (docs/behaviour.md#propagation), so those matches
// do nothing, which is rarely what the author meant.
func (p *Project) warnDependsOnAcrossStacks(c *collector) {
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
			c.warnf(Pos{}, "when_modified.depends_on",
				"depends_on %q of %s matches units of other stacks, which it ignores: %s; depends_on stays inside a stack, write a stack rule (plan_after, modified_by) instead",
				q.Source(), v.Name(), strings.Join(others, ", "))
		}
	}
}

// warnUnsupportedEngines names each engine strata does not run, where it is
// set and the units it covers; those units fail when a command reaches them.
func (p *Project) warnUnsupportedEngines(c *collector) {
	if !p.mayHaveUnsupportedEngine() {
		return
	}
	byEngine := map[string][]string{}
	for _, u := range p.Units {
		e, err := p.EngineFor(u)
		if err != nil || e.Supported() {
			continue
		}
		key := fmt.Sprintf("engine %s (set by %s)", e.Name, e.From)
		byEngine[key] = append(byEngine[key], u.Name())
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
		c.warnf(Pos{}, "", "%s is not supported: strata runs terraform and tofu; these units will fail: %s%s", k, strings.Join(units, ", "), more)
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
