package job

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

func TestReviewedFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		planPR, applyPR string
		ci, want        bool
	}{
		{"PR #5", "PR #5", true, true},
		{"PR #5", "PR #6", true, false},
		{"PR #5", "PR #6", false, false},
		// A push straight to the branch in CI: no pull request's review.
		{"PR #5", "", true, false},
		// A person applying at a terminal what a pull request planned.
		{"PR #5", "", false, true},
		// A plan run outside a pull request, applied outside one.
		{"", "", true, true},
		{"", "", false, true},
		{"", "PR #6", true, false},
		{"MR !5", "MR !5", true, true},
	}
	for _, c := range cases {
		if got := reviewedFor(c.planPR, c.applyPR, c.ci); got != c.want {
			t.Errorf("reviewedFor(%q, %q, ci %t) = %t, want %t", c.planPR, c.applyPR, c.ci, got, c.want)
		}
	}
}

// TestSameChanges: plans without changes are alike; plans with changes
// are when their change sets are, and a plan with no change set is like
// none.
func TestSameChanges(t *testing.T) {
	for _, tc := range []struct {
		reviewed   runstate.PlanRecord
		hasChanges bool
		changeSet  string
		want       bool
	}{
		{runstate.PlanRecord{}, false, "", true},
		{runstate.PlanRecord{}, true, "a", false},
		{runstate.PlanRecord{HasChanges: true, ChangeSet: "a"}, false, "", false},
		{runstate.PlanRecord{HasChanges: true, ChangeSet: "a"}, true, "a", true},
		{runstate.PlanRecord{HasChanges: true, ChangeSet: "a"}, true, "b", false},
		{runstate.PlanRecord{HasChanges: true}, true, "", false},
	} {
		if got := sameChanges(&tc.reviewed, tc.hasChanges, tc.changeSet); got != tc.want {
			t.Errorf("sameChanges(%+v, %t, %q) = %t, want %t", tc.reviewed, tc.hasChanges, tc.changeSet, got, tc.want)
		}
	}
}

