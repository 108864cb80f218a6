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
	onPath   bool
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
	specs := map[engines.Spec]bool{}
	needs := make([]engineNeed, 0, len(order))
	for _, k := range order {
		n := engineNeed{onPath: k.c.OnPath(), Stack: k.stack, Units: counts[k], Engine: engineRef{k.c.Name, k.c.Version}, From: k.c.From}
		if k.c.Supported() && !k.c.OnPath() {
			if spec, err := engines.ParseSpec(k.c.Name, k.c.Version); err != nil {
				n.Error = err.Error()
			} else {
				specs[spec] = true
			}
		} else if !k.c.Supported() {
			n.Error = fmt.Sprintf("engine %s is not supported", k.c.Name)
		}
		needs = append(needs, n)
	}
	// Each distinct engine is resolved once; one that cannot be had is
	// reported against every stack that needs it.
	resolved := map[engines.Spec]*engines.Engine{}
	failed := map[engines.Spec]string{}
	for spec := range specs {
		res, err := in.Resolve(c.Context, []engines.Spec{spec})
		if err != nil {
			failed[spec] = err.Error()
			continue
		}
		resolved[spec] = res[spec]
	}
	var pathEngine *engines.Engine
	pathErr := ""
	for i := range needs {
		n := &needs[i]
		if n.Error != "" {
			continue
		}
		if n.onPath {
			if pathEngine == nil && pathErr == "" {
				if pathEngine, err = in.FindOnPath(c.Context, engines.Terraform); err != nil {
					pathErr = err.Error()
				}
			}
			n.Resolved, n.Error = pathEngine, pathErr
			if pathEngine != nil {
				fmt.Fprintf(c.App.ErrWriter, "warning: %s: no engine is configured; using %s from PATH (%s)\n", n.Stack, pathEngine, pathEngine.Path)
			}
			continue
		}
		spec, _ := engines.ParseSpec(n.Engine.Name, n.Engine.Version)
		n.Resolved, n.Error = resolved[spec], failed[spec]
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
