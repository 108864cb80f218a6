package job

import (
	"testing"

	"github.com/strata-iac/strata/stacks"
)

// TestEngineStepsOnly: a phase applies in one call only when its steps
// are the engine's (and ignored ones), with one step of the phase, and
// an apply step with no env or retry, an init with no arguments.
func TestEngineStepsOnly(t *testing.T) {
	retry := &stacks.RetryPolicy{Tries: 2}
	for _, tc := range []struct {
		name  string
		steps []stacks.RunStep
		phase string
		want  bool
	}{
		{"default plan", []stacks.RunStep{{Type: "init"}, {Type: "plan"}}, "plan", true},
		{"default apply", []stacks.RunStep{{Type: "init"}, {Type: "apply"}}, "apply", true},
		{"plan with oidc and gates", []stacks.RunStep{{Type: "oidc"}, {Type: "init"}, {Type: "plan"}, {Type: "gates"}, {Type: "slack"}}, "plan", true},
		{"a run step", []stacks.RunStep{{Type: "init"}, {Type: "plan"}, {Type: "run"}}, "plan", false},
		{"an env step", []stacks.RunStep{{Type: "env"}, {Type: "plan"}}, "plan", false},
		{"a policy step", []stacks.RunStep{{Type: "plan"}, {Type: "checkov"}}, "plan", false},
		{"no plan step", []stacks.RunStep{{Type: "init"}}, "plan", false},
		{"two plan steps", []stacks.RunStep{{Type: "plan"}, {Type: "plan"}}, "plan", false},
		{"plan step with env", []stacks.RunStep{{Type: "plan", Env: []stacks.EnvVar{{Key: "A"}}}}, "plan", true},
		{"apply with env", []stacks.RunStep{{Type: "apply", Env: []stacks.EnvVar{{Key: "A"}}}}, "apply", false},
		{"apply with retry", []stacks.RunStep{{Type: "apply", Retry: retry}}, "apply", false},
		{"apply's init with args", []stacks.RunStep{{Type: "init", ExtraArgs: []string{"-upgrade"}}, {Type: "apply"}}, "apply", false},
		{"apply's init with env", []stacks.RunStep{{Type: "init", Env: []stacks.EnvVar{{Key: "A"}}}, {Type: "apply"}}, "apply", false},
		{"plan's init with args", []stacks.RunStep{{Type: "init", ExtraArgs: []string{"-upgrade"}}, {Type: "plan"}}, "plan", true},
		{"a plan step in apply", []stacks.RunStep{{Type: "plan"}, {Type: "apply"}}, "apply", false},
	} {
		if got := EngineStepsOnly(tc.steps, tc.phase); got != tc.want {
			t.Errorf("%s: EngineStepsOnly = %t, want %t", tc.name, got, tc.want)
		}
	}
}
