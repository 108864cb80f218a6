package job

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// TestApplyInvocation: a saved plan is applied with no other argument,
// whatever the step's extra_args; its env over the unit's.
func TestApplyInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{Type: "apply", ExtraArgs: []string{"-parallelism=2"}}, "apply step 2 (apply)", nil)
	own, err := in.ownEnv()
	if err != nil {
		t.Fatal(err)
	}
	inv := in.applyInvocation(map[string]string{"A": "1"})
	if inv.String() != "terraform apply /s/p.tfplan" || inv.Env["A"] != "1" || inv.Step != report.StepApply || len(own) != 0 {
		t.Errorf("apply = %s %v", inv, inv.Env)
	}
	now := in.applyNowInvocation(nil, "/s/v.json", engineargs.PlanArgs{Targets: []string{"a.b"}}, nil)
	if now.String() != "terraform apply -auto-approve -var-file=/s/v.json -target=a.b" || now.Step != report.StepApply {
		t.Errorf("apply in one call = %s", now)
	}
	called := false
	c := in.applyNowInvocation(nil, "", engineargs.PlanArgs{}, func() { called = true }).Call.(applyNowCall)
	c.OnPlan()
	if !called {
		t.Error("the call does not carry OnPlan")
	}
}

// TestStalePlan: the engine's refusal of a stale saved plan, and nothing
// else.
func TestStalePlan(t *testing.T) {
	for msg, want := range map[string]bool{
		"exit status 1\n\nError: Saved plan is stale\n\nThe given plan file can no longer be applied": true,
		"Error: Failed to load plan file":       false,
		"Error: Error acquiring the state lock": false,
		"":                                      false,
		"wrapped: exit status 1: Error: Saved plan is stale": true,
	} {
		var err error
		if msg != "" {
			err = errorString(msg)
		}
		if got := stalePlan(err); got != want {
			t.Errorf("stalePlan(%q) = %t, want %t", msg, got, want)
		}
	}
}

// errorString is an error with a fixed text.
type errorString string

func (e errorString) Error() string { return string(e) }

// TestRecordApply: an apply is recorded now, its plan record cleared; a
// destroy's record says so.
func TestRecordApply(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.res.Digest = "d1"
	savedPlan(t, j, testClock(), nil)
	if err := j.recordApply(context.Background(), runstate.ApplyRecord{Digest: "d1", Result: report.StatusApplied}, false); err != nil {
		t.Fatal(err)
	}
	us, err := j.run.State.ReadUnit(j.ur.Spec)
	if err != nil || us.Plan != nil || us.Apply == nil || us.Apply.Digest != "d1" || !us.Apply.At.Equal(testClock()) || us.Apply.Destroy {
		t.Errorf("record: %+v %v", us, err)
	}
	if us.Deployed != nil {
		t.Errorf("a deploy recorded outside a git repository: %+v", us.Deployed)
	}
	j.run.Destroying = true
	if err := j.recordApply(context.Background(), runstate.ApplyRecord{Result: report.StatusDestroyed}, true); err != nil {
		t.Fatal(err)
	}
	if us, _ := j.run.State.ReadUnit(j.ur.Spec); !us.Apply.Destroy || us.Apply.Result != report.StatusDestroyed {
		t.Errorf("a destroy's record: %+v", us.Apply)
	}
}

// TestApplyStepBuild: an apply step tries once after the run's delay,
// unless its retry says how many times, after what delay, growing by
// what; its env is its own.
func TestApplyStepBuild(t *testing.T) {
	delay := 7 * time.Second
	for _, tc := range []struct {
		name  string
		retry *stacks.RetryPolicy
		want  applyRequest
	}{
		{"no retry", nil, applyRequest{Tries: 1, Delay: time.Second, Backoff: 1.5}},
		{"retry", &stacks.RetryPolicy{Tries: 3, Backoff: 2}, applyRequest{Tries: 3, Delay: time.Second, Backoff: 2}},
		{"retry with a delay", &stacks.RetryPolicy{Tries: 2, Delay: &delay, Backoff: 1}, applyRequest{Tries: 2, Delay: delay, Backoff: 1}},
	} {
		in := testInput(stacks.RunStep{Type: "apply", Retry: tc.retry, Env: []stacks.EnvVar{{Key: "A", Value: "${region}"}}}, "apply step 2 (apply)", nil)
		in.RetryDelay = time.Second
		req, err := applyStep{}.build(in)
		if err != nil {
			t.Fatal(err)
		}
		if req.Tries != tc.want.Tries || req.Delay != tc.want.Delay || req.Backoff != tc.want.Backoff || req.Env["A"] != "eu-west-1" {
			t.Errorf("%s: %+v, want %+v", tc.name, req, tc.want)
		}
	}
	e := &fakeEngine{}
	bad := testInput(stacks.RunStep{Type: "apply", Env: []stacks.EnvVar{{Key: "A", Value: "$NOPE"}}}, "apply step 2 (apply)", nil)
	bad.engine = e
	if out := (applyStep{}).run(context.Background(), bad); out.Err == nil || out.Failed != report.StepApply || len(e.applies) != 0 {
		t.Errorf("an apply that cannot be built: %+v", out)
	}
	good := testInput(stacks.RunStep{Type: "apply"}, "apply step 2 (apply)", nil)
	good.engine = e
	if out := (applyStep{}).run(context.Background(), good); out.Err != nil || len(e.applies) != 1 || e.applies[0].Tries != 1 {
		t.Errorf("an apply: %+v, %+v", out, e.applies)
	}
}
