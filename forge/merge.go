package forge

import (
	"context"
	"fmt"

	"github.com/google/go-github/v92/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// Merge merges the event's pull request (docs/controls.md#automerge) with
// the first method the repository allows of merge, squash and rebase, at
// the head commit the event named (else the current one): a head that
// moved since is not merged. With deleteBranch, the branch is deleted once
// merged, when it is the repository's own (not a fork's). merged is
// false, with no error, when the event names no pull request or it is
// merged already; how says what was done.
func (a *Actions) Merge(ctx context.Context, deleteBranch bool) (merged bool, how string, err error) {
	if a.pr == 0 {
		return false, "", nil
	}
	pr, _, err := a.client.PullRequests.Get(ctx, a.owner, a.repo, a.pr)
	if err != nil {
		return false, "", fmt.Errorf("PR #%d: %w", a.pr, err)
	}
	if pr.GetMerged() || pr.GetState() != "open" {
		return false, fmt.Sprintf("PR #%d is %s", a.pr, map[bool]string{true: "merged already", false: pr.GetState()}[pr.GetMerged()]), nil
	}
	repo, _, err := a.client.Repositories.Get(ctx, a.owner, a.repo)
	if err != nil {
		return false, "", fmt.Errorf("the repository's merge methods: %w", err)
	}
	method := ""
	switch {
	case repo.GetAllowMergeCommit():
		method = "merge"
	case repo.GetAllowSquashMerge():
		method = "squash"
	case repo.GetAllowRebaseMerge():
		method = "rebase"
	default:
		return false, "", fmt.Errorf("the repository allows no merge method")
	}
	sha := a.headSHA
	if sha == "" {
		sha = pr.GetHead().GetSHA()
	}
	if _, _, err := a.client.PullRequests.Merge(ctx, a.owner, a.repo, a.pr, "", &github.PullRequestOptions{MergeMethod: method, SHA: sha}); err != nil {
		return false, "", fmt.Errorf("merging PR #%d at %s: %w", a.pr, short(sha), err)
	}
	how = fmt.Sprintf("merged PR #%d (%s) at %s", a.pr, method, short(sha))
	head := pr.GetHead()
	if deleteBranch && head.GetRepo().GetFullName() == pr.GetBase().GetRepo().GetFullName() {
		if _, err := a.client.Git.DeleteRef(ctx, a.owner, a.repo, "heads/"+head.GetRef()); err != nil {
			return true, how, fmt.Errorf("deleting branch %s: %w", head.GetRef(), err)
		}
		how += ", deleted branch " + head.GetRef()
	}
	return true, how, nil
}

// Merge merges the pipeline's merge request (docs/controls.md#automerge)
// at its head commit, removing the source branch with deleteBranch.
func (c *GitLabCI) Merge(ctx context.Context, deleteBranch bool) (merged bool, how string, err error) {
	if c.mr == 0 {
		return false, "", nil
	}
	mr, _, err := c.client.MergeRequests.GetMergeRequest(c.project, int64(c.mr), nil, gitlab.WithContext(ctx))
	if err != nil {
		return false, "", fmt.Errorf("MR !%d: %w", c.mr, err)
	}
	if mr.State != "opened" {
		return false, fmt.Sprintf("MR !%d is %s", c.mr, mr.State), nil
	}
	opt := &gitlab.AcceptMergeRequestOptions{SHA: &mr.SHA, ShouldRemoveSourceBranch: &deleteBranch}
	if _, _, err := c.client.MergeRequests.AcceptMergeRequest(c.project, int64(c.mr), opt, gitlab.WithContext(ctx)); err != nil {
		return false, "", fmt.Errorf("merging MR !%d at %s: %w", c.mr, short(mr.SHA), err)
	}
	how = fmt.Sprintf("merged MR !%d at %s", c.mr, short(mr.SHA))
	if deleteBranch {
		how += ", removing branch " + mr.SourceBranch
	}
	return true, how, nil
}

// short is a commit's short form.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
