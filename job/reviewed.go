package job

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// What was reviewed is what is applied (docs/behaviour.md#saved-plans).
// A saved plan made by `plan` is the plan a review saw: its record says
// where it was made (a pull request, else the plan run's time) and what
// it changes. When apply plans again in its place (its digest no longer
// matches, a unit it plans after was applied since, or the engine calls
// it stale), the new plan is compared with it, and the unit's report says
// whether the changes are the same. --require-reviewed-plan refuses to
// apply changes no reviewed plan holds.

// reasonAppliedEarlier and reasonDestroyedEarlier are the reasons of a
// unit whose stale saved plan had changes that the state already holds.
const (
	ReasonAppliedEarlier   = "applied earlier: the state already holds the saved plan's changes"
	ReasonDestroyedEarlier = "destroyed earlier: the state already holds the saved plan's changes"
)

// sameChanges reports whether a new plan (hasChanges, changeSet) makes
// the changes the reviewed plan a makes.
func sameChanges(a *runstate.PlanRecord, hasChanges bool, changeSet string) bool {
	if !a.HasChanges || !hasChanges {
		return a.HasChanges == hasChanges
	}
	return a.ChangeSet != "" && a.ChangeSet == changeSet
}

// pullRequestOf names the pull request a CI run builds, from the CI's
// environment: "PR #5" on GitHub, "MR !5" on GitLab; "" outside one.
func PullRequestOf(env []string) string {
	ci := ciplatform.Read(env)
	switch pr := ci.Job().PullRequest; {
	case pr == "":
		return ""
	case ci.Platform == ciplatform.GitLab:
		return "MR !" + pr
	default:
		return "PR #" + pr
	}
}

// PullRequestName names pull request n as the CI service does: "MR !5"
// on GitLab, "PR #5" otherwise.
func PullRequestName(n int, env []string) string {
	if ciplatform.Read(env).Platform == ciplatform.GitLab {
		return "MR !" + strconv.Itoa(n)
	}
	return "PR #" + strconv.Itoa(n)
}

// takeReviewed keeps the saved plan of the unit's record us, when a
// review saw it, before an apply's plan job reuses it or plans in its
// place.
func (j *job) takeReviewed(us *runstate.UnitState) {
	j.ur.Reviewed, j.ur.ReviewedHere, j.ur.AppliesPR = nil, false, ""
	if !j.run.Policy.ReusesPlans || j.ur.UserPlan || j.run.Destroying {
		return
	}
	if us == nil || !us.Plan.Reviewable() {
		return
	}
	p := *us.Plan
	j.ur.Reviewed = &p
	applyPR, ci := j.run.PullRequest, ciplatform.Read(j.run.Environ).Forge() != ciplatform.None
	if applyPR == "" && ci && p.Review != "" && j.run.MergedPullRequest != nil {
		// A push: the merge commit's pull request, if it is one.
		applyPR = j.run.MergedPullRequest()
	}
	j.ur.ReviewedHere = reviewedFor(p.Review, applyPR, ci)
	j.ur.AppliesPR = applyPR
}

// reviewedFor reports whether a plan reviewed in planPR ("PR #5"; "" for
// a plan run outside one) was reviewed for an apply of applyPR (the pull
// request whose merge it applies; "" when it knows none): its note and
// its comparison land on that pull request's apply, never on another's
// that met the plan on the way, as a reader its change pulled in
// (docs/behaviour.md#saved-plans). In CI an apply that knows no pull
// request is a push straight to the branch, which no pull request's
// review was for; at a terminal it is a person applying what was
// planned.
func reviewedFor(planPR, applyPR string, ci bool) bool {
	switch {
	case planPR == applyPR:
		return true
	case applyPR != "":
		return false
	default:
		return !ci
	}
}

// review compares the plan an apply's job now holds with the reviewed
// plan, when it made a new one, and under --require-reviewed-plan refuses
// changes no reviewed plan holds (refuseUnreviewed). reused says the job
// holds the saved plan itself.
func (j *job) review(reused bool) {
	if j.res.Err != nil || !j.run.Policy.ReusesPlans || j.ur.UserPlan || j.run.Destroying {
		return
	}
	if reused {
		j.noteReused()
	} else {
		j.compareReviewed()
	}
	j.refuseUnreviewed(reused)
}

// noteReused says which reviewed plan the apply consumes as it is,
// whichever pull request's review it was: it is what that review saw.
func (j *job) noteReused() {
	rv := j.ur.Reviewed
	if rv == nil {
		return
	}
	rp := &report.Replanned{ReviewedBy: rv.ReviewedBy(), Reviewed: rv.Changes, New: rv.Changes, Same: true, Reused: true, PullRequest: rv.Review}
	j.res.Replan = rp
	j.run.Console.UnitNote(j.ur.Spec.Name(), rp.Text("applied"))
}

