package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

type graphJSON struct {
	Units []graphUnit `json:"units"`
	Edges []graphEdge `json:"edges"`
}

type graphUnit struct {
	ID        string `json:"id"`
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
	Stack     string `json:"stack"`
	Layer     int    `json:"layer"`
	// Why the unit is in the run, as ls says it
	// (docs/behaviour.md#propagation).
	Why string `json:"why"`
}

type graphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	// Via names what made the edge: plan_after, apply_after, depends_on,
	// inputs (a data edge) or prerequisite.
	Via string `json:"via"`
}

func graphCommand() *cli.Command {
	return &cli.Command{
		Name:  "graph",
		Usage: "print the unit DAG of the run",
		Description: "An edge A -> B means B waits for A: a plan edge holds B's plan until A is\n" +
			"applied, an apply edge holds only B's apply. Layers are for display; units\n" +
			"run as soon as their own edges allow.",
		Flags: append(selectionFlags(),
			&cli.StringFlag{Name: "format", Value: "dot", Usage: "dot, mermaid, json or html (a page with each unit's last run)"},
			&cli.BoolFlag{Name: "destroy", Usage: "the graph of destroy (plan edges reversed)"},
			&cli.PathFlag{Name: "state-dir", Usage: "run state `DIR`, for stale prerequisites (default .strata at the root)", EnvVars: []string{"STRATA_STATE_DIR"}},
		),
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if format != "dot" && format != "mermaid" && format != "json" && format != "html" {
				return cli.Exit(fmt.Sprintf("--format %s: expected dot, mermaid, json or html", format), 1)
			}
			s, err := openProject(c)
			if err != nil {
				return err
			}
			if engineGraph(c, s) {
				return passthroughIn(c, s, "graph", c.App.Writer)
			}
			s.destroying = c.Bool("destroy")
			if err := refuseWithDependencies(c); err != nil {
				return err
			}
			run, err := selectRun(c, s, "")
			if err != nil {
				return err
			}
			if run, err = runner.WithPrerequisites(s.project, run, c.Path("state-dir"), time.Now()); err != nil {
				return cli.Exit(err.Error(), 1)
			}
			g, err := s.project.Graph(run.List(), stacks.GraphOptions{Destroy: c.Bool("destroy")})
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			switch format {
			case "json":
				return writeGraphJSON(c.App.Writer, g, run)
			case "html":
				return writeGraphHTML(c.App.Writer, g, stateDirOf(c, s))
			case "mermaid":
				writeMermaid(c.App.Writer, g)
			default:
				writeDot(c.App.Writer, g)
			}
			return nil
		},
	}
}

func writeGraphJSON(w io.Writer, g *stacks.Graph, run *stacks.Run) error {
	why := make(map[*stacks.Unit]string, len(run.Units))
	for _, ru := range run.Units {
		why[ru.Unit] = ru.Why
	}
	out := graphJSON{Units: []graphUnit{}, Edges: []graphEdge{}}
	for _, u := range g.Units {
		out.Units = append(out.Units, graphUnit{ID: u.ID(), Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, Layer: g.Layer[u], Why: why[u]})
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, graphEdge{From: e.From.ID(), To: e.To.ID(), Kind: string(e.Kind), Via: e.Why})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeGraphHTML writes the graph as one HTML page, each unit with its
// last run as the state dir at stateDir keeps it
// (docs/behaviour.md#the-unit-dag).
func writeGraphHTML(w io.Writer, g *stacks.Graph, stateDir string) error {
	last, err := runstate.ReadLastRun(stateDir)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	page := &report.GraphPage{}
	for _, u := range g.Units {
		pu := report.PageUnit{ID: u.ID(), Name: u.Name(), Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, Layer: g.Layer[u]}
		if lu := last.Units[u.ID()]; lu != nil && lu.Unit != nil {
			pu.Run, pu.Command, pu.RunStartedAt, pu.Log, pu.LogCut = lu.Unit, lu.Command, lu.StartedAt, lu.Log, lu.LogCut
		}
		page.Units = append(page.Units, pu)
	}
	for _, e := range g.Edges {
		page.Edges = append(page.Edges, report.PageEdge{From: e.From.ID(), To: e.To.ID(), Apply: e.Kind == stacks.ApplyEdge, Via: e.Why})
	}
	return report.WriteGraphHTML(w, page)
}

// writeDot prints Graphviz: units clustered by stack, apply edges dashed.
func writeDot(w io.Writer, g *stacks.Graph) {
	fmt.Fprintln(w, "digraph strata {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box];")
	byStack := map[string][]*stacks.Unit{}
	var order []string
	for _, u := range g.Units {
		if _, ok := byStack[u.Stack.Name]; !ok {
			order = append(order, u.Stack.Name)
		}
		byStack[u.Stack.Name] = append(byStack[u.Stack.Name], u)
	}
	for i, name := range order {
		fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=%q;\n", i, name)
		for _, u := range byStack[name] {
			fmt.Fprintf(w, "    %q [label=%q];\n", u.ID(), u.Name())
		}
		fmt.Fprintln(w, "  }")
	}
	for _, e := range g.Edges {
		style := ""
		switch {
		case e.Why == "inputs":
			style = " [style=dotted, color=blue, label=\"data\"]"
		case e.Kind == stacks.ApplyEdge:
			style = " [style=dashed, label=\"apply\"]"
		}
		fmt.Fprintf(w, "  %q -> %q%s;\n", e.From.ID(), e.To.ID(), style)
	}
	fmt.Fprintln(w, "}")
}

// writeMermaid prints a Mermaid flowchart: plan edges solid, apply edges
// dotted.
func writeMermaid(w io.Writer, g *stacks.Graph) {
	fmt.Fprintln(w, "flowchart LR")
	ids := map[*stacks.Unit]string{}
	byStack := map[string][]*stacks.Unit{}
	var order []string
	for i, u := range g.Units {
		ids[u] = fmt.Sprintf("u%d", i)
		if _, ok := byStack[u.Stack.Name]; !ok {
			order = append(order, u.Stack.Name)
		}
		byStack[u.Stack.Name] = append(byStack[u.Stack.Name], u)
	}
	for i, name := range order {
		fmt.Fprintf(w, "  subgraph s%d[\"%s\"]\n", i, mermaidText(name))
		for _, u := range byStack[name] {
			fmt.Fprintf(w, "    %s[\"%s\"]\n", ids[u], mermaidText(u.Name()))
		}
		fmt.Fprintln(w, "  end")
	}
	for _, e := range g.Edges {
		arrow := "-->"
		switch {
		case e.Why == "inputs":
			arrow = "-. data .->"
		case e.Kind == stacks.ApplyEdge:
			arrow = "-. apply .->"
		}
		fmt.Fprintf(w, "  %s %s %s\n", ids[e.From], arrow, ids[e.To])
	}
}

func mermaidText(s string) string { return strings.ReplaceAll(s, `"`, "#quot;") }

// engineGraph says graph in a unit's dir is the engine's own graph of the
// unit's resources, as `terraform graph` there: no flag of strata's unit
// DAG is given (--workspace and --stack pick the unit).
func engineGraph(c *cli.Context, s *session) bool {
	for _, f := range []string{"format", "destroy", "all", "query", "dir", "changed", "with-dependencies"} {
		if c.IsSet(f) {
			return false
		}
	}
	return len(s.project.UnitsIn(s.cwd)) > 0
}