// TestPullRequestOf: a CI run's pull request, in its service's words.
func TestPullRequestOf(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"GITHUB_ACTIONS=true", "GITHUB_REF=refs/pull/42/merge"}, "PR #42"},
		{[]string{"GITHUB_ACTIONS=true", "GITHUB_REF=refs/pull/7/head"}, "PR #7"},
		{[]string{"GITHUB_ACTIONS=true", "GITHUB_REF=refs/heads/main"}, ""},
		{[]string{"GITLAB_CI=true", "CI_MERGE_REQUEST_IID=9"}, "MR !9"},
		{[]string{"GITLAB_CI=true"}, ""},
		{nil, ""},
	} {
		if got := PullRequestOf(tc.env); got != tc.want {
			t.Errorf("PullRequestOf(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
	if PullRequestName(5, []string{"GITLAB_CI=true"}) != "MR !5" || PullRequestName(5, nil) != "PR #5" {
		t.Error("PullRequestName")
	}
}

// TestReplannedVerdict: a new plan is compared with the reviewed plan
// when there is one and its review was this apply's; the comparison,
// and what --require-reviewed-plan makes of it, are values.
func TestReplannedVerdict(t *testing.T) {
	rv := &runstate.PlanRecord{HasChanges: true, Changes: report.Changes{Add: 1}, ChangeSet: "cs", Review: "PR #5", Command: "plan"}
	add2 := report.Changes{Add: 2}
	for _, tc := range []struct {
		name       string
		rv         *runstate.PlanRecord
		here       bool
		hasChanges bool
		changeSet  string
		appliesPR  string
		reused     bool
		want       *report.Replanned
		refused    string
	}{
		{name: "same changes", rv: rv, here: true, hasChanges: true, changeSet: "cs",
			want: &report.Replanned{ReviewedBy: "PR #5", Reviewed: rv.Changes, New: add2, Same: true}},
		{name: "other changes", rv: rv, here: true, hasChanges: true, changeSet: "other",
			want:    &report.Replanned{ReviewedBy: "PR #5", Reviewed: rv.Changes, New: add2},
			refused: "net: its new plan differs from the reviewed plan, from PR #5 (reviewed +1 ~0 -0, new +2 ~0 -0)"},
		{name: "nothing reviewed", hasChanges: true, refused: "net: no reviewed plan for its changes (+2 ~0 -0)"},
		{name: "reviewed for another apply", rv: rv, hasChanges: true, changeSet: "cs", appliesPR: "PR #6",
			refused: "net: no reviewed plan for its changes (+2 ~0 -0) in PR #6; its saved plan was reviewed in PR #5"},
		{name: "reviewed elsewhere, applied by a push", rv: rv, hasChanges: true, refused: "in this apply; its saved plan was reviewed in PR #5"},
		{name: "the reviewed plan reused", rv: rv, reused: true, hasChanges: true},
	} {
		got := replanned(tc.rv, tc.here, tc.hasChanges, add2, tc.changeSet)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: replanned = %+v, want %+v", tc.name, got, tc.want)
		}
		ur := &Unit{Reviewed: tc.rv, ReviewedHere: tc.here, AppliesPR: tc.appliesPR}
		why := unreviewed("net", ur, add2, got, tc.reused)
		if (why == "") != (tc.refused == "") || !strings.Contains(why, tc.refused) {
			t.Errorf("%s: unreviewed = %q, want %q", tc.name, why, tc.refused)
		}
	}
}

// reviewJob is a job of an apply, with a reviewed plan of changes.
func reviewJob(t *testing.T, out *bytes.Buffer, require bool) *job {
	j := testJob(t, workflowYML, &fakeExec{}, out)
	j.run.Policy = &command.Policy{Job: command.JobPlan, ReusesPlans: true}
	j.run.RequireReviewedPlan = require
	j.ur.Reviewed = &runstate.PlanRecord{HasChanges: true, Changes: report.Changes{Add: 1}, ChangeSet: "cs", Review: "PR #5", Command: "plan"}
	j.ur.ReviewedHere, j.ur.AppliesPR = true, "PR #5"
	return j
}

// TestReview: a new plan is compared with the reviewed one and the
// comparison noted; under --require-reviewed-plan, changes no reviewed
// plan holds are refused and the plan discarded; a reused plan is the
// reviewed plan itself.
func TestReview(t *testing.T) {
	for _, tc := range []struct {
		name      string
		require   bool
		reused    bool
		changeSet string
		here      bool
		same      bool
		refused   string
	}{
		{name: "same changes", changeSet: "cs", here: true, same: true},
		{name: "other changes", changeSet: "other", here: true},
		{name: "other changes, required", require: true, changeSet: "other", here: true, refused: "its new plan differs from the reviewed plan, from PR #5"},
		{name: "same changes, required", require: true, changeSet: "cs", here: true, same: true},
		{name: "reviewed elsewhere, required", require: true, changeSet: "cs", refused: "its saved plan was reviewed in PR #5"},
		{name: "reused", reused: true, changeSet: "cs", here: true, same: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			j := reviewJob(t, &out, tc.require)
			j.ur.ReviewedHere = tc.here
			if !tc.here {
				j.ur.AppliesPR = "PR #6"
			}
			j.res.HasChanges, j.res.Changes, j.res.ChangeSet = true, report.Changes{Add: 1}, tc.changeSet
			savedPlan(t, j, testClock(), nil)
			j.review(tc.reused)
			if tc.refused != "" {
				if !strings.Contains(j.res.Refused, tc.refused) || !strings.HasSuffix(j.res.Refused, "not applied (--require-reviewed-plan)") {
					t.Errorf("refused %q, want %q", j.res.Refused, tc.refused)
				}
				if us, _ := j.run.State.ReadUnit(j.ur.Spec); us.Plan != nil {
					t.Error("a refused plan's record was kept")
				}
				if _, err := os.Stat(j.ur.PlanFile); !os.IsNotExist(err) {
					t.Error("a refused plan's file was kept")
				}
				return
			}
			if j.res.Refused != "" {
				t.Errorf("refused: %q", j.res.Refused)
			}
			if !tc.here {
				return
			}
			if j.res.Replan == nil || j.res.Replan.Same != tc.same || j.res.Replan.Reused != tc.reused || j.res.Replan.ReviewedBy != "PR #5" {
				t.Errorf("replan = %+v", j.res.Replan)
			}
			if out.Len() == 0 {
				t.Error("the comparison is not noted")
			}
		})
	}
}

