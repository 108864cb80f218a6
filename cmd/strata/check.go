package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
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
			// Every warning printed: the config's, the command's (both
			// counted when printed) and the reads'.
			warnings := warningsPrinted(c) + len(readWarnings)
			if w := noEngineWarning(p, cfg); w != "" {
				fmt.Fprintln(c.App.ErrWriter, w)
				warnings++
			}
			if !ciplatform.From(os.Getenv).InCI() && os.Getenv("ACTIONS_ID_TOKEN_REQUEST_URL") == "" && os.Getenv(oidc.TokenVariable) == "" {
				if steps := p.OIDCSteps(); len(steps) > 0 {
					fmt.Fprintf(c.App.ErrWriter, "note: outside CI, with no OIDC token, oidc steps are skipped and the ambient credentials used (docs/behaviour.md#oidc):\n  %s\n",
						strings.Join(steps, "\n  "))
				}
			}
			fmt.Fprintf(c.App.Writer, "ok: %s: %s, %s (%d leaf), %s, %s\n",
				cfg, report.CountOf(len(p.Dirspaces), "dirspace"), report.CountOf(len(p.Stacks), "stack"), leaves, report.CountOf(len(p.Units), "unit"), report.CountOf(warnings, "warning"))
			return nil
		},
	}
}

// noEngineWarning warns, once, of the stacks whose units run whatever
// terraform is on PATH, naming them; an absent key has no line to point
// at, so it says where one would go.
func noEngineWarning(p *stacks.Project, cfg string) string {
	units := 0
	var names []string
	for _, u := range p.Units {
		if ch, err := p.EngineFor(u); err == nil && ch.OnPath() {
			units++
			if !slices.Contains(names, u.Stack.Name) {
				names = append(names, u.Stack.Name)
			}
		}
	}
	if units == 0 {
		return ""
	}
	slices.Sort(names)
	const most = 5
	list := strings.Join(names, ", ")
	if len(names) > most {
		list = strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
	}
	return fmt.Sprintf("warning: %s: no engine is configured for %s (%s: %s); they run the terraform on PATH (no line to point at: add engine: {name: terraform, version: ...} at the top of the config, or to a stack, to pin one)",
		cfg, report.CountOf(units, "unit"), report.CountOf(len(names), "stack"), list)
}
