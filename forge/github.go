// Package forge answers what strata's controls ask of the forge that
// hosts the repository (docs/controls.md#what-strata-asks-the-forge): who
// is in which team, who holds which repository role, and what a pull
// request holds (approvals, mergeability, status checks). It goes through
// the forges' maintained clients and returns package controls' types.
package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v92/github"
	"github.com/shurcooL/githubv4"
	"golang.org/x/oauth2"

	"github.com/strata-iac/strata/controls"
)

// GitHub is a repository on GitHub or GitHub Enterprise Server.
type GitHub struct {
	client      *github.Client
	graphql     *githubv4.Client
	owner, repo string
	// run is this CI run's ID: its own check runs are not counted.
	run string
	// self is who the token posts as, asked once.
	self identity
}

// identity is who a token posts comments as, learned once: "" when it
// could not be learned (docs/controls.md#what-strata-trusts-of-the-forge).
type identity struct {
	once  sync.Once
	login string
}

// of is the identity, learned by learn the first time it is asked for.
func (id *identity) of(learn func() string) string {
	id.once.Do(func() { id.login = learn() })
	return id.login
}

// actionsBot is the author of what a GitHub Actions job's own token
// posts; GET /user answers that token 403.
const actionsBot = "github-actions[bot]"

// Self is who the token posts comments as: the user GET /user names, or
// github-actions[bot] for a GitHub Actions job's token, which that
// endpoint answers 403. "" when it cannot be learned (another error, a
// stall): then strata edits no comment, and posts a new one.
func (g *GitHub) Self(ctx context.Context) string {
	return g.self.of(func() string {
		u, resp, err := g.client.Users.Get(ctx, "")
		switch {
		case err == nil:
			return u.GetLogin()
		case resp != nil && resp.StatusCode == http.StatusForbidden:
			return actionsBot
		}
		return ""
	})
}

// GitHubOptions locate a repository and authenticate to its API.
type GitHubOptions struct {
	// API is the REST API's URL (GITHUB_API_URL): https://api.github.com,
	// or https://HOST/api/v3 on Enterprise Server.
	API   string
	Token string
	// Repository is OWNER/NAME (GITHUB_REPOSITORY).
	Repository string
	// Run is the CI run's ID (GITHUB_RUN_ID), whose own checks are left
	// out of the status checks.
	Run string
	// GraphQL is the GraphQL API's URL (GITHUB_GRAPHQL_URL); derived from
	// API when empty.
	GraphQL string
}

// NewGitHub returns a client of the repository's API, with a timeout on
// each request: a forge that does not answer refuses, never allows.
func NewGitHub(o GitHubOptions) (*GitHub, error) {
	owner, repo, ok := strings.Cut(o.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("repository %q: expected OWNER/NAME", o.Repository)
	}
	if o.Token == "" {
		return nil, errors.New("no GitHub token: the controls need one to read teams, roles and reviews (GITHUB_TOKEN)")
	}
	api := strings.TrimSuffix(o.API, "/") + "/"
	c, err := github.NewClient(github.WithAuthToken(o.Token), github.WithURLs(&api, &api), github.WithTimeout(30*time.Second))
	if err != nil {
		return nil, fmt.Errorf("GitHub API %s: %w", o.API, err)
	}
	gql := o.GraphQL
	if gql == "" {
		gql = graphQLOf(o.API)
	}
	hc := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: o.Token}))
	hc.Timeout = 30 * time.Second
	return &GitHub{client: c, graphql: githubv4.NewEnterpriseClient(gql, hc), owner: owner, repo: repo, run: o.Run}, nil
}

// graphQLOf is the GraphQL API beside a REST API: api.github.com/graphql,
// or HOST/api/graphql beside an Enterprise Server's HOST/api/v3.
func graphQLOf(api string) string {
	api = strings.TrimSuffix(api, "/")
	if base, ok := strings.CutSuffix(api, "/api/v3"); ok {
		return base + "/api/graphql"
	}
	return api + "/graphql"
}

// reviewDecision is the pull request's review verdict, as GitHub's
// branch rules see it (code owners included): "approved",
// "changes_requested", "review_required", or "" when no review is
// required. Only GraphQL gives it.
func (g *GitHub) reviewDecision(ctx context.Context, n int) (string, error) {
	var q struct {
		Repository struct {
			PullRequest struct {
				ReviewDecision *githubv4.PullRequestReviewDecision
			} `graphql:"pullRequest(number: $number)"`
		} `graphql:"repository(owner: $owner, name: $name)"`
	}
	vars := map[string]any{"owner": githubv4.String(g.owner), "name": githubv4.String(g.repo), "number": githubv4.Int(n)}
	if err := g.graphql.Query(ctx, &q, vars); err != nil {
		return "", fmt.Errorf("the review decision of PR #%d: %w", n, err)
	}
	if d := q.Repository.PullRequest.ReviewDecision; d != nil {
		return strings.ToLower(string(*d)), nil
	}
	return "", nil
}

// notFound says the API answered 404.
func notFound(resp *github.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusNotFound
}

// InTeam says whether user is an active member of the team of the
// repository's owner; a pending invitation is not membership.
func (g *GitHub) InTeam(ctx context.Context, user, team string) (bool, error) {
	m, resp, err := g.client.Teams.GetTeamMembershipBySlug(ctx, g.owner, team, user)
	if notFound(resp) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.GetState() == "active", nil
}

