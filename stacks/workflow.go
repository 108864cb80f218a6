package stacks

import (
	"strings"

	"github.com/strata-iac/strata/stacks/config"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// WorkflowFor returns the first workflow whose tag query matches the unit
// (docs/behaviour.md#workflows-and-steps), or nil.
func (p *Project) WorkflowFor(u *Unit) *config.Workflow {
	p.workflowOnce.Do(func() {
		p.workflowQueries = make([]*tagquery.Query, len(p.Config.Workflows))
		for i, w := range p.Config.Workflows {
			if q, err := tagquery.Parse(w.TagQuery.Value); err == nil {
				p.workflowQueries[i] = q
			}
		}
	})
	for i, q := range p.workflowQueries {
		if q != nil && q.Match(u.Subject()) {
			return &p.Config.Workflows[i]
		}
	}
	return nil
}

// Locks says a pull request's run locks the unit's dirspace
// (docs/ci.md#pull-requests): unless its workflow's lock_policy is none.
func (p *Project) Locks(u *Unit) bool {
	w := p.WorkflowFor(u)
	return w == nil || w.LockPolicy.Value != "none"
}

// checkShared rejects a dirspace in several stacks whose units would share
// one state (docs/behaviour.md#stacks-and-membership), unless the dir says so with shared_state or every
// stack's workflow gives init a per-stack backend.
func (p *Project) checkShared(c *config.Collector) {
	reported := map[*Dirspace]bool{}
	for _, u := range p.Units {
		if !u.Shared || u.SharedState || reported[u.Dirspace] {
			continue
		}
		if hasPerStackBackend(p.WorkflowFor(u)) {
			continue
		}
		reported[u.Dirspace] = true
		var names []string
		for _, o := range p.unitsOf[u.Dir] {
			if o.Dirspace == u.Dirspace {
				names = append(names, o.Stack.Name)
			}
		}
		pos, key := config.Pos{}, "stacks.allow_workspace_in_multiple_stacks"
		if p.Config.Stacks != nil {
			pos = p.Config.Stacks.AllowWorkspaceInMultipleStacks.Pos
		}
		c.Errorf(pos, key,
			"dirspace %s is in stacks %s, whose units would share one state; expected each stack's workflow to give init a per-stack backend (extra_args: ['-backend-config=key=${STRATA_STACK}/terraform.tfstate']) or dirs.%s.shared_state: true",
			u.Dirspace.ID(), strings.Join(names, ", "), u.Dir)
	}
}

func hasPerStackBackend(w *config.Workflow) bool {
	return initBackendConfig(w, func(v string) bool { return strings.Contains(v, "$") })
}

// initBackendConfig says some init step of a workflow's plan or apply
// gives a -backend-config argument that has.
func initBackendConfig(w *config.Workflow, has func(string) bool) bool {
	if w == nil {
		return false
	}
	for _, steps := range []*[]config.Step{w.Plan, w.Apply} {
		if steps == nil {
			continue
		}
		for _, s := range *steps {
			if s.Type.Value != "init" {
				continue
			}
			for _, a := range s.ExtraArgs {
				if strings.HasPrefix(a.Value, "-backend-config") && has(a.Value) {
					return true
				}
			}
		}
	}
	return false
}
