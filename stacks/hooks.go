package stacks

import (
	"fmt"
	"slices"
	"strings"
)

// Hooks are the config's hooks (docs/behaviour.md#hooks): steps a command
// runs once, in the repository root, before its units and after them.
type Hooks struct {
	Pos   Pos
	All   *Hook `yaml:"all" doc:"around every plan and apply"`
	Plan  *Hook `yaml:"plan" doc:"around plans (plan, drift)"`
	Apply *Hook `yaml:"apply" doc:"around applies (apply, destroy)"`
}

// Hook is one operation's hooks.
type Hook struct {
	Pos  Pos
	Pre  *[]Step `yaml:"pre" doc:"before any unit runs, in order; a failure fails the units"`
	Post *[]Step `yaml:"post" doc:"after the units, in order; run_on picks by their outcome"`
}

// hookOps are the step types a hook takes, as in Terrateam's schema.
var hookOps = []string{"run", "env", "oidc", "slack", "drift_create_issue"}

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

// list is the hook's pre or post steps, nil when not written.
func (h *Hook) list(when string) *[]Step {
	if h == nil {
		return nil
	}
	if when == "post" {
		return h.Post
	}
	return h.Pre
}

func hookSteps(h *Hook, op, when string) []HookStep {
	steps := h.list(when)
	if steps == nil {
		return nil
	}
	out := make([]HookStep, len(*steps))
	for i, st := range *steps {
		out[i] = HookStep{RunStep: resolveStep(st), Where: fmt.Sprintf("hooks.%s.%s[%d]", op, when, i)}
	}
	return out
}

// checkHooks checks that every hook step is one a hook takes.
func checkHooks(cfg *Config, c *collector) {
	if cfg.Hooks == nil {
		return
	}
	for _, h := range []struct {
		key  string
		hook *Hook
	}{{"all", cfg.Hooks.All}, {"plan", cfg.Hooks.Plan}, {"apply", cfg.Hooks.Apply}} {
		for _, when := range []string{"pre", "post"} {
			steps := h.hook.list(when)
			if steps == nil {
				continue
			}
			for i, st := range *steps {
				if st.Type.Set && !slices.Contains(hookOps, st.Type.Value) {
					c.errorf(st.Type.Pos, fmt.Sprintf("hooks.%s.%s[%d].type", h.key, when, i),
						"found %q; expected a hook step: one of %s (engine steps belong in a workflow)", st.Type.Value, strings.Join(hookOps, ", "))
				}
			}
		}
	}
}

// OIDCSteps are the config's oidc steps, hooks first, each as
// `file:line:col: where` (`hooks.all.pre[0]`, `workflows[1].plan[0]`):
// what `check` names as skipped outside CI (docs/behaviour.md#oidc).
func (p *Project) OIDCSteps() []string {
	var out []string
	add := func(pos Pos, where string) {
		out = append(out, fmt.Sprintf("%s:%d:%d: %s", p.ConfigFile, pos.Line, pos.Col, where))
	}
	if h := p.Config.Hooks; h != nil {
		for _, op := range []struct {
			name string
			hook *Hook
		}{{"all", h.All}, {"plan", h.Plan}, {"apply", h.Apply}} {
			for _, when := range []string{"pre", "post"} {
				if steps := op.hook.list(when); steps != nil {
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
			steps *[]Step
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
