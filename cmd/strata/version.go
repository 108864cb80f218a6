package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func strataVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// versionLine is what `strata version` and `strata --version` print.
func versionLine() string {
	return fmt.Sprintf("strata %s (%s, %s/%s)", strataVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func init() {
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, versionLine()) }
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print strata's version",
		Action: func(c *cli.Context) error {
			fmt.Fprintln(c.App.Writer, versionLine())
			return nil
		},
	}
}
