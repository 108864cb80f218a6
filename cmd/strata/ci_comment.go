package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
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
			fmt.Fprint(c.App.Writer, report.Comment(rep, link))
			return nil
		}),
	}
}
