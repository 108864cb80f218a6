package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/runner"
)

// settingsOf reads what a command does from its flags, for a run on this
// machine and for the manifest ci start writes alike; a flag the command
// lacks reads as unset.
func settingsOf(c *cli.Context, command string, ea runner.EngineArgs) (runner.Settings, error) {
	n, err := parallelismOf(c)
	if err != nil {
		return runner.Settings{}, err
	}
	return runner.Settings{
		Command:             command,
		Parallelism:         n,
		EngineArgs:          ea,
		AutoApprove:         c.Bool("auto-approve"),
		NoAutoApply:         c.Bool("no-auto-apply"),
		RequireReviewedPlan: c.Bool("require-reviewed-plan"),
		DetailedExitCode:    c.Bool("detailed-exitcode"),
		FailFast:            c.Bool("fail-fast"),
		NoHooks:             c.Bool("no-hooks"),
		NoPropagate:         c.Bool("no-propagate"),
		StateDir:            c.Path("state-dir"),
		LockTimeout:         c.Duration("lock-timeout"),
		KillAfter:           c.Duration("kill-after"),
		ShowSensitive:       c.Bool("show-sensitive"),
		NoPluginCache:       c.Bool("no-plugin-cache"),
	}, nil
}

// parallelismOf is --parallelism as the runner takes it: unset is 0 (the
// config's, else the default), 0 given is every ready unit at once, and a
// negative count is an error (docs/behaviour.md#ordering-and-gates).
func parallelismOf(c *cli.Context) (int, error) {
	n := c.Int("parallelism")
	switch {
	case n < 0:
		return 0, fmt.Errorf("--parallelism %d: expected a count of units, at least 0 (0: every ready unit at once)", n)
	case n == 0 && c.IsSet("parallelism"):
		return runner.AllAtOnce, nil
	}
	return n, nil
}

// parallelismFlag is --parallelism (-j); each names what runs at most N
// units at once.
func parallelismFlag(who string, env ...string) cli.Flag {
	return &cli.IntFlag{
		Name: "parallelism", Aliases: []string{"j"}, EnvVars: env,
		Usage: fmt.Sprintf("%s at most `N` units at once, 0 every ready unit (default: config parallel_runs, else %d)", who, runner.DefaultParallelism),
	}
}
