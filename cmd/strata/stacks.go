package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/stacks"
)

// stackEntry is one element of `stacks --json` (documented in the README).
type stackEntry struct {
	Name string `json:"name"`
	// InstanceOf and Instance are, for an instance (net[us]), the stack
	// as written and its key (docs/behaviour.md#stack-instances).
	InstanceOf string               `json:"instance_of,omitempty"`
	Instance   string               `json:"instance,omitempty"`
	Kind       string               `json:"kind"`
	Stacks     []string             `json:"stacks"`
	Members    []memberEntry        `json:"members"`
	Variables  map[string]string    `json:"variables"`
	Engine     *stacks.EngineChoice `json:"engine"`
	Targets    []string             `json:"targets"`
	Inputs     map[string]inputRef  `json:"inputs"`
	Rules      rulesEntry           `json:"rules"`
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

// stackToEntry describes a stack with its rules as resolved: the stack's
// own and inherited rules expanded to leaves. With transitive, each rule
// lists everything it reaches through other stacks too; that is quadratic
// in a long chain of stacks, so it is printed only when asked for.
func stackToEntry(s *stacks.Stack, transitive bool) stackEntry {
	planAfter, applyAfter, modifiedBy := s.PlanAfter, s.ApplyAfter, s.ModifiedBy
	if transitive {
		planAfter, applyAfter, modifiedBy = s.PlanAfterClosure(), s.ApplyAfterClosure(), s.ModifiedByClosure()
	}
	e := stackEntry{
		Name: s.Name, InstanceOf: s.Base, Instance: s.Instance, Kind: s.Kind(), Stacks: names(s.Children), Members: []memberEntry{},
		Variables: map[string]string{}, Targets: s.Targets, Inputs: map[string]inputRef{},
		Rules: rulesEntry{
			PlanAfter: names(planAfter), ApplyAfter: names(applyAfter), ModifiedBy: names(modifiedBy),
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
		Description: "Rules are listed as resolved: a stack's own and inherited rules, each\n" +
			"nested stack expanded to its leaves. --transitive also lists every stack a\n" +
			"rule reaches through others.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "transitive", Usage: "list each rule's transitive closure, not only the stacks it names"},
		},
		Action: func(c *cli.Context) error {
			s, err := openProject(c)
			if err != nil {
				return err
			}
			transitive := c.Bool("transitive")
			if c.Bool("json") {
				return writeStacksJSON(c.App.Writer, s.project.Stacks, transitive)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STACK\tKIND\tUNITS\tENGINE\tPLAN AFTER\tAPPLY AFTER\tMODIFIED BY\tAUTO APPLY")
			for _, st := range s.project.Stacks {
				e := stackToEntry(st, transitive)
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

// writeStacksJSON writes the stacks as one indented JSON array, one entry
// at a time, so that only one stack's entry is held at once: with
// --transitive the whole listing can be quadratic in the number of stacks.
func writeStacksJSON(w io.Writer, ss []*stacks.Stack, transitive bool) error {
	bw := bufio.NewWriter(w)
	if len(ss) == 0 {
		bw.WriteString("[]\n")
		return bw.Flush()
	}
	bw.WriteString("[\n")
	for i, st := range ss {
		if i > 0 {
			bw.WriteString(",\n")
		}
		bw.WriteString("  ")
		// Encode ends each value with a newline; the array's own
		// separators take its place.
		var one bytes.Buffer
		e := json.NewEncoder(&one)
		e.SetIndent("  ", "  ")
		if err := e.Encode(stackToEntry(st, transitive)); err != nil {
			return err
		}
		bw.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n")))
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

func list(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ",")
}
