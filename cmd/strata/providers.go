package main

import (
	"github.com/urfave/cli/v2"

	cmdpolicy "github.com/strata-iac/strata/command"
)

// providersCommand is `strata providers lock`: the engine's lock command
// in every unit of the run, with the platforms the repository declares
// (docs/behaviour.md#lock-files). The engine's other providers
// subcommands (`strata providers schema -json`) pass through to it in a
// unit's dir.
func providersCommand() *cli.Command {
	lock := runCommand(cmdpolicy.ProvidersLock, "add the declared platforms' provider hashes to every unit's lock file (-platform, -fs-mirror, -net-mirror and provider addresses go to the engine)")
	lock.Name = "lock"
	lock.ArgsUsage = "[PROVIDER...] [-platform OS_ARCH...]"
	return &cli.Command{
		Name:        "providers",
		Usage:       "provider lock files of every unit",
		Subcommands: []*cli.Command{lock},
	}
}
