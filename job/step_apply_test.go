package job

import (
	"bytes"
	"context"
	"testing"

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
