package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/runner"
)

// settingsOf reads what a command does from its flags, for a run on this
// machine and for the manifest ci start writes alike; a flag the command
// lacks reads as unset.
func settingsOf(c *cli.Context, command string, ea runner.EngineArgs) runner.Settings {
	return runner.Settings{
		Command:             command,
		Parallelism:         c.Int("parallelism"),
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
	}
}

// parallelismFlag is --parallelism (-j); each names what runs at most N
// units at once.
func parallelismFlag(who string, env ...string) cli.Flag {
	return &cli.IntFlag{
		Name: "parallelism", Aliases: []string{"j"}, EnvVars: env,
		Usage: fmt.Sprintf("%s at most `N` units at once (default: config parallel_runs, else %d)", who, runner.DefaultParallelism),
	}
}
