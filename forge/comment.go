package forge

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v92/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// UpsertComment keeps strata's one comment on pull request n
// (docs/ci.md#the-pull-request-comment): the comment whose body starts
// with marker is edited to body, else one is created. It returns the
// comment's URL.
func (g *GitHub) UpsertComment(ctx context.Context, n int, marker, body string) (string, error) {
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := g.client.Issues.ListComments(ctx, g.owner, g.repo, n, opt)
		if err != nil {
			return "", fmt.Errorf("the comments of PR #%d: %w", n, err)
		}
		for _, c := range comments {
			if strings.HasPrefix(c.GetBody(), marker) {
				c, _, err := g.client.Issues.UpdateComment(ctx, g.owner, g.repo, c.GetID(), github.IssueCommentRequest{Body: body})
				if err != nil {
					return "", fmt.Errorf("updating the comment on PR #%d: %w", n, err)
				}
				return c.GetHTMLURL(), nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	c, _, err := g.client.Issues.CreateComment(ctx, g.owner, g.repo, n, github.IssueCommentRequest{Body: body})
	if err != nil {
		return "", fmt.Errorf("commenting on PR #%d: %w", n, err)
	}
	return c.GetHTMLURL(), nil
}

// UpsertComment keeps strata's one note on merge request iid, as
// GitHub's UpsertComment does. It returns the note's ID as a reference.
func (g *GitLab) UpsertComment(ctx context.Context, iid int, marker, body string) (string, error) {
	opt := &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}}
	for {
		notes, resp, err := g.client.Notes.ListMergeRequestNotes(g.project, int64(iid), opt, gitlab.WithContext(ctx))
		if err != nil {
			return "", fmt.Errorf("the notes of MR !%d: %w", iid, err)
		}
		for _, nt := range notes {
			if strings.HasPrefix(nt.Body, marker) {
				if _, _, err := g.client.Notes.UpdateMergeRequestNote(g.project, int64(iid), nt.ID, &gitlab.UpdateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx)); err != nil {
					return "", fmt.Errorf("updating the note on MR !%d: %w", iid, err)
				}
				return fmt.Sprintf("MR !%d note %d", iid, nt.ID), nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	nt, _, err := g.client.Notes.CreateMergeRequestNote(g.project, int64(iid), &gitlab.CreateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("commenting on MR !%d: %w", iid, err)
	}
	return fmt.Sprintf("MR !%d note %d", iid, nt.ID), nil
}

// Comment keeps strata's one comment on the pull request the event
// names; posted is false when it names none.
func (a *Actions) Comment(ctx context.Context, marker, body string) (where string, posted bool, err error) {
	if a.pr == 0 {
		return "", false, nil
	}
	where, err = a.UpsertComment(ctx, a.pr, marker, body)
	return where, err == nil, err
}

// Comment keeps strata's one note on the pipeline's merge request;
// posted is false in a pipeline for no merge request.
func (c *GitLabCI) Comment(ctx context.Context, marker, body string) (where string, posted bool, err error) {
	if c.mr == 0 {
		return "", false, nil
	}
	where, err = c.UpsertComment(ctx, c.mr, marker, body)
	return where, err == nil, err
}
