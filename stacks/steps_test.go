package stacks

import (
	"reflect"
	"testing"
	"time"
)

// TestStepsFor: a workflow's steps reach the runner with their defaults
// applied; a unit no workflow matches gets [init, plan] and [init, apply].
func TestStepsFor(t *testing.T) {
	root := testRepo(t, `workflows:
  - tag_query: 'dir:a'
    environment: 'env-${x}'
    plan:
      - {type: init, extra_args: ['-upgrade']}
      - {type: env, name: TOKEN, cmd: [echo, hi]}
      - {type: run, cmd: [make, check], run_on: always, env: {B: '2', A: '1'}}
      - type: plan
    apply:
      - type: apply
        retry: {enabled: true}
      - type: apply
        retry: {enabled: true, tries: 5, initial_sleep: 0, backoff: 2}
      - type: apply
        retry: {enabled: false, tries: 9}
`, "a", "b")
	p, diags := loadDiags(t, root)
	if diags.HasErrors() {
		t.Fatal(diagText(diags))
	}
	a, b := p.UnitsIn("a")[0], p.UnitsIn("b")[0]
	zero := time.Duration(0)
	wantPlan := []RunStep{
		{Type: "init", ExtraArgs: []string{"-upgrade"}, RunOn: "success", Method: "exec", TrimTrailingNewlines: true},
		{Type: "env", Cmd: []string{"echo", "hi"}, Name: "TOKEN", RunOn: "success", Method: "exec", TrimTrailingNewlines: true},
		{Type: "run", Cmd: []string{"make", "check"}, Env: []EnvVar{{"B", "2"}, {"A", "1"}}, RunOn: "always", Method: "exec", TrimTrailingNewlines: true},
		{Type: "plan", RunOn: "success", Method: "exec", TrimTrailingNewlines: true},
	}
	if got := p.StepsFor(a, StepPlan); !reflect.DeepEqual(got, wantPlan) {
		t.Errorf("plan steps:\n got %+v\nwant %+v", got, wantPlan)
	}
	apply := p.StepsFor(a, StepApply)
	if r := apply[0].Retry; r == nil || r.Tries != 3 || r.Backoff != 1.5 || r.Delay != nil {
		t.Errorf("retry defaults: %+v", r)
	}
	if r := apply[1].Retry; r == nil || r.Tries != 5 || r.Backoff != 2 || r.Delay == nil || *r.Delay != zero {
		t.Errorf("retry as written: %+v", r)
	}
	if apply[2].Retry != nil {
		t.Errorf("a retry not enabled: %+v", apply[2].Retry)
	}
	if env, ok := p.EnvironmentFor(a); !ok || env != "env-${x}" {
		t.Errorf("environment %q %t", env, ok)
	}
	var types []string
	for _, st := range append(p.StepsFor(b, StepPlan), p.StepsFor(b, StepApply)...) {
		types = append(types, st.Type)
	}
	if !reflect.DeepEqual(types, []string{"init", "plan", "init", "apply"}) {
		t.Errorf("default steps: %v", types)
	}
}
