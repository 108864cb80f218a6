package forge

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v92/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// DriftLabel labels the issues strata keeps for drifted units
// (docs/ci.md#drift-schedules).
const DriftLabel = "strata-drift"

// DriftFinding is what a drift check found of one unit: it drifted, with
// the issue's title and body, or it no longer does.
type DriftFinding struct {
	Unit        string // its ID
	Drifted     bool
	Title, Body string
}

// driftMarker opens the body of a unit's drift issue: how strata finds it
// again.
func driftMarker(unit string) string { return "<!-- strata:drift " + unit + " -->" }

// issue is an open issue of the tracker.
type issue struct {
	number int
	body   string
}

// tracker is a forge's issues, as drift issues need them.
type tracker interface {
	openIssues(ctx context.Context) ([]issue, error)
	create(ctx context.Context, title, body string) (int, error)
	update(ctx context.Context, n int, body string) error
	close(ctx context.Context, n int) error
}

// syncDriftIssues keeps one open issue per drifted unit: it opens one,
// or updates the one open; a unit that no longer drifts has its issue
// closed. It returns what it did, one line each.
func syncDriftIssues(ctx context.Context, t tracker, findings []DriftFinding) ([]string, error) {
	open, err := t.openIssues(ctx)
	if err != nil {
		return nil, fmt.Errorf("the open drift issues: %w", err)
	}
	byUnit := map[string]int{}
	for _, is := range open {
		first, _, _ := strings.Cut(is.body, "\n")
		if unit, ok := strings.CutPrefix(strings.TrimSpace(first), "<!-- strata:drift "); ok {
			byUnit[strings.TrimSuffix(unit, " -->")] = is.number
		}
	}
	var did []string
	for _, f := range findings {
		n, has := byUnit[f.Unit]
		body := driftMarker(f.Unit) + "\n" + f.Body
		switch {
		case f.Drifted && has:
			err = t.update(ctx, n, body)
			did = append(did, fmt.Sprintf("updated issue #%d: %s", n, f.Unit))
		case f.Drifted:
			n, err = t.create(ctx, f.Title, body)
			did = append(did, fmt.Sprintf("opened issue #%d: %s", n, f.Unit))
		case has:
			err = t.close(ctx, n)
			did = append(did, fmt.Sprintf("closed issue #%d: %s no longer drifts", n, f.Unit))
		}
		if err != nil {
			return did[:len(did)-1], fmt.Errorf("the drift issue of %s: %w", f.Unit, err)
		}
	}
	return did, nil
}

// DriftIssues keeps the repository's drift issues (docs/ci.md#drift-schedules).
func (g *GitHub) DriftIssues(ctx context.Context, findings []DriftFinding) ([]string, error) {
	return syncDriftIssues(ctx, githubIssues{g}, findings)
}

type githubIssues struct{ g *GitHub }

func (t githubIssues) openIssues(ctx context.Context) ([]issue, error) {
	var out []issue
	opt := &github.IssueListByRepoOptions{State: "open", Labels: []string{DriftLabel}}
	opt.ListOptions.PerPage = 100
	for {
		list, resp, err := t.g.client.Issues.ListByRepo(ctx, t.g.owner, t.g.repo, opt)
		if err != nil {
			return nil, err
		}
		for _, is := range list {
			if !is.IsPullRequest() {
				out = append(out, issue{number: is.GetNumber(), body: is.GetBody()})
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.ListOptions.Page = resp.NextPage
	}
}

func (t githubIssues) create(ctx context.Context, title, body string) (int, error) {
	is, _, err := t.g.client.Issues.Create(ctx, t.g.owner, t.g.repo, github.CreateIssueRequest{Title: title, Body: &body, Labels: []string{DriftLabel}})
	return is.GetNumber(), err
}

func (t githubIssues) update(ctx context.Context, n int, body string) error {
	_, _, err := t.g.client.Issues.Update(ctx, t.g.owner, t.g.repo, n, github.UpdateIssueRequest{Body: &body})
	return err
}

func (t githubIssues) close(ctx context.Context, n int) error {
	state, reason := "closed", "completed"
	_, _, err := t.g.client.Issues.Update(ctx, t.g.owner, t.g.repo, n, github.UpdateIssueRequest{State: &state, StateReason: &reason})
	return err
}

// DriftIssues keeps the project's drift issues (docs/ci.md#drift-schedules).
func (g *GitLab) DriftIssues(ctx context.Context, findings []DriftFinding) ([]string, error) {
	return syncDriftIssues(ctx, gitlabIssues{g}, findings)
}

type gitlabIssues struct{ g *GitLab }

func (t gitlabIssues) openIssues(ctx context.Context) ([]issue, error) {
	var out []issue
	labels := gitlab.LabelOptions{DriftLabel}
	opt := &gitlab.ListProjectIssuesOptions{State: gitlab.Ptr("opened"), Labels: &labels, ListOptions: gitlab.ListOptions{PerPage: 100}}
	for {
		list, resp, err := t.g.client.Issues.ListProjectIssues(t.g.project, opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		for _, is := range list {
			out = append(out, issue{number: int(is.IID), body: is.Description})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

func (t gitlabIssues) create(ctx context.Context, title, body string) (int, error) {
	labels := gitlab.LabelOptions{DriftLabel}
	is, _, err := t.g.client.Issues.CreateIssue(t.g.project, &gitlab.CreateIssueOptions{Title: &title, Description: &body, Labels: &labels}, gitlab.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	return int(is.IID), nil
}

func (t gitlabIssues) update(ctx context.Context, n int, body string) error {
	_, _, err := t.g.client.Issues.UpdateIssue(t.g.project, int64(n), &gitlab.UpdateIssueOptions{Description: &body}, gitlab.WithContext(ctx))
	return err
}

func (t gitlabIssues) close(ctx context.Context, n int) error {
	_, _, err := t.g.client.Issues.UpdateIssue(t.g.project, int64(n), &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}, gitlab.WithContext(ctx))
	return err
}
