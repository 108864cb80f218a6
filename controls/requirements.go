package controls

import (
	"fmt"
	"strings"

	"github.com/strata-iac/strata/report"
)

// requirements says what an apply check finds missing in the request's
// pull request, or "". A merged pull request met them when it merged, as
// Terrateam has it; no check, or one with nothing enabled, asks nothing.
func (d *decider) requirements(chk *Check) (string, error) {
	if chk == nil || !chk.asksAnything() {
		return "", nil
	}
	pr := d.req.PR
	if pr == nil {
		return fmt.Sprintf("apply_requirements check %q needs a pull request (%s), and this apply has none", chk.QueryText, chk.asks()), nil
	}
	if pr.Merged {
		return "", nil
	}
	var missing []string
	if chk.ApplyAfterMerge {
		missing = append(missing, fmt.Sprintf("applies only once %s is merged", pr.Name))
	}
	if chk.Approved {
		why, err := d.approvals(chk, pr)
		if err != nil {
			return "", err
		}
		if why != "" {
			missing = append(missing, why)
		}
	}
	if chk.MergeConflicts {
		switch {
		case pr.Mergeable == nil:
			missing = append(missing, fmt.Sprintf("the forge has not yet said whether %s merges cleanly", pr.Name))
		case !*pr.Mergeable:
			missing = append(missing, fmt.Sprintf("%s has merge conflicts", pr.Name))
		}
	}
	if chk.StatusChecks {
		if why := chk.failingChecks(pr); why != "" {
			missing = append(missing, why)
		}
	}
	if chk.ReadyForReview && pr.Draft {
		missing = append(missing, fmt.Sprintf("%s is a draft", pr.Name))
	}
	if len(missing) == 0 {
		return "", nil
	}
	return fmt.Sprintf("apply_requirements check %q: %s", chk.QueryText, strings.Join(missing, "; ")), nil
}

// asksAnything says the check holds an apply back in some way; being
// ready for review is asked of a pull request only when there is one.
func (c *Check) asksAnything() bool {
	return c.Approved || c.MergeConflicts || c.StatusChecks || c.ApplyAfterMerge
}

// asks names what the check asks, for an apply without a pull request.
func (c *Check) asks() string {
	var a []string
	if c.Approved {
		a = append(a, "approvals")
	}
	if c.MergeConflicts {
		a = append(a, "no merge conflicts")
	}
	if c.StatusChecks {
		a = append(a, "passed status checks")
	}
	if c.ApplyAfterMerge {
		a = append(a, "a merge")
	}
	return strings.Join(a, ", ")
}

// approvals says which approvals the pull request lacks, or "".
func (d *decider) approvals(chk *Check, pr *PullRequest) (string, error) {
	var missing []string
	for _, m := range chk.AllOf {
		ok := false
		for _, a := range pr.Approvers {
			var err error
			if ok, err = d.matches(a, m); err != nil {
				return "", err
			}
			if ok {
				break
			}
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("needs an approval from %s (all_of)", m))
		}
	}
	var counted []string
	for _, a := range pr.Approvers {
		ok := len(chk.AnyOf) == 0
		if !ok {
			var err error
			if ok, err = d.matchesAny(a, chk.AnyOf); err != nil {
				return "", err
			}
		}
		if ok {
			counted = append(counted, a)
		}
	}
	if len(counted) < chk.AnyOfCount {
		from := ""
		if len(chk.AnyOf) > 0 {
			from = " from " + describe(chk.AnyOf)
		}
		has := "none"
		if len(counted) > 0 {
			has = fmt.Sprintf("%d: %s", len(counted), strings.Join(counted, ", "))
		}
		missing = append(missing, fmt.Sprintf("needs %s%s, has %s", report.CountOf(chk.AnyOfCount, "approval"), from, has))
	}
	if chk.RequireCompletedReviews {
		switch {
		case pr.ReviewDecision == "" && len(pr.ChangesRequested) > 0:
			missing = append(missing, "changes requested by "+strings.Join(pr.ChangesRequested, ", "))
		case pr.ReviewDecision == "" && len(pr.PendingReviewers) > 0:
			missing = append(missing, "reviews still requested from "+strings.Join(pr.PendingReviewers, ", "))
		case pr.ReviewDecision != "" && pr.ReviewDecision != "approved":
			missing = append(missing, fmt.Sprintf("the forge's review verdict is %s, not approved", strings.ReplaceAll(pr.ReviewDecision, "_", " ")))
		}
	}
	return strings.Join(missing, "; "), nil
}

// failingChecks names the head commit's checks that hold the apply back,
// those ignore_matching names left out, or "".
func (c *Check) failingChecks(pr *PullRequest) string {
	var failing []string
	for _, s := range pr.Checks {
		if !s.passed() && !c.ignored(s.Name) && s.Name != ApplyStatusName {
			failing = append(failing, fmt.Sprintf("%s (%s)", s.Name, s.State))
		}
	}
	if len(failing) == 0 {
		return ""
	}
	return "status checks not passed: " + strings.Join(failing, ", ")
}
