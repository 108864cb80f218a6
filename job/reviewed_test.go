package job

import "testing"

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
