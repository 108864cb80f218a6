package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/stacks"
)

// selectionFlags are §7.3's flags, shared by every command that works on
// units.
func selectionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "all", Usage: "every unit at or below the current dir", Category: "Selection"},
		&cli.StringSliceFlag{Name: "stack", Usage: "units of stack `NAME` (repeatable; a nested stack selects its leaves)", Category: "Selection"},
		&cli.StringFlag{Name: "query", Usage: "units matching the tag `QUERY`", Category: "Selection"},
		&cli.StringSliceFlag{Name: "dir", Usage: "units in `DIR` and below (repeatable)", Category: "Selection"},
		&cli.StringFlag{Name: "workspace", Usage: "units of workspace `W`", Category: "Selection"},
		&cli.BoolFlag{Name: "no-propagate", Usage: "do not add units through depends_on, modified_by and all-for-one", Category: "Selection"},
	}
}

// selectRun computes the run of a command from its flags; query, when not
// empty, is one more tag query to intersect (ls QUERY).
func selectRun(c *cli.Context, s *session, query string) (*stacks.Run, error) {
	q := c.String("query")
	switch {
	case q == "":
		q = query
	case query != "":
		q = "(" + q + ") and (" + query + ")"
	}
	run, err := s.project.Select(stacks.Selection{
		Cwd:          s.cwd,
		All:          c.Bool("all"),
		Stacks:       c.StringSlice("stack"),
		Query:        q,
		Dirs:         c.StringSlice("dir"),
		Workspace:    c.String("workspace"),
		EnvWorkspace: os.Getenv("TF_WORKSPACE"),
		NoPropagate:  c.Bool("no-propagate"),
	})
	if err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	return run, nil
}
