package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// engineNeed is one engine the config needs: for one stack, as one source
// names it (documented in the README).
type engineNeed struct {
	Stack    string          `json:"stack"`
	Units    int             `json:"units"`
	Engine   engineRef       `json:"engine"`
	From     string          `json:"from"`
	Resolved *engines.Engine `json:"resolved"`
	Error    string          `json:"error,omitempty"`
}

type engineRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func enginesCommand() *cli.Command {
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "print JSON"}
	return &cli.Command{
		Name:  "engines",
		Usage: "show or install the engines the config needs",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the engines each stack needs and where each comes from, without installing",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					return listEngines(c, false)
				},
			},
			{
				Name:  "install",
				Usage: "install every engine the config needs (e.g. in a CI cache step)",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					return listEngines(c, true)
				},
			},
		},
	}
}

// listEngines resolves the engines of every unit: offline from the cache
// and PATH for list, by every source (download, build) for install.
func listEngines(c *cli.Context, install bool) error {
	s, err := openProject(c)
	if err != nil {
		return err
	}
	in, err := engines.NewInstallerFromEnv()
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	in.Offline = in.Offline || !install
	in.Progress = func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) }
	in.Warn = func(msg string) { fmt.Fprintln(c.App.ErrWriter, "warning:", msg) }

	type key struct {
		stack string
		c     stacks.EngineChoice
	}
	counts := map[key]int{}
	var order []key
	for _, u := range s.project.Units {
		ch, err := runner.EngineChoice(s.project, u, os.Environ())
		if err != nil {
			return cli.Exit(err.Error(), 1)
		}
		k := key{u.Stack.Name, ch}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	sort.Slice(order, func(i, j int) bool { return order[i].stack < order[j].stack })
	choices := make([]stacks.EngineChoice, len(order))
	for i, k := range order {
		choices[i] = k.c
	}
	resolved, errs := runner.ResolveEngines(c.Context, in, choices)
	needs := make([]engineNeed, 0, len(order))
	for i, k := range order {
		n := engineNeed{Stack: k.stack, Units: counts[k], Engine: engineRef{k.c.Name, k.c.Version}, From: k.c.From, Resolved: resolved[i]}
		if errs[i] != nil {
			n.Error = errs[i].Error()
		}
		if k.c.OnPath() && n.Resolved != nil {
			fmt.Fprintf(c.App.ErrWriter, "warning: %s: no engine is configured; using %s from PATH (%s)\n", n.Stack, n.Resolved, n.Resolved.Path)
		}
		needs = append(needs, n)
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if err := enc.Encode(needs); err != nil {
			return fmt.Errorf("writing the engine list: %w", err)
		}
	} else {
		tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "STACK\tUNITS\tENGINE\tFROM\tRESOLVED\tSOURCE\tPATH")
		for _, n := range needs {
			res, src, path := "-", "-", "-"
			if n.Resolved != nil {
				res, src, path = n.Resolved.String(), n.Resolved.Source, n.Resolved.Path
			} else if n.Error != "" {
				res = "not available"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", n.Stack, n.Units, strings.TrimSpace(n.Engine.Name+" "+n.Engine.Version), n.From, res, src, path)
		}
		tw.Flush()
		for _, n := range needs {
			if n.Error != "" {
				fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", n.Stack, n.Error)
			}
		}
	}
	for _, n := range needs {
		if n.Error != "" && install {
			return &exitError{code: 1}
		}
	}
	return nil
}
