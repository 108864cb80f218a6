package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/google/go-github/v92/github"

	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/stacks/config"
)

// maxEvent is the most of GITHUB_EVENT_PATH read: GitHub caps a webhook
// payload at 25 MB.
const maxEvent = 25 << 20

// Actions is what a GitHub Actions job knows of the command it runs, for
// the controls (controls.Source): who asks, for which pull request, and
// the default branch's config (docs/controls.md#in-a-run).
type Actions struct {
	*GitHub
	actor string
	// pr is the pull request the event names; 0 when it names none.
	pr       int
	ref, sha string
	// headSHA is the pull request's head commit when the event says: an
	// automerge merges that commit or nothing.
	headSHA string
	// defaultBranch is the repository's, as the event says; "" when it
	// does not, and the API is asked.
	defaultBranch string
	// configPaths are where the project's config may sit in the
	// repository, in the order strata looks.
	configPaths []string
}

// event is what the controls read of a GitHub Actions event payload,
// through go-github's types: the repository (every event has it), the
// pull request (pull_request, pull_request_target, pull_request_review),
// and the issue and comment of issue_comment.
type event struct {
	// Action is what happened to an issue_comment's comment: created,
	// edited or deleted.
	Action      string               `json:"action"`
	Repository  *github.Repository   `json:"repository"`
	PullRequest *github.PullRequest  `json:"pull_request"`
	Issue       *github.Issue        `json:"issue"`
	Comment     *github.IssueComment `json:"comment"`
}

// NewActions reads a GitHub Actions job's environment through
// ciplatform (its GitHub job, whatever GITHUB_ACTIONS says): the API's
// URLs, the token, the repository, the run, the actor, the event and its
// payload, the ref and the commit. The actor is the comment's author on
// issue_comment, else GITHUB_ACTOR. configPaths are where the project's
// config may sit in the repository.
func NewActions(env []string, configPaths []string) (*Actions, error) {
	j := ciplatform.Read(env).GitHub
	api := j.API
	if api == "" {
		api = "https://api.github.com"
	}
	gh, err := NewGitHub(GitHubOptions{API: api, Token: j.Token.Value(), Repository: j.Repository, Run: j.RunID, GraphQL: j.GraphQL})
	if err != nil {
		return nil, err
	}
	a := &Actions{GitHub: gh, actor: j.Actor, ref: j.Ref, sha: j.Commit, configPaths: configPaths}
	if j.PullRequest != "" {
		a.pr, _ = strconv.Atoi(j.PullRequest)
	}
	if path := j.EventPath; path != "" {
		if err := a.readEvent(j.Event, path); err != nil {
			return nil, err
		}
	}
	if a.actor == "" {
		return nil, errors.New("GITHUB_ACTOR is not set: the controls need to know who runs the command")
	}
	return a, nil
}

// readEventFile reads an event payload, within GitHub's size.
func readEventFile(path string) (*event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the event payload (GITHUB_EVENT_PATH): %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEvent+1))
	if err != nil {
		return nil, fmt.Errorf("the event payload %s: %w", path, err)
	}
	if len(data) > maxEvent {
		return nil, fmt.Errorf("the event payload %s is over %d MB", path, maxEvent>>20)
	}
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the event payload %s: %w", path, err)
	}
	return &ev, nil
}

// DraftPullRequest says a GitHub Actions job runs for a draft pull
// request (the event's pull_request.draft); false when it runs for none,
// or its payload cannot be read.
func DraftPullRequest(env []string) bool {
	path := ciplatform.Read(env).GitHub.EventPath
	if path == "" {
		return false
	}
	ev, err := readEventFile(path)
	return err == nil && ev.PullRequest.GetDraft()
}

// readEvent reads the event payload: the default branch, the pull request
// it names and, for a comment, its author.
func (a *Actions) readEvent(name, path string) error {
	ev, err := readEventFile(path)
	if err != nil {
		return err
	}
	a.defaultBranch = ev.Repository.GetDefaultBranch()
	switch {
	case ev.PullRequest != nil:
		a.pr = ev.PullRequest.GetNumber()
		a.headSHA = ev.PullRequest.GetHead().GetSHA()
	case name == "issue_comment" && ev.Issue.IsPullRequest():
		a.pr = ev.Issue.GetNumber()
		// An edited comment keeps its author: who edited or deleted it
		// is the event's sender, GITHUB_ACTOR.
		if ev.Action == "created" {
			a.actor = ev.Comment.GetUser().GetLogin()
		}
	}
	return nil
}

// Actor is who runs the command.
func (a *Actions) Actor() string { return a.actor }

