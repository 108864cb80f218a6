package job

import (
	"bytes"
	"context"
	"os"
	"strings"
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
	c := in.applyNowInvocation(nil, "", engineargs.PlanArgs{}, func() { called = true }).Call.(*applyNowCall)
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
	j.in.memo.digest = "d1"
	savedPlan(t, j, testClock(), nil)
	if err := j.in.recordApply(context.Background(), runstate.ApplyRecord{Digest: "d1", Result: report.StatusApplied}, false); err != nil {
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
	if err := j.in.recordApply(context.Background(), runstate.ApplyRecord{Result: report.StatusDestroyed}, true); err != nil {
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
		req, err := (&applyStep{}).build(in)
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
	if out := (&applyStep{}).run(context.Background(), bad); out.Err == nil || out.Failed != report.StepApply || len(e.applies) != 0 {
		t.Errorf("an apply that cannot be built: %+v", out)
	}
	good := testInput(stacks.RunStep{Type: "apply"}, "apply step 2 (apply)", nil)
	good.engine = e
	if out := (&applyStep{}).run(context.Background(), good); out.Err != nil || len(e.applies) != 1 || e.applies[0].Tries != 1 ||
		out.Apply == nil || out.Apply.Request.Tries != 1 || len(out.Reports) != 1 {
		t.Errorf("an apply: %+v, %+v", out, e.applies)
	}
	e.applied = []applyResult{{Err: errorString("boom"), Failed: report.StepApply}}
	if out := (&applyStep{}).run(context.Background(), good); out.Err == nil || out.Failed != report.StepApply || out.Apply == nil || out.Apply.Err != out.Err {
		t.Errorf("a failed apply returns its failure: %+v", out)
	}
}

// TestApplyTries: what follows each try of an apply: the end once it
// applied, was cancelled, applied a user's own plan file, failed before
// the engine's apply or has no try left; a retry after the delay, each
// later one backoff times longer; a stale plan made again once, whatever
// the tries.
func TestApplyTries(t *testing.T) {
	fail := &applyResult{Err: errorString("Error: boom"), Failed: report.StepApply}
	stale := &applyResult{Err: errorString("Error: Saved plan is stale"), Failed: report.StepApply}
	ok := &applyResult{}
	initFailed := &applyResult{Err: errorString("Error: no backend"), Failed: report.StepInit}
	ends := applyVerdict{Next: applyEnds}
	retry := func(d time.Duration) applyVerdict { return applyVerdict{Next: applyRetries, Delay: d} }
	for _, tc := range []struct {
		name      string
		req       applyRequest
		tries     []*applyResult
		cancelled bool
		userPlan  bool
		want      []applyVerdict
	}{
		{"applied", applyRequest{Tries: 3}, []*applyResult{ok}, false, false, []applyVerdict{ends}},
		{"one try", applyRequest{Tries: 1, Delay: time.Second}, []*applyResult{fail}, false, false, []applyVerdict{ends}},
		{"retries growing", applyRequest{Tries: 4, Delay: 2 * time.Second, Backoff: 1.5}, []*applyResult{fail, fail, fail, fail}, false, false,
			[]applyVerdict{retry(2 * time.Second), retry(3 * time.Second), retry(4500 * time.Millisecond), ends}},
		{"retried, then applied", applyRequest{Tries: 3, Delay: time.Second, Backoff: 1}, []*applyResult{fail, ok}, false, false,
			[]applyVerdict{retry(time.Second), ends}},
		{"stale once, whatever the tries", applyRequest{Tries: 1}, []*applyResult{stale, ok}, false, false,
			[]applyVerdict{{Next: applyReplans, Stale: true}, ends}},
		{"stale twice", applyRequest{Tries: 5}, []*applyResult{stale, stale}, false, false,
			[]applyVerdict{{Next: applyReplans, Stale: true}, {Next: applyEnds, Stale: true}}},
		{"stale after a retry", applyRequest{Tries: 2, Delay: time.Second, Backoff: 2}, []*applyResult{fail, stale, fail}, false, false,
			[]applyVerdict{retry(time.Second), {Next: applyReplans, Stale: true}, ends}},
		{"cancelled", applyRequest{Tries: 3}, []*applyResult{fail}, true, false, []applyVerdict{ends}},
		{"a user's plan file", applyRequest{Tries: 3}, []*applyResult{stale}, false, true, []applyVerdict{ends}},
		{"init failed", applyRequest{Tries: 3}, []*applyResult{initFailed}, false, false, []applyVerdict{ends}},
	} {
		tries := newApplyTries(tc.req)
		for i, r := range tc.tries {
			if got := tries.after(r, tc.cancelled, tc.userPlan); got != tc.want[i] {
				t.Errorf("%s: try %d: %+v, want %+v", tc.name, i+1, got, tc.want[i])
			}
		}
		if tries.try != len(tc.tries) {
			t.Errorf("%s: %d tries counted, want %d", tc.name, tries.try, len(tc.tries))
		}
	}
}

// TestFoldApply: the job runs an apply step's tries as their results
// say, the plan step made again between them, and ends as the last try,
// or the new plan, says: applied, failed, applied earlier, waiting for
// approval, refused for want of a reviewed plan. No engine starts.
func TestFoldApply(t *testing.T) {
	boom := applyResult{Err: errorString("Error: boom"), Failed: report.StepApply}
	stale := applyResult{Err: errorString("Error: Saved plan is stale"), Failed: report.StepApply}
	changes := &planResult{HasChanges: true, View: planView{Changes: report.Changes{Add: 2}, ChangeSet: "new"}}
	none := &planResult{}
	for _, tc := range []struct {
		name     string
		tries    int
		auto     bool
		userPlan bool
		require  bool
		applied  []applyResult
		planned  []*planResult
		// The job's end: its applies and plans, its failure (in its
		// text) and failed step, its flags, a note.
		applies, plans int
		err, failed    string
		fresh          bool
		replanned      bool
		earlier        bool
		refused        string
		note           string
	}{
		{name: "applied", tries: 1, applies: 1},
		{name: "no retry", tries: 1, applied: []applyResult{boom}, applies: 1, err: "boom", failed: "apply"},
		{name: "retried until applied", tries: 3, auto: true, applied: []applyResult{boom, boom}, planned: []*planResult{changes, changes},
			applies: 3, plans: 2, fresh: true, note: "apply failed; retrying (3 of 3) in 0s"},
		{name: "out of tries", tries: 2, auto: true, applied: []applyResult{boom, boom}, planned: []*planResult{changes},
			applies: 2, plans: 1, err: "boom", failed: "apply", fresh: true},
		{name: "a retry's new plan with no changes is applied", tries: 2, applied: []applyResult{boom}, planned: []*planResult{none},
			applies: 2, plans: 1, fresh: true},
		{name: "a retry's new plan with changes is saved for review", tries: 3, applied: []applyResult{boom}, planned: []*planResult{changes},
			applies: 1, plans: 1, err: "boom; a new plan is saved for review", failed: "apply", fresh: true},
		{name: "stale, planned again and applied", tries: 1, auto: true, applied: []applyResult{stale}, planned: []*planResult{changes},
			applies: 2, plans: 1, fresh: true, note: "the saved plan is stale"},
		{name: "stale twice", tries: 1, auto: true, applied: []applyResult{stale, stale}, planned: []*planResult{changes},
			applies: 2, plans: 1, err: "Saved plan is stale", failed: "apply", fresh: true},
		{name: "stale, its new plan waits for approval", tries: 1, applied: []applyResult{stale}, planned: []*planResult{changes},
			applies: 1, plans: 1, fresh: true, replanned: true},
		{name: "stale, its changes applied earlier", tries: 1, auto: true,
			applied: []applyResult{{Err: stale.Err, Failed: report.StepApply, Saved: &runstate.PlanRecord{Digest: "d0", HasChanges: true, Changes: report.Changes{Add: 1}}}},
			planned: []*planResult{none}, applies: 1, plans: 1, fresh: true, earlier: true, note: "applied earlier"},
		{name: "stale, its new plan unreviewed", tries: 1, auto: true, require: true, applied: []applyResult{stale}, planned: []*planResult{changes},
			applies: 1, plans: 1, fresh: true, refused: "no reviewed plan for its changes (+2 ~0 -0)"},
		{name: "the new plan fails", tries: 3, auto: true, applied: []applyResult{boom}, planned: []*planResult{{Err: errorString("plan failed"), Failed: report.StepPlan}},
			applies: 1, plans: 1, err: "plan failed", failed: "plan"},
		{name: "a user's plan file", tries: 3, userPlan: true, applied: []applyResult{stale}, applies: 1, err: "stale", failed: "apply"},
		{name: "init failed", tries: 3, applied: []applyResult{{Err: errorString("no backend"), Failed: report.StepInit}},
			applies: 1, err: "no backend", failed: "init"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			j := testJob(t, workflowYML, &fakeExec{}, &out)
			e := &fakeEngine{applied: tc.applied, planned: tc.planned}
			j.in.engine, j.in.RetryDelay = e, 0
			j.run.AutoApprove, j.ur.UserPlan = tc.auto, tc.userPlan
			j.run.Policy.ReusesPlans, j.run.RequireReviewedPlan = tc.require, tc.require
			st := stacks.RunStep{Type: "apply", RunOn: "success", Retry: &stacks.RetryPolicy{Tries: tc.tries, Backoff: 2}}
			j.runWorkflow(context.Background(), report.StepApply, []stacks.RunStep{st})
			if len(e.applies) != tc.applies || len(e.plans) != tc.plans {
				t.Errorf("%d applies and %d plans, want %d and %d", len(e.applies), len(e.plans), tc.applies, tc.plans)
			}
			switch {
			case tc.err == "" && j.res.Err != nil:
				t.Errorf("failed: %v", j.res.Err)
			case tc.err != "" && (j.res.Err == nil || !strings.Contains(j.res.Err.Error(), tc.err) || j.res.FailedStep != tc.failed):
				t.Errorf("failure %v at %q, want %q at %q", j.res.Err, j.res.FailedStep, tc.err, tc.failed)
			}
			if j.res.Fresh != tc.fresh || j.res.Replanned != tc.replanned || j.res.AppliedEarlier != tc.earlier {
				t.Errorf("fresh %t replanned %t applied earlier %t, want %t %t %t", j.res.Fresh, j.res.Replanned, j.res.AppliedEarlier, tc.fresh, tc.replanned, tc.earlier)
			}
			if !strings.Contains(j.res.Refused, tc.refused) || (tc.refused == "") != (j.res.Refused == "") {
				t.Errorf("refused %q, want %q", j.res.Refused, tc.refused)
			}
			applyReports := 0
			for _, s := range j.res.Steps {
				if s.Name == report.StepApply {
					applyReports++
				}
			}
			if want := tc.applies; tc.failed == report.StepInit {
				if applyReports != 0 {
					t.Errorf("%d apply reports for an apply that never reached the engine", applyReports)
				}
			} else if applyReports != want {
				t.Errorf("%d apply reports, want one a try: %d", applyReports, want)
			}
			if !strings.Contains(out.String(), tc.note) {
				t.Errorf("notes %q, want %q", out.String(), tc.note)
			}
		})
	}
}

// TestEngineApplyReturnsItsTry: an apply whose start cannot be recorded
// returns its try as a value, writing nothing of the job's result: the
// plan's record it consumed, one apply report that never ran, its
// failure under apply; the plan's record is gone, its file kept. No
// engine starts.
func TestEngineApplyReturnsItsTry(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.in.memo.digest = "d1"
	savedPlan(t, j, testClock(), nil)
	j.ur.Inited, j.ur.Spec.CreateAndSelectWorkspace = true, false
	var asked string
	j.run.Applying = func(_ *stacks.Unit, digest string) error {
		asked = digest
		return errorString("bucket down")
	}
	in := j.in.forStep(stacks.DefaultStep(report.StepApply), "apply step", report.StepApply)
	r := in.engineApply(context.Background(), applyRequest{Tries: 2})
	if r.Failed != report.StepApply || r.Err == nil || !strings.Contains(r.Err.Error(), "not applied: recording that the apply starts: bucket down") {
		t.Errorf("failure %v at %q", r.Err, r.Failed)
	}
	if r.Saved == nil || r.Saved.Digest != "d1" || asked != "d1" || r.Request.Tries != 2 {
		t.Errorf("saved %+v, asked for %q, request %+v", r.Saved, asked, r.Request)
	}
	if len(r.Reports) != 1 || r.Reports[0].Name != report.StepApply || r.Reports[0].OK {
		t.Errorf("reports %+v", r.Reports)
	}
	if j.res.Err != nil || len(j.res.Steps) != 0 {
		t.Errorf("the job's result written: %v, %+v", j.res.Err, j.res.Steps)
	}
	if us, err := j.run.State.ReadUnit(j.ur.Spec); err != nil || us.Plan != nil {
		t.Errorf("the plan's record after a try: %+v %v", us, err)
	}
	if _, err := os.Stat(j.ur.PlanFile); err != nil {
		t.Errorf("the plan's file went with a failed try: %v", err)
	}
}
