package config

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

// Steps is the hook's pre or post steps (when is "pre" or "post"), nil
// when not written.
func (h *Hook) Steps(when string) *[]Step {
	if h == nil {
		return nil
	}
	if when == "post" {
		return h.Post
	}
	return h.Pre
}

// checkHooks checks that every hook step is one a hook takes.
func checkHooks(cfg *Config, c *Collector) {
	if cfg.Hooks == nil {
		return
	}
	for _, h := range []struct {
		key  string
		hook *Hook
	}{{"all", cfg.Hooks.All}, {"plan", cfg.Hooks.Plan}, {"apply", cfg.Hooks.Apply}} {
		for _, when := range []string{"pre", "post"} {
			steps := h.hook.Steps(when)
			if steps == nil {
				continue
			}
			for i, st := range *steps {
				if st.Type.Set && !slices.Contains(hookOps, st.Type.Value) {
					c.Errorf(st.Type.Pos, fmt.Sprintf("hooks.%s.%s[%d].type", h.key, when, i),
						"found %q; expected a hook step: one of %s (engine steps belong in a workflow)", st.Type.Value, strings.Join(hookOps, ", "))
				}
			}
		}
	}
}
