package stacks

import (
	"time"

	"github.com/strata-iac/strata/stacks/config"
)

// RunStep is one step of a unit's workflow as the runner runs it: the
// config's step with its defaults applied, free of YAML positions and
// presence flags.
type RunStep struct {
	Type      string   // init, plan, apply, run, env, oidc, checkov, conftest, opa, or one strata ignores (gates, slack, …)
	ExtraArgs []string // as written; ${name} is substituted when the step runs
	Env       []EnvVar // in the order written
	Cmd       []string // run and env steps: argv, as written
	// RunOn is when the step runs: "success" (the default: no step has
	// failed), "failure" or "always".
	RunOn         string
	IgnoreErrors  bool
	CaptureOutput bool
	// Env steps: Method is "exec" (the default: Name is set to the
	// output) or "source" (KEY=VALUE lines).
	Method               string
	Name                 string
	TrimTrailingNewlines bool // default true
	Sensitive            bool
	// Retry of a failed apply, nil when off.
	Retry *RetryPolicy
	// OIDC is an oidc step's settings, nil for other steps.
	OIDC *config.OIDCStep
	// Gate holds the unit's apply when the step fails, nil when the step
	// has none (docs/controls.md#gates).
	Gate *config.Gate
}

// EnvVar is one entry of a step's env.
type EnvVar struct{ Key, Value string }

// RetryPolicy is an apply step's retry, defaults applied: Tries attempts
// in all, Delay before the first retry (nil: the runner's default), each
// later delay Backoff times the one before.
type RetryPolicy struct {
	Tries   int
	Delay   *time.Duration
	Backoff float64
}

// Step kinds the runner knows.
const (
	StepInit  = "init"
	StepPlan  = "plan"
	StepApply = "apply"
)

// defaultPhases are the steps of a phase without a workflow.
var defaultPhases = map[string][]string{StepPlan: {StepInit, StepPlan}, StepApply: {StepInit, StepApply}}

// StepsFor returns a unit's steps for one phase, "plan" or "apply": those
// of the first workflow whose query matches the unit, or [init, plan] and
// [init, apply].
func (p *Project) StepsFor(u *Unit, phase string) []RunStep {
	var steps *[]config.Step
	if w := p.WorkflowFor(u); w != nil {
		if phase == StepPlan {
			steps = w.Plan
		} else {
			steps = w.Apply
		}
	}
	if steps == nil {
		var out []RunStep
		for _, t := range defaultPhases[phase] {
			out = append(out, resolveStep(config.Step{Type: config.String{Value: t, Set: true}}))
		}
		return out
	}
	out := make([]RunStep, len(*steps))
	for i, st := range *steps {
		out[i] = resolveStep(st)
	}
	return out
}

// DefaultStep is a step of the given type with every default.
func DefaultStep(typ string) RunStep {
	return resolveStep(config.Step{Type: config.String{Value: typ, Set: true}})
}

func resolveStep(st config.Step) RunStep {
	rs := RunStep{
		Type: st.Type.Value, ExtraArgs: nonEmpty(config.Strings(st.ExtraArgs)), Cmd: nonEmpty(config.Strings(st.Cmd)),
		RunOn: st.RunOn.Value, IgnoreErrors: st.IgnoreErrors.Value, CaptureOutput: st.CaptureOutput.Value,
		Method: st.Method.Value, Name: st.Name.Value, TrimTrailingNewlines: st.TrimTrailingNewlines.Get(true),
		Sensitive: st.Sensitive.Value,
	}
	if rs.RunOn == "" {
		rs.RunOn = "success"
	}
	if rs.Type == "oidc" {
		rs.OIDC = config.ResolveOIDC(st)
	}
	rs.Gate = config.ResolveGate(st.Gate)
	if rs.Method == "" {
		rs.Method = "exec"
	}
	if st.Env != nil {
		for _, e := range st.Env.Entries {
			rs.Env = append(rs.Env, EnvVar{Key: e.Key, Value: e.Value.Value})
		}
	}
	if r := st.Retry; r != nil && r.Enabled.Value {
		rp := &RetryPolicy{Tries: 3, Backoff: 1.5}
		if r.Tries.Set && r.Tries.Value > 0 {
			rp.Tries = r.Tries.Value
		}
		if r.InitialSleep.Set {
			d := time.Duration(r.InitialSleep.Value) * time.Second
			rp.Delay = &d
		}
		if r.Backoff.Set && r.Backoff.Value >= 1 {
			rp.Backoff = r.Backoff.Value
		}
		rs.Retry = rp
	}
	return rs
}

// EnvironmentFor is the environment name of the unit's workflow, as
// written (${name} is substituted when it is used), and whether it has one.
func (p *Project) EnvironmentFor(u *Unit) (string, bool) {
	if w := p.WorkflowFor(u); w != nil && w.Environment.Set {
		return w.Environment.Value, true
	}
	return "", false
}

// nonEmpty is ss, or nil when it is empty.
func nonEmpty(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	return ss
}