// Role is user's role in the repository: admin, maintain, write, triage,
// read, or "" for none.
func (g *GitHub) Role(ctx context.Context, user string) (string, error) {
	p, resp, err := g.client.Repositories.GetPermissionLevel(ctx, g.owner, g.repo, user)
	if notFound(resp) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	// A custom role has its own name; its base permission (admin, write
	// or read) is what role: matchers compare.
	role := p.GetRoleName()
	if !controls.KnownRole(role) {
		role = p.GetPermission()
	}
	if !controls.KnownRole(role) {
		role = ""
	}
	return role, nil
}

// PullRequest reads pull request n: its state, the approvals of its head
// commit, who is still asked for a review, and its head commit's checks
// but those of this CI run.
func (g *GitHub) PullRequest(ctx context.Context, n int) (*controls.PullRequest, error) {
	pr, _, err := g.client.PullRequests.Get(ctx, g.owner, g.repo, n)
	if err != nil {
		return nil, err
	}
	out := &controls.PullRequest{
		Name: fmt.Sprintf("PR #%d", n), Number: n, Head: pr.GetHead().GetSHA(), Base: pr.GetBase().GetRef(),
		Draft: pr.GetDraft(), Merged: pr.GetMerged(), Mergeable: pr.Mergeable,
		Closed: pr.GetState() == "closed" && !pr.GetMerged(),
	}
	for _, u := range pr.RequestedReviewers {
		out.PendingReviewers = append(out.PendingReviewers, u.GetLogin())
	}
	for _, t := range pr.RequestedTeams {
		out.PendingReviewers = append(out.PendingReviewers, "team:"+t.GetSlug())
	}
	if out.Approvers, out.ChangesRequested, err = g.verdicts(ctx, n, out.Head); err != nil {
		return nil, err
	}
	if out.ReviewDecision, err = g.reviewDecision(ctx, n); err != nil {
		return nil, err
	}
	if out.Checks, err = g.checks(ctx, out.Head); err != nil {
		return nil, err
	}
	return out, nil
}

// verdicts are the reviewers whose latest verdict approves the head
// commit (a later "changes requested" or "dismissed" takes an approval
// back, and an approval of an earlier commit does not count), and those
// whose latest verdict requests changes.
func (g *GitHub) verdicts(ctx context.Context, n int, head string) (approvers, changes []string, err error) {
	latest := map[string]*github.PullRequestReview{}
	var order []string
	for r, err := range g.client.PullRequests.ListReviewsIter(ctx, g.owner, g.repo, n, &github.ListOptions{PerPage: 100}) {
		if err != nil {
			return nil, nil, err
		}
		login := r.GetUser().GetLogin()
		switch r.GetState() {
		case "APPROVED", "CHANGES_REQUESTED", "DISMISSED":
		default:
			// A comment is no verdict.
			continue
		}
		if _, seen := latest[login]; !seen {
			order = append(order, login)
		}
		latest[login] = r
	}
	for _, login := range order {
		switch r := latest[login]; {
		case r.GetState() == "APPROVED" && r.GetCommitID() == head:
			approvers = append(approvers, login)
		case r.GetState() == "CHANGES_REQUESTED":
			changes = append(changes, login)
		}
	}
	return approvers, changes, nil
}

// checks are the commit's statuses and check runs, those of this CI run
// left out: the job asking is one of them, still running.
func (g *GitHub) checks(ctx context.Context, sha string) ([]controls.StatusCheck, error) {
	var out []controls.StatusCheck
	for page := 1; page != 0; {
		cs, resp, err := g.client.Repositories.GetCombinedStatus(ctx, g.owner, g.repo, sha, &github.ListOptions{PerPage: 100, Page: page})
		if err != nil {
			return nil, err
		}
		for _, s := range cs.Statuses {
			out = append(out, controls.StatusCheck{Name: s.GetContext(), State: s.GetState()})
		}
		page = resp.NextPage
	}
	for r, err := range g.client.Checks.ListCheckRunsForRefIter(ctx, g.owner, g.repo, sha, &github.ListCheckRunsOptions{ListOptions: github.ListOptions{PerPage: 100}}) {
		if err != nil {
			return nil, err
		}
		if g.run != "" && strings.Contains(r.GetDetailsURL(), "/actions/runs/"+g.run+"/") {
			continue
		}
		state := r.GetStatus()
		if state == "completed" {
			state = r.GetConclusion()
		}
		out = append(out, controls.StatusCheck{Name: r.GetName(), State: state})
	}
	return out, nil
}

// MergedPullRequest is the pull request whose merge made commit sha, or
// 0 when none did (a push straight to the branch): a merged pull request
// that only contains the commit does not count.
func (g *GitHub) MergedPullRequest(ctx context.Context, sha string) (int, error) {
	prs, _, err := g.client.PullRequests.ListPullRequestsWithCommit(ctx, g.owner, g.repo, sha, &github.ListOptions{PerPage: 100})
	if err != nil {
		return 0, err
	}
	for _, pr := range prs {
		if pr.GetMergeCommitSHA() == sha && pr.MergedAt != nil {
			return pr.GetNumber(), nil
		}
	}
	return 0, nil
}

// SetStatus sets the commit status name of commit sha: pending, success
// or failure, with a description and a link.
func (g *GitHub) SetStatus(ctx context.Context, sha, name, state, description, url string) error {
	st := github.RepoStatus{State: &state, Context: &name, Description: &description}
	if url != "" {
		st.TargetURL = &url
	}
	if _, _, err := g.client.Repositories.CreateStatus(ctx, g.owner, g.repo, sha, st); err != nil {
		return fmt.Errorf("setting the status %q of %s: %w", name, sha, err)
	}
	return nil
}
