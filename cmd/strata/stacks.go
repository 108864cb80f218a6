package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/stacks"
)

// stackEntry is one element of `stacks --json` (documented in the README).
type stackEntry struct {
	Name      string               `json:"name"`
	Kind      string               `json:"kind"`
	Stacks    []string             `json:"stacks"`
	Members   []memberEntry        `json:"members"`
	Variables map[string]string    `json:"variables"`
	Engine    *stacks.EngineChoice `json:"engine"`
	Targets   []string             `json:"targets"`
	Inputs    map[string]inputRef  `json:"inputs"`
	Rules     rulesEntry           `json:"rules"`
}

type memberEntry struct {
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
}

type inputRef struct {
	Stack     string `json:"stack,omitempty"`
	Dir       string `json:"dir,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Output    string `json:"output"`
}

type rulesEntry struct {
	PlanAfter     []string            `json:"plan_after"`
	ApplyAfter    []string            `json:"apply_after"`
	ModifiedBy    []string            `json:"modified_by"`
	AutoApply     bool                `json:"auto_apply"`
	Prerequisites []prerequisiteEntry `json:"prerequisites"`
}

type prerequisiteEntry struct {
	Stack           string `json:"stack"`
	SucceededWithin string `json:"succeeded_within"`
}

func names(ss []*stacks.Stack) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func stackToEntry(s *stacks.Stack) stackEntry {
	e := stackEntry{
		Name: s.Name, Kind: s.Kind(), Stacks: names(s.Children), Members: []memberEntry{},
		Variables: map[string]string{}, Targets: s.Targets, Inputs: map[string]inputRef{},
		Rules: rulesEntry{
			PlanAfter: names(s.PlanAfter), ApplyAfter: names(s.ApplyAfter), ModifiedBy: names(s.ModifiedBy),
			AutoApply: s.AutoApply, Prerequisites: []prerequisiteEntry{},
		},
	}
	if e.Targets == nil {
		e.Targets = []string{}
	}
	for _, u := range s.Units {
		e.Members = append(e.Members, memberEntry{Dir: u.Dir, Workspace: u.Workspace})
	}
	for _, v := range s.Variables {
		val := v.Value
		if v.Sensitive {
			val = "***"
		}
		e.Variables[v.Name] = val
	}
	if s.Engine != nil {
		e.Engine = &stacks.EngineChoice{Name: s.Engine.Name.Value, Version: s.Engine.VersionString().Value}
	}
	if s.Def != nil && s.Def.Inputs != nil {
		for _, in := range s.Def.Inputs.Entries {
			e.Inputs[in.Key] = inputRef{Stack: in.Value.Stack.Value, Dir: in.Value.Dir.Value, Workspace: in.Value.Workspace.Value, Output: in.Value.Output.Value}
		}
	}
	for _, pr := range s.Prerequisites {
		e.Rules.Prerequisites = append(e.Rules.Prerequisites, prerequisiteEntry{Stack: pr.Stack.Name, SucceededWithin: pr.Within.String()})
	}
	return e
}

func stacksCommand() *cli.Command {
	return &cli.Command{
		Name:  "stacks",
		Usage: "list stacks: kind, members, variables, engine and rules after resolution",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			s, err := openProject(c)
			if err != nil {
				return err
			}
			entries := make([]stackEntry, 0, len(s.project.Stacks))
			for _, st := range s.project.Stacks {
				entries = append(entries, stackToEntry(st))
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STACK\tKIND\tUNITS\tENGINE\tPLAN AFTER\tAPPLY AFTER\tMODIFIED BY\tAUTO APPLY")
			for i, st := range s.project.Stacks {
				e := entries[i]
				engine := "-"
				if e.Engine != nil {
					engine = strings.TrimSpace(e.Engine.Name + " " + e.Engine.Version)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%t\n", strings.Join(st.Path, "/"), e.Kind, len(e.Members), engine,
					list(e.Rules.PlanAfter), list(e.Rules.ApplyAfter), list(e.Rules.ModifiedBy), e.Rules.AutoApply)
			}
			return tw.Flush()
		},
	}
}

func list(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ",")
}
