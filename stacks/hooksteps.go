package stacks

import (
	"fmt"

	"github.com/strata-iac/strata/stacks/config"
)

// HookStep is a hook's step as the runner runs it, with the key it is
// written under (hooks.all.pre[0]).
type HookStep struct {
	RunStep
	Where string
}

// HooksFor returns an operation's hooks ("plan" or "apply"): all's pre,
// then the operation's own; the operation's post, then all's.
func (p *Project) HooksFor(op string) (pre, post []HookStep) {
	h := p.Config.Hooks
	if h == nil {
		return nil, nil
	}
	own, ownKey := h.Plan, "plan"
	if op == StepApply {
		own, ownKey = h.Apply, "apply"
	}
	pre = append(hookSteps(h.All, "all", "pre"), hookSteps(own, ownKey, "pre")...)
	post = append(hookSteps(own, ownKey, "post"), hookSteps(h.All, "all", "post")...)
	return pre, post
}

func hookSteps(h *config.Hook, op, when string) []HookStep {
	steps := h.Steps(when)
	if steps == nil {
		return nil
	}
	out := make([]HookStep, len(*steps))
	for i, st := range *steps {
		out[i] = HookStep{RunStep: resolveStep(st), Where: fmt.Sprintf("hooks.%s.%s[%d]", op, when, i)}
	}
	return out
}

// OIDCSteps are the config's oidc steps, hooks first, each as
// `file:line:col: where` (`hooks.all.pre[0]`, `workflows[1].plan[0]`):
// what `check` names as skipped outside CI (docs/behaviour.md#oidc).
func (p *Project) OIDCSteps() []string {
	var out []string
	add := func(pos config.Pos, where string) {
		out = append(out, fmt.Sprintf("%s:%d:%d: %s", p.ConfigFile, pos.Line, pos.Col, where))
	}
	if h := p.Config.Hooks; h != nil {
		for _, op := range []struct {
			name string
			hook *config.Hook
		}{{"all", h.All}, {"plan", h.Plan}, {"apply", h.Apply}} {
			for _, when := range []string{"pre", "post"} {
				if steps := op.hook.Steps(when); steps != nil {
					for i, st := range *steps {
						if st.Type.Value == "oidc" {
							add(st.Pos, fmt.Sprintf("hooks.%s.%s[%d]", op.name, when, i))
						}
					}
				}
			}
		}
	}
	for i, w := range p.Config.Workflows {
		for _, phase := range []struct {
			name  string
			steps *[]config.Step
		}{{"plan", w.Plan}, {"apply", w.Apply}} {
			if phase.steps == nil {
				continue
			}
			for j, st := range *phase.steps {
				if st.Type.Value == "oidc" {
					add(st.Pos, fmt.Sprintf("workflows[%d].%s[%d]", i, phase.name, j))
				}
			}
		}
	}
	return out
}