// PullRequest is the pull request the event names or, for a push, the
// one whose merge made the commit; nil when there is none.
func (a *Actions) PullRequest(ctx context.Context) (*controls.PullRequest, error) {
	return pullRequestOf(ctx, a.GitHub, a.pr, a.sha)
}

// DefaultBranchConfig is the default branch's config, when the command
// does not run on that branch: a command for a pull request, or on
// another branch (docs/controls.md#the-default-branchs-controls).
func (a *Actions) DefaultBranchConfig(ctx context.Context) (*config.Config, string, error) {
	branch := a.defaultBranch
	if branch == "" {
		r, _, err := a.client.Repositories.Get(ctx, a.owner, a.repo)
		if err != nil {
			return nil, "", fmt.Errorf("the repository's default branch: %w", err)
		}
		branch = r.GetDefaultBranch()
	}
	if a.pr == 0 && a.ref == "refs/heads/"+branch {
		return nil, "", nil
	}
	return branchConfig(ctx, a.GitHub, branch, a.configPaths)
}

// File reads one file of the repository at ref; found is false when
// the API answers 404. Any other answer that is not a file, with its
// content in base64, is an error: a control never reads an answer it did
// not ask for as an empty config (docs/controls.md#what-strata-trusts-of-the-forge).
func (g *GitHub) File(ctx context.Context, path, ref string) (data []byte, found bool, err error) {
	fc, dir, resp, err := g.client.Repositories.GetContents(ctx, g.owner, g.repo, path, &github.RepositoryContentGetOptions{Ref: ref})
	if notFound(resp) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", path, ref, err)
	}
	switch {
	case fc == nil && dir != nil:
		return nil, false, fmt.Errorf("%s at %s is a directory", path, ref)
	case fc == nil:
		return nil, false, fmt.Errorf("%s at %s: the contents API answered no file", path, ref)
	case fc.GetType() != "file":
		return nil, false, fmt.Errorf("%s at %s: the contents API answered type %q, not a file", path, ref, fc.GetType())
	case fc.Content == nil:
		return nil, false, fmt.Errorf("%s at %s: the contents API answered a file without content", path, ref)
	case fc.GetEncoding() != "base64":
		// GitHub answers "none" for a file over 1 MB.
		return nil, false, fmt.Errorf("%s at %s: encoding %q, expected base64", path, ref, fc.GetEncoding())
	}
	text, err := fc.GetContent()
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", path, ref, err)
	}
	if fc.Size != nil && fc.GetSize() != len(text) {
		return nil, false, fmt.Errorf("%s at %s: %d bytes of content, the answer says %d", path, ref, len(text), fc.GetSize())
	}
	return []byte(text), true, nil
}

// visible says the API shows the token the repository: an error when it
// does not, a 404 among them.
func (g *GitHub) visible(ctx context.Context) error {
	if _, _, err := g.client.Repositories.Get(ctx, g.owner, g.repo); err != nil {
		return fmt.Errorf("repository %s/%s: %w", g.owner, g.repo, err)
	}
	return nil
}

// SetApplyStatus sets the apply status of the pull request the event
// names on its head commit; set is false when the event names none
// (docs/controls.md#the-apply-status).
func (a *Actions) SetApplyStatus(ctx context.Context, state, description, url string) (set bool, err error) {
	if a.pr == 0 {
		return false, nil
	}
	pr, _, err := a.client.PullRequests.Get(ctx, a.owner, a.repo, a.pr)
	if err != nil {
		return false, fmt.Errorf("PR #%d: %w", a.pr, err)
	}
	return true, a.SetStatus(ctx, pr.GetHead().GetSHA(), controls.ApplyStatusName, state, description, url)
}

// ChangedFiles are the files the event's pull request changes, a
// rename's old path too; nil when the event names none.
func (a *Actions) ChangedFiles(ctx context.Context) ([]string, error) {
	if a.pr == 0 {
		return nil, nil
	}
	out := []string{}
	opt := &github.ListOptions{PerPage: 100}
	for {
		files, resp, err := a.client.PullRequests.ListFiles(ctx, a.owner, a.repo, a.pr, opt)
		if err != nil {
			return nil, fmt.Errorf("the files of PR #%d: %w", a.pr, err)
		}
		for _, f := range files {
			out = append(out, f.GetFilename())
			if p := f.GetPreviousFilename(); p != "" {
				out = append(out, p)
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// ConfigPaths are where the project's config may sit in the repository.
func (a *Actions) ConfigPaths() []string { return a.configPaths }