// compareReviewed compares the job's new plan with the reviewed plan, and
// notes how it compares. A plan reviewed for another pull request than
// the one this apply applies is not compared: it says nothing of this
// apply (reviewedFor).
func (j *job) compareReviewed() {
	rp := replanned(j.ur.Reviewed, j.ur.ReviewedHere, j.res.HasChanges, j.res.Changes, j.res.ChangeSet)
	if rp == nil {
		return
	}
	j.res.Replan = rp
	j.run.Console.UnitNote(j.ur.Spec.Name(), rp.Text("new"))
}

// replanned is the comparison of a new plan (hasChanges, changes,
// changeSet) with the reviewed plan rv, whose review was this apply's
// when here; nil when there is no such plan.
func replanned(rv *runstate.PlanRecord, here, hasChanges bool, changes report.Changes, changeSet string) *report.Replanned {
	if rv == nil || !here {
		return nil
	}
	return &report.Replanned{ReviewedBy: rv.ReviewedBy(), Reviewed: rv.Changes, New: changes, Same: sameChanges(rv, hasChanges, changeSet)}
}

// refuseUnreviewed, under --require-reviewed-plan, refuses the job's plan
// when it has changes and is not the reviewed plan or one with its
// changes: the unit ends failed, and the plan is discarded, so no later
// apply takes it for a reviewed one. A plan with no changes needs no
// review.
func (j *job) refuseUnreviewed(reused bool) bool {
	if !j.run.RequireReviewedPlan || !j.res.HasChanges {
		return false
	}
	name := j.ur.Spec.Name()
	why := unreviewed(name, j.ur, j.res.Changes, j.res.Replan, reused)
	if why == "" {
		return false
	}
	j.res.Refused = why + "; not applied (--require-reviewed-plan)"
	if err := j.run.State.UpdateUnit(j.ur.Spec, func(s *runstate.UnitState) { s.Plan = nil }); err != nil {
		j.res.Refused += "; and its plan could not be discarded: " + err.Error()
	}
	os.Remove(j.ur.PlanFile)
	j.run.Console.UnitNote(name, j.res.Refused)
	return true
}

// unreviewed says why a plan of unit name with changes holds no
// reviewed change, "" when it is the reviewed plan (reused) or one with
// its changes (rp, its comparison with it): the unit's reviewed plan
// (ur.Reviewed) is missing, was reviewed for another apply, or differs.
func unreviewed(name string, ur *Unit, changes report.Changes, rp *report.Replanned, reused bool) string {
	switch {
	case reused && ur.Reviewed != nil:
		// The reviewed plan itself, whichever review saw it.
		return ""
	case ur.Reviewed == nil:
		return fmt.Sprintf("%s: no reviewed plan for its changes (%s)", name, changes)
	case !ur.ReviewedHere:
		return fmt.Sprintf("%s: no reviewed plan for its changes (%s) in %s; its saved plan was reviewed in %s",
			name, changes, cmp.Or(ur.AppliesPR, "this apply"), ur.Reviewed.ReviewedBy())
	case rp != nil && !rp.Same:
		return fmt.Sprintf("%s: its new plan differs from the reviewed plan, from %s (reviewed %s, new %s)",
			name, rp.ReviewedBy, rp.Reviewed, rp.New)
	}
	return ""
}

// appliedEarlier settles a unit whose stale saved plan had changes and
// whose new plan, made from the same content, has none: the state
// already holds the saved plan's changes, applied by an earlier apply of
// it whose record was lost (a CI job that could not write back to the
// bucket) or by hand. Nothing is applied again; the run state records the
// saved plan applied at its digest, as that apply would have, and the
// report shows its changes.
func (j *job) appliedEarlier(ctx context.Context, saved *runstate.PlanRecord) {
	result := report.StatusApplied
	if j.run.Destroying {
		result = report.StatusDestroyed
	}
	err := j.in.recordApply(ctx, saved.Applied(result), saved.Partial)
	os.Remove(j.ur.PlanFile)
	j.res.AppliedEarlier = true
	j.res.HasChanges, j.res.Changes, j.in.memo.digest, j.res.ChangeSet = saved.HasChanges, saved.Changes, saved.Digest, saved.ChangeSet
	j.res.ChangedOutputs, j.res.OutputsKnown = saved.ChangedOutputs, saved.KnowsOutputs()
	j.run.Console.UnitNote(j.ur.Spec.Name(), fmt.Sprintf("the new plan has no changes: the state already holds the saved plan's changes (%s), applied earlier", saved.Changes))
	j.failed(ctx, report.StepState, err)
}
