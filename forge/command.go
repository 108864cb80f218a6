package forge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v92/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/internal/ciplatform"
)

// ErrCommentNotNew is a job started by a comment edited or deleted: a
// comment command runs only from a newly created comment
// (docs/controls.md#comment-commands).
var ErrCommentNotNew = errors.New("a comment command runs only from a newly created comment")

// CommentOf is the comment a CI job runs for (docs/controls.md#comment-commands):
// the comment of a GitHub Actions issue_comment event on a pull request,
// newly created. found is false when the job runs for none; a comment
// edited or deleted is ErrCommentNotNew. GitLab CI starts no pipeline for
// a merge request note, so there a job never runs for one.
func CommentOf(env []string) (body string, found bool, err error) {
	ci := ciplatform.Read(env)
	if ci.Platform != ciplatform.GitHub || ci.GitHub.Event != "issue_comment" || ci.GitHub.EventPath == "" {
		return "", false, nil
	}
	ev, err := readEventFile(ci.GitHub.EventPath)
	if err != nil {
		return "", false, err
	}
	if !ev.Issue.IsPullRequest() || ev.Comment == nil {
		return "", false, nil
	}
	if ev.Action != "created" {
		return "", false, fmt.Errorf("the comment's event is %q, not \"created\": %w", ev.Action, ErrCommentNotNew)
	}
	return ev.Comment.GetBody(), true, nil
}

// The answer to a comment command sits in strata's one comment, between
// these, above whatever the comment held (docs/controls.md#comment-commands).
const (
	answerStart = "<!-- strata:answer -->"
	answerEnd   = "<!-- /strata:answer -->"
)

// WithAnswer is strata's comment old (its marker line first, or "" for
// none yet) with answer above what it held, in place of an earlier
// answer.
func WithAnswer(old, marker, answer string) string {
	rest := strings.TrimPrefix(old, marker)
	if i := strings.Index(rest, answerStart); i >= 0 {
		if j := strings.Index(rest[i:], answerEnd); j >= 0 {
			rest = rest[:i] + rest[i+j+len(answerEnd):]
		}
	}
	rest = strings.TrimLeft(rest, "\n")
	var b strings.Builder
	b.WriteString(marker + "\n" + answerStart + "\n" + strings.TrimSpace(answer) + "\n" + answerEnd + "\n")
	if rest != "" {
		b.WriteString("\n" + rest)
	}
	return b.String()
}

// Answer puts answer in strata's one comment on the pull request the
// event names, above what it held; posted is false when it names none.
func (a *Actions) Answer(ctx context.Context, marker, answer string) (where string, posted bool, err error) {
	if a.pr == 0 {
		return "", false, nil
	}
	earlier, err := a.markedComments(ctx, a.pr, marker)
	if err != nil {
		return "", false, err
	}
	if len(earlier) == 0 {
		c, _, err := a.client.Issues.CreateComment(ctx, a.owner, a.repo, a.pr, github.IssueCommentRequest{Body: WithAnswer("", marker, answer)})
		if err != nil {
			return "", false, fmt.Errorf("commenting on PR #%d: %w", a.pr, err)
		}
		return c.GetHTMLURL(), true, nil
	}
	last := earlier[len(earlier)-1]
	c, _, err := a.client.Issues.UpdateComment(ctx, a.owner, a.repo, last.GetID(), github.IssueCommentRequest{Body: WithAnswer(last.GetBody(), marker, answer)})
	if err != nil {
		return "", false, fmt.Errorf("updating the comment on PR #%d: %w", a.pr, err)
	}
	return c.GetHTMLURL(), true, nil
}

// Comments are the comments of the pull request the event names, oldest
// first; none when it names none.
func (a *Actions) Comments(ctx context.Context) ([]controls.Comment, error) {
	if a.pr == 0 {
		return nil, nil
	}
	all, err := a.comments(ctx, a.pr)
	out := make([]controls.Comment, len(all))
	for i, c := range all {
		out[i] = controls.Comment{Author: c.GetUser().GetLogin(), Body: c.GetBody(), Edited: edited(c.CreatedAt, c.UpdatedAt)}
	}
	return out, err
}

// Comments are the notes of the pipeline's merge request, oldest first
// (system notes left out); none in a pipeline for none.
func (c *GitLabCI) Comments(ctx context.Context) ([]controls.Comment, error) {
	if c.mr == 0 {
		return nil, nil
	}
	all, err := c.notes(ctx, c.mr)
	var out []controls.Comment
	for _, nt := range all {
		if !nt.System {
			out = append(out, controls.Comment{Author: nt.Author.Username, Body: nt.Body, Edited: noteEdited(nt)})
		}
	}
	return out, err
}

// edited says a GitHub comment was changed after it was posted: its
// updated_at is past its created_at. A comment without either time is
// taken as edited, so it approves nothing (docs/controls.md#gates).
func edited(created, updated *github.Timestamp) bool {
	if created == nil || updated == nil {
		return true
	}
	return updated.After(created.Time)
}

// noteEdited is edited for a GitLab note: resolving a thread changes its
// updated_at too, so the time it was resolved does not count as an edit.
func noteEdited(nt *gitlab.Note) bool {
	if nt.CreatedAt == nil || nt.UpdatedAt == nil {
		return true
	}
	if nt.ResolvedAt != nil && nt.UpdatedAt.Equal(*nt.ResolvedAt) {
		return false
	}
	return nt.UpdatedAt.After(*nt.CreatedAt)
}
