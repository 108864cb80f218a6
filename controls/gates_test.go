package controls

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-iac/strata/report"
)

// gateSource is a pull request with approvals and comments.
type gateSource struct {
	*directory
	pr          *PullRequest
	comments    []Comment
	commentsErr error
}

func (s *gateSource) PullRequest(context.Context) (*PullRequest, error) { return s.pr, nil }

func (s *gateSource) Comments(context.Context) ([]Comment, error) {
	return s.comments, s.commentsErr
}

// TestGates: a gate with a token is approved by the comments that name
// it, one without by the pull request's approvals; any_of counts distinct
// approvers, all_of needs each; the forge failing holds the apply.
func TestGates(t *testing.T) {
	t.Parallel()
	conftest := report.Gate{Step: "plan step 3 (conftest)", Token: "denied", AnyOf: []string{"team:sre"}, AnyOfCount: 2}
	approve := func(author string) Comment { return Comment{Author: author, Body: "strata gate approve denied"} }
	tests := []struct {
		name     string
		gate     report.Gate
		comments []Comment
		approved []string
		err      error
		want     string
	}{
		{"two of the team", conftest, []Comment{approve("alice"), approve("carol")}, nil, nil, ""},
		{"one approver counts once", conftest, []Comment{approve("alice"), approve("Alice"), {Author: "bob", Body: "strata gate approve denied"}}, nil, nil,
			"gate denied (plan step 3 (conftest) failed) needs 2 approvals from team:sre (comments `strata gate approve denied`): 1 of 2"},
		{"another token does not count", conftest, []Comment{{Author: "alice", Body: "terrateam gate approve other"}, approve("carol")}, nil, nil,
			"gate denied (plan step 3 (conftest) failed) needs 2 approvals from team:sre (comments `strata gate approve denied`): 1 of 2"},
		{"pull request approvals do not approve a token's gate", conftest, nil, []string{"alice", "carol"}, nil,
			"gate denied (plan step 3 (conftest) failed) needs 2 approvals from team:sre (comments `strata gate approve denied`): 0 of 2"},
		{"no token: the pull request's approvals", report.Gate{Step: "plan step 2 (run)", Name: "cost", AllOf: []string{"user:dave", "team:security"}},
			nil, []string{"dave", "sam"}, nil, ""},
		{"all_of needs each", report.Gate{Step: "plan step 2 (run)", Name: "cost", AllOf: []string{"user:dave", "team:security"}},
			nil, []string{"dave"}, nil, `gate "cost" (plan step 2 (run) failed) needs an approval from each of user:dave, team:security (approvals of the pull request): no approval from team:security`},
		{"anyone, once", report.Gate{Step: "plan step 2 (run)"}, nil, []string{"erin"}, nil, ""},
		// Someone with write access may edit another's comment: an
		// edited one approves nothing.
		{"an edited comment does not count", conftest, []Comment{approve("alice"), {Author: "carol", Body: "strata gate approve denied", Edited: true}}, nil, nil,
			"gate denied (plan step 3 (conftest) failed) needs 2 approvals from team:sre (comments `strata gate approve denied`): 1 of 2"},
		{"the comments cannot be read", conftest, nil, nil, errors.New("502"), "the gates could not be checked: reading the comments of PR #5: 502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pr := open()
			pr.Approvers = tt.approved
			src := &gateSource{directory: sre(), pr: pr, comments: tt.comments, commentsErr: tt.err}
			if got := Gates(context.Background(), src, []report.Gate{tt.gate}); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
