package forge

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v92/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/strata-iac/strata/internal/environ"
)

// CommentOf is the comment a CI job runs for (docs/controls.md#comment-commands):
// on GitHub Actions the comment of an issue_comment event on a pull
// request, on GitLab CI the STRATA_COMMENT variable of a merge request
// pipeline. found is false when the job runs for none.
func CommentOf(env []string) (body string, found bool, err error) {
	get := environ.Getenv(env)
	switch {
	case get("GITHUB_ACTIONS") == "true":
		if get("GITHUB_EVENT_NAME") != "issue_comment" || get("GITHUB_EVENT_PATH") == "" {
			return "", false, nil
		}
		ev, err := readEventFile(get("GITHUB_EVENT_PATH"))
		if err != nil {
			return "", false, err
		}
		if !ev.Issue.IsPullRequest() || ev.Comment == nil {
			return "", false, nil
		}
		return ev.Comment.GetBody(), true, nil
	case get("GITLAB_CI") == "true":
		body := get("STRATA_COMMENT")
		return body, body != "" && get("CI_MERGE_REQUEST_IID") != "", nil
	}
	return "", false, nil
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

// Answer puts answer in strata's one note on the pipeline's merge
// request, above what it held; posted is false in a pipeline for none.
func (c *GitLabCI) Answer(ctx context.Context, marker, answer string) (where string, posted bool, err error) {
	if c.mr == 0 {
		return "", false, nil
	}
	earlier, err := c.markedNotes(ctx, c.mr, marker)
	if err != nil {
		return "", false, err
	}
	if len(earlier) == 0 {
		body := WithAnswer("", marker, answer)
		nt, _, err := c.client.Notes.CreateMergeRequestNote(c.project, int64(c.mr), &gitlab.CreateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx))
		if err != nil {
			return "", false, fmt.Errorf("commenting on MR !%d: %w", c.mr, err)
		}
		return fmt.Sprintf("MR !%d note %d", c.mr, nt.ID), true, nil
	}
	last := earlier[len(earlier)-1]
	body := WithAnswer(last.Body, marker, answer)
	if _, _, err := c.client.Notes.UpdateMergeRequestNote(c.project, int64(c.mr), last.ID, &gitlab.UpdateMergeRequestNoteOptions{Body: &body}, gitlab.WithContext(ctx)); err != nil {
		return "", false, fmt.Errorf("updating the note on MR !%d: %w", c.mr, err)
	}
	return fmt.Sprintf("MR !%d note %d", c.mr, last.ID), true, nil
}
