package forge

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v92/github"
	"github.com/shurcooL/githubv4"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// CommentStrategy is what a new comment of strata's does with its
// earlier ones on a pull request (docs/ci.md#the-pull-request-comment).
type CommentStrategy string

// The strategies: strata's own, one comment edited in place, and
// Terrateam's notifications.policies[].comment_strategy.
const (
	EditInPlace CommentStrategy = ""
	Append      CommentStrategy = "append"
	Delete      CommentStrategy = "delete"
	Minimize    CommentStrategy = "minimize"
)

// UpsertComment posts strata's comment on pull request n as the strategy
// says, finding its earlier comments by the marker their bodies start
// with: edited in place, or a new one with the earlier kept, deleted, or
// the last of them hidden as outdated. It returns the comment's URL.
func (g *GitHub) UpsertComment(ctx context.Context, n int, marker, body string, strategy CommentStrategy) (string, error) {
	earlier, err := g.markedComments(ctx, n, marker)
	if err != nil {
		return "", err
	}
	switch {
	case strategy == EditInPlace && len(earlier) > 0:
		c, _, err := g.client.Issues.UpdateComment(ctx, g.owner, g.repo, earlier[0].GetID(), github.IssueCommentRequest{Body: body})
		if err != nil {
			return "", fmt.Errorf("updating the comment on PR #%d: %w", n, err)
		}
		return c.GetHTMLURL(), nil
	case strategy == Delete:
		for _, c := range earlier {
			if _, err := g.client.Issues.DeleteComment(ctx, g.owner, g.repo, c.GetID()); err != nil {
				return "", fmt.Errorf("deleting the earlier comment on PR #%d: %w", n, err)
			}
		}
	case strategy == Minimize && len(earlier) > 0:
		// The ones before it were hidden when it was posted.
		var m struct {
			MinimizeComment struct {
				ClientMutationID *string
			} `graphql:"minimizeComment(input: $input)"`
		}
		in := githubv4.MinimizeCommentInput{SubjectID: earlier[len(earlier)-1].GetNodeID(), Classifier: githubv4.ReportedContentClassifiersOutdated}
		if err := g.graphql.Mutate(ctx, &m, in, nil); err != nil {
			return "", fmt.Errorf("hiding the earlier comment on PR #%d: %w", n, err)
		}
	}
	c, _, err := g.client.Issues.CreateComment(ctx, g.owner, g.repo, n, github.IssueCommentRequest{Body: body})
	if err != nil {
		return "", fmt.Errorf("commenting on PR #%d: %w", n, err)
	}
	return c.GetHTMLURL(), nil
}

// markedComments are strata's own comments on pull request n, oldest
// first, over every page: those whose author is who the token posts as
// and whose bodies start with marker. Anyone else's comment is never
// strata's, whatever it starts with; when who strata is cannot be
// learned, none is.
func (g *GitHub) markedComments(ctx context.Context, n int, marker string) ([]*github.IssueComment, error) {
	all, err := g.comments(ctx, n)
	if err != nil {
		return nil, err
	}
	self := g.Self(ctx)
	return slices.DeleteFunc(all, func(c *github.IssueComment) bool {
		return self == "" || !strings.EqualFold(c.GetUser().GetLogin(), self) || !strings.HasPrefix(c.GetBody(), marker)
	}), nil
}

// comments are pull request n's comments, oldest first, over every page.
func (g *GitHub) comments(ctx context.Context, n int) ([]*github.IssueComment, error) {
	var out []*github.IssueComment
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := g.client.Issues.ListComments(ctx, g.owner, g.repo, n, opt)
		if err != nil {
			return nil, fmt.Errorf("the comments of PR #%d: %w", n, err)
		}
		out = append(out, comments...)
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// UpsertComment posts strata's note on merge request iid as GitHub's
// UpsertComment does. GitLab hides no note, so minimize deletes the
// earlier one. It returns the note as a reference.
func (g *GitLab) UpsertComment(ctx context.Context, iid int, marker, body string, strategy CommentStrategy) (string, error) {
	earlier, err := g.markedNotes(ctx, iid, marker)
	if err != nil {
		return "", err
	}
	switch {
	case strategy == EditInPlace && len(earlier) > 0:
		id := earlier[0].ID
		if _, _, err := g.client.Notes.UpdateMergeRequestNote(g.project, int64(iid), id, &gitlab.UpdateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx)); err != nil {
			return "", fmt.Errorf("updating the note on MR !%d: %w", iid, err)
		}
		return fmt.Sprintf("MR !%d note %d", iid, id), nil
	case strategy == Delete || strategy == Minimize:
		for _, nt := range earlier {
			if _, err := g.client.Notes.DeleteMergeRequestNote(g.project, int64(iid), nt.ID, gitlab.WithContext(ctx)); err != nil {
				return "", fmt.Errorf("deleting the earlier note on MR !%d: %w", iid, err)
			}
		}
	}
	nt, _, err := g.client.Notes.CreateMergeRequestNote(g.project, int64(iid), &gitlab.CreateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("commenting on MR !%d: %w", iid, err)
	}
	return fmt.Sprintf("MR !%d note %d", iid, nt.ID), nil
}

// markedNotes are strata's own notes on merge request iid, oldest
// first, over every page, as markedComments finds GitHub's.
func (g *GitLab) markedNotes(ctx context.Context, iid int, marker string) ([]*gitlab.Note, error) {
	all, err := g.notes(ctx, iid)
	if err != nil {
		return nil, err
	}
	self := g.Self(ctx)
	return slices.DeleteFunc(all, func(nt *gitlab.Note) bool {
		return self == "" || nt.System || !strings.EqualFold(nt.Author.Username, self) || !strings.HasPrefix(nt.Body, marker)
	}), nil
}

// notes are merge request iid's notes, oldest first, over every page.
func (g *GitLab) notes(ctx context.Context, iid int) ([]*gitlab.Note, error) {
	var out []*gitlab.Note
	asc, by := "asc", "created_at"
	opt := &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}, Sort: &asc, OrderBy: &by}
	for {
		notes, resp, err := g.client.Notes.ListMergeRequestNotes(g.project, int64(iid), opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("the notes of MR !%d: %w", iid, err)
		}
		out = append(out, notes...)
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// Comment posts strata's comment on the pull request the event names;
// posted is false when it names none.
func (a *Actions) Comment(ctx context.Context, marker, body string, strategy CommentStrategy) (where string, posted bool, err error) {
	if a.pr == 0 {
		return "", false, nil
	}
	where, err = a.UpsertComment(ctx, a.pr, marker, body, strategy)
	return where, err == nil, err
}

// Comment posts strata's note on the pipeline's merge request; posted is
// false in a pipeline for no merge request.
func (c *GitLabCI) Comment(ctx context.Context, marker, body string, strategy CommentStrategy) (where string, posted bool, err error) {
	if c.mr == 0 {
		return "", false, nil
	}
	where, err = c.UpsertComment(ctx, c.mr, marker, body, strategy)
	return where, err == nil, err
}
