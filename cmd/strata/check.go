package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/report"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "validate the config and the repository without running an engine",
		Description: "Lists every error and warning, each at file:line:col. Exit 1 when there is\n" +
			"an error, 0 with a one-line summary when the config is valid.",
		Action: func(c *cli.Context) error {
			s, err := openProject(c)
			if err != nil {
				if ee, ok := err.(*exitError); ok && ee.configErrors > 0 {
					fmt.Fprintf(c.App.ErrWriter, "%d error(s), %d warning(s)\n", ee.configErrors, ee.configWarnings)
				}
				return err
			}
			if err := noConfiguration(s); err != nil {
				return err
			}
			p := s.project
			readWarnings := p.ReadDiagnostics()
			printDiagnostics(c.App.ErrWriter, readWarnings)
			leaves := 0
			for _, st := range p.Stacks {
				if st.Leaf {
					leaves++
				}
			}
			cfg := p.ConfigFile
			if cfg == "" {
				cfg = "no config file"
			}
			onPath := 0
			for _, u := range p.Units {
				if ch, err := p.EngineFor(u); err == nil && ch.OnPath() {
					onPath++
				}
			}
			if onPath > 0 {
				fmt.Fprintf(c.App.ErrWriter, "warning: no engine is configured for %s; they run the terraform on PATH (set engine: {name: terraform, version: ...} to pin one)\n", report.CountOf(onPath, "unit"))
			}
			if !ciplatform.From(os.Getenv).InCI() && os.Getenv("ACTIONS_ID_TOKEN_REQUEST_URL") == "" && os.Getenv(oidc.TokenVariable) == "" {
				if steps := p.OIDCSteps(); len(steps) > 0 {
					fmt.Fprintf(c.App.ErrWriter, "note: outside CI, with no OIDC token, oidc steps are skipped and the ambient credentials used (docs/behaviour.md#oidc):\n  %s\n",
						strings.Join(steps, "\n  "))
				}
			}
			fmt.Fprintf(c.App.Writer, "ok: %s: %s, %s (%d leaf), %s, %s\n",
				cfg, report.CountOf(len(p.Dirspaces), "dirspace"), report.CountOf(len(p.Stacks), "stack"), leaves, report.CountOf(len(p.Units), "unit"), report.CountOf(len(p.Diagnostics.Warnings())+len(readWarnings), "warning"))
			return nil
		},
	}
}
