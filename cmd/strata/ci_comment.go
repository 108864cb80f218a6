package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/forge"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// ciCommentCommand is `strata ci comment`: the pull request comment of a
// run, printed for the CI to post.
func ciCommentCommand() *cli.Command {
	return &cli.Command{
		Name:   "comment",
		Before: needFlags("run"),
		Usage:  "print a run's pull request comment: the verdict and a folded block per stack, within GitHub's size limit",
		Description: "The comment's first line is " + report.CommentMarker + ", so that a CI job can find\n" +
			"the comment it posted before and update it.",
		Flags: []cli.Flag{
			stateFlag(), stateTimeoutFlag(), runIDFlag(),
			&cli.StringFlag{Name: "link", Usage: "`URL` of the full summary (default: the run's link, else the CI run)"},
			&cli.BoolFlag{Name: "post", Usage: "post it on the pull request (GitHub) or merge request (GitLab) the CI runs for, updating strata's comment there"},
		},
		Action: withState(func(c *cli.Context, st *objstore.Store) error {
			rep, m, err := ci.BuildReport(c.Context, st, c.String("run"))
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			rep.CI = report.CIFromEnv(os.Environ())
			link := c.String("link")
			if link == "" {
				link = m.Link
			}
			body := report.Comment(rep, link)
			if !c.Bool("post") {
				fmt.Fprint(c.App.Writer, body)
				return nil
			}
			if err := postComment(c.Context, c, body, forge.CommentStrategy(m.CommentStrategy)); err != nil {
				return cli.Exit(err.Error(), 1)
			}
			return nil
		}),
	}
}

// commentSink keeps strata's one comment on a pull request (forge.Actions,
// forge.GitLabCI).
type commentSink interface {
	Comment(ctx context.Context, marker, body string, strategy forge.CommentStrategy) (where string, posted bool, err error)
}

// postComment keeps strata's one comment on the pull request the CI runs
// for, updated in place (docs/ci.md#the-pull-request-comment), and says
// where; outside GitHub Actions and GitLab CI it is an error.
func postComment(ctx context.Context, c *cli.Context, body string, strategy forge.CommentStrategy) error {
	sink, err := openCIForge(os.Environ(), nil)
	if sink == nil && err == nil {
		return errors.New("the comment is posted in GitHub Actions or GitLab CI, for the pull request they run for")
	}
	if err != nil {
		return fmt.Errorf("posting the comment: %w", err)
	}
	where, posted, err := sink.Comment(ctx, report.CommentMarker, body, strategy)
	switch {
	case err != nil:
		return fmt.Errorf("posting the comment: %w", err)
	case posted:
		fmt.Fprintf(c.App.ErrWriter, "strata: commented: %s\n", where)
	default:
		fmt.Fprintln(c.App.ErrWriter, "strata: no pull request to comment on")
	}
	return nil
}

// commentStrategy is what the config's notifications.policies say a new
// comment does with strata's earlier one, for a run of these units: the
// first policy whose tag query matches one of them decides (minimize when
// it names no strategy); none, or no policy, keeps strata's one comment
// edited in place (docs/ci.md#the-pull-request-comment).
func commentStrategy(p *stacks.Project, units []*stacks.Unit) forge.CommentStrategy {
	n := p.Config.Notifications
	if n == nil || n.Policies == nil {
		return forge.EditInPlace
	}
	for _, pol := range *n.Policies {
		q, err := tagquery.Parse(pol.TagQuery.Value)
		if err != nil {
			continue
		}
		for _, u := range units {
			if q.Match(u.Subject()) {
				return forge.CommentStrategy(cmp.Or(pol.CommentStrategy.Value, string(forge.Minimize)))
			}
		}
	}
	return forge.EditInPlace
}

// commentOn posts a run's comment for --comment; a comment that cannot be
// posted is a warning, and the run's exit code stands.
func commentOn(ctx context.Context, c *cli.Context, rep *report.Report, strategy forge.CommentStrategy) {
	if rep.CI == nil {
		rep.CI = report.CIFromEnv(os.Environ())
	}
	link := ""
	if rep.CI != nil {
		link = rep.CI.RunURL
	}
	if err := postComment(ctx, c, report.Comment(rep, link), strategy); err != nil {
		warnf(c, "%v", err)
	}
}
