package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// lsEntry is one line of `ls --json` (documented in the README).
type lsEntry struct {
	Dir       string   `json:"dir"`
	Workspace string   `json:"workspace"`
	Stack     *string  `json:"stack"`
	StackPath []string `json:"stack_path"`
	// StackInstance is the key of the unit's stack instance
	// (docs/behaviour.md#stack-instances).
	StackInstance string               `json:"stack_instance,omitempty"`
	Tags          []string             `json:"tags"`
	Engine        *stacks.EngineChoice `json:"engine"`
	Why           string               `json:"why"`
	// Whys are every reason the unit is in the run, Why first
	// (docs/behaviour.md#changed-units).
	Whys []string `json:"whys"`
}

func lsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the units in the run and why each is in",
		ArgsUsage: "[QUERY]",
		Description: "QUERY is a tag query over unit tags (dir:, workspace:, stack_name:, dirs tags).\n" +
			"Dirspaces in no stack are listed with stack null in --json.",
		Flags: append(selectionFlags(),
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.PathFlag{Name: "state-dir", Usage: "run state `DIR`, for stale prerequisites (default .strata at the root)", EnvVars: []string{"STRATA_STATE_DIR"}},
			&cli.StringFlag{Name: "state", Usage: "with --status, read the units' statuses from the state bucket at `URL`", EnvVars: []string{"STRATA_STATE_URL"}},
			stateTimeoutFlag(),
		),
		Action: func(c *cli.Context) error {
			s, err := openProject(c)
			if err != nil {
				return err
			}
			if err := noConfiguration(s); err != nil {
				return err
			}
			run, deleted, _, err := selectUnits(c, s, strings.Join(c.Args().Slice(), " "))
			if err != nil {
				return err
			}
			if run, err = runner.WithPrerequisites(s.project, run, c.Path("state-dir"), time.Now()); err != nil {
				return cli.Exit(err.Error(), 1)
			}
			p := s.project
			entries := make([]lsEntry, 0, len(run.Units))
			for _, ru := range run.Units {
				e, err := runner.EngineChoice(p, ru.Unit, os.Environ())
				if err != nil {
					return cli.Exit(err.Error(), 1)
				}
				name := ru.Stack.Name
				entries = append(entries, lsEntry{
					Dir: ru.Dir, Workspace: ru.Workspace, Stack: &name, StackPath: ru.Stack.Path, StackInstance: ru.Stack.Instance,
					Tags: ru.Tags, Engine: &e, Why: ru.Why, Whys: whysOf(ru),
				})
			}
			// A unit whose dir the change deleted is listed, never run.
			for _, d := range deleted {
				e := lsEntry{Dir: d.Dir, Workspace: d.Workspace, StackPath: []string{}, Tags: d.Tags, Why: stacks.WhyDeleted, Whys: []string{stacks.WhyDeleted}}
				if d.Stack != nil {
					name := d.Stack.Name
					e.Stack, e.StackPath = &name, d.Stack.Path
				}
				entries = append(entries, e)
			}
			if c.NArg() == 0 && c.String("query") == "" && len(c.StringSlice("stack")) == 0 && !c.Bool("changed") && len(c.StringSlice("status")) == 0 {
				for _, ds := range p.Unassigned {
					if stacks.DirWithin(ds.Dir, s.cwd) {
						entries = append(entries, lsEntry{Dir: ds.Dir, Workspace: ds.Workspace, StackPath: []string{}, Tags: ds.Tags, Why: "in no stack", Whys: []string{"in no stack"}})
					}
				}
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			if len(entries) == 0 {
				fmt.Fprintln(c.App.Writer, "no units selected")
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "UNIT\tSTACK\tENGINE\tWHY")
			for _, e := range entries {
				stack, engine := "-", "-"
				if e.Stack != nil {
					stack = strings.Join(e.StackPath, "/")
				}
				if e.Engine != nil {
					engine = strings.TrimSpace(e.Engine.Name + " " + e.Engine.Version)
				}
				fmt.Fprintf(tw, "%s@%s\t%s\t%s\t%s\n", e.Dir, e.Workspace, stack, engine, e.Why)
			}
			return tw.Flush()
		},
	}
}

// whysOf is every reason a unit is in the run, its why first; a unit
// added after the selection (a stale prerequisite) has its why alone.
func whysOf(ru stacks.RunUnit) []string {
	if len(ru.Whys) == 0 {
		return []string{ru.Why}
	}
	return ru.Whys
}