// TestRefuseUnreviewed: with nothing reviewed, changes are refused; a plan
// with no changes needs no review; without --require-reviewed-plan
// nothing is refused.
func TestRefuseUnreviewed(t *testing.T) {
	var out bytes.Buffer
	j := reviewJob(t, &out, true)
	j.ur.Reviewed = nil
	j.res.HasChanges, j.res.Changes = true, report.Changes{Destroy: 2}
	if !j.refuseUnreviewed(false) || !strings.Contains(j.res.Refused, "no reviewed plan for its changes (+0 ~0 -2)") {
		t.Errorf("nothing reviewed: %q", j.res.Refused)
	}
	j = reviewJob(t, &out, true)
	j.res.HasChanges = false
	if j.refuseUnreviewed(false) {
		t.Error("a plan with no changes refused")
	}
	j = reviewJob(t, &out, false)
	j.ur.Reviewed, j.res.HasChanges = nil, true
	if j.refuseUnreviewed(false) {
		t.Error("refused without --require-reviewed-plan")
	}
}

// TestTakeReviewed: an apply's plan job keeps the reviewable saved plan,
// and whether its review was this apply's.
func TestTakeReviewed(t *testing.T) {
	var out bytes.Buffer
	j := reviewJob(t, &out, false)
	j.run.PullRequest = "PR #5"
	us := &runstate.UnitState{Plan: &runstate.PlanRecord{Command: "plan", Review: "PR #5", HasChanges: true}}
	j.takeReviewed(us)
	if j.ur.Reviewed == nil || j.ur.Reviewed == us.Plan || !j.ur.ReviewedHere || j.ur.AppliesPR != "PR #5" {
		t.Errorf("reviewed %+v here %t applies %q", j.ur.Reviewed, j.ur.ReviewedHere, j.ur.AppliesPR)
	}
	j.takeReviewed(&runstate.UnitState{Plan: &runstate.PlanRecord{Command: "plan", Destroy: true}})
	if j.ur.Reviewed != nil || j.ur.ReviewedHere {
		t.Error("a destroy plan taken for a reviewed one")
	}
	j.run.Destroying = true
	j.takeReviewed(us)
	if j.ur.Reviewed != nil {
		t.Error("a destroy's job took a reviewed plan")
	}
}

// TestAppliedEarlier: a stale saved plan whose changes the state holds is
// recorded applied at its digest, its file removed, its changes
// reported.
func TestAppliedEarlier(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.in.memo.digest = "d1"
	savedPlan(t, j, testClock(), nil)
	us, _ := j.run.State.ReadUnit(j.ur.Spec)
	j.in.memo.digest, j.res.HasChanges = "d2", false
	j.appliedEarlier(context.Background(), us.Plan)
	if !j.res.AppliedEarlier || !j.res.HasChanges || j.in.memo.digest != "d1" || j.res.Changes != (report.Changes{Add: 1}) || j.res.Err != nil {
		t.Errorf("result = %+v", j.res)
	}
	after, err := j.run.State.ReadUnit(j.ur.Spec)
	if err != nil || after.Plan != nil || after.Apply == nil || after.Apply.Digest != "d1" || after.Apply.Result != report.StatusApplied {
		t.Errorf("record: %+v %v", after, err)
	}
	if _, err := os.Stat(j.ur.PlanFile); !os.IsNotExist(err) {
		t.Error("the stale plan's file was kept")
	}
	if !strings.Contains(out.String(), "applied earlier") {
		t.Errorf("notes: %q", out.String())
	}
}
