package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/history"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// graphJSON is what graph --format json prints
// (docs/behaviour.md#the-unit-dag): the units and the edges between two
// units, the stacks and the rules between them, each rule one edge; with
// --expand, Edges also holds each rule as an edge between every unit pair.
type graphJSON struct {
	Units      []graphUnit      `json:"units"`
	Edges      []graphEdge      `json:"edges"`
	Stacks     []graphStack     `json:"stacks"`
	StackEdges []graphStackEdge `json:"stack_edges"`
}

type graphStack struct {
	Name string `json:"name"`
	// Units is how many of the run's units the stack holds.
	Units int `json:"units"`
}

// graphStackEdge is a rule between two stacks: every unit of To waits
// for every unit of From.
type graphStackEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	// Via names the rule: plan_after, apply_after or prerequisite.
	Via string `json:"via"`
}

type graphUnit struct {
	ID        string `json:"id"`
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
	Stack     string `json:"stack"`
	// StackInstance is the key of the unit's stack instance
	// (docs/behaviour.md#stack-instances).
	StackInstance string `json:"stack_instance,omitempty"`
	Layer         int    `json:"layer"`
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
			"applied, an apply edge holds only B's apply. A rule between two stacks\n" +
			"(plan_after, apply_after, a prerequisite) is one edge between the stacks:\n" +
			"every unit of the later stack waits for every unit of the earlier one.\n" +
			"Layers are for display; units run as soon as their own edges allow.\n\n" +
			"--format json prints {units: [{id, dir, workspace, stack, layer, why}],\n" +
			"edges: [{from, to, kind, via}] (between two units: depends_on, inputs),\n" +
			"stacks: [{name, units}] (units: how many), stack_edges: [{from, to, kind,\n" +
			"via}] (between two stacks: plan_after, apply_after, prerequisite)}.\n" +
			"With --expand, edges also holds each stack edge as an edge between every\n" +
			"unit pair, as many as the product of the stacks' sizes.",
		Flags: append(selectionFlags(),
			&cli.StringFlag{Name: "format", Value: "dot", Usage: "dot, mermaid, json or html (a page with each unit's last run)"},
			&cli.BoolFlag{Name: "destroy", Usage: "the graph of destroy (plan edges reversed)"},
			&cli.BoolFlag{Name: "expand", Usage: "with --format json, list each stack edge in edges too, as an edge between every unit pair"},
			&cli.PathFlag{Name: "state-dir", Usage: "run state `DIR`, for stale prerequisites (default .strata at the root)", EnvVars: []string{"STRATA_STATE_DIR"}},
		),
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if format != "dot" && format != "mermaid" && format != "json" && format != "html" {
				return cli.Exit(fmt.Sprintf("--format %s: expected dot, mermaid, json or html", format), 1)
			}
			if c.Bool("expand") && format != "json" {
				return cli.Exit("--expand goes with --format json: the other formats draw a stack edge once", 1)
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
				return writeGraphJSON(c.App.Writer, g, run, c.Bool("expand"))
			case "html":
				return writeGraphHTML(c, g, stateDirOf(c, s))
			case "mermaid":
				writeMermaid(c.App.Writer, g)
			default:
				writeDot(c.App.Writer, g)
			}
			return nil
		},
	}
}

func writeGraphJSON(w io.Writer, g *stacks.Graph, run *stacks.Run, expand bool) error {
	why := make(map[*stacks.Unit]string, len(run.Units))
	for _, ru := range run.Units {
		why[ru.Unit] = ru.Why
	}
	out := graphJSON{Units: []graphUnit{}, Edges: []graphEdge{}, Stacks: []graphStack{}, StackEdges: []graphStackEdge{}}
	for _, u := range g.Units {
		out.Units = append(out.Units, graphUnit{ID: u.ID(), Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, StackInstance: u.Stack.Instance, Layer: g.Layer[u], Why: why[u]})
	}
	edges := g.Edges
	if expand {
		edges = g.Expand()
	}
	for _, e := range edges {
		out.Edges = append(out.Edges, graphEdge{From: e.From.ID(), To: e.To.ID(), Kind: string(e.Kind), Via: e.Why})
	}
	for _, s := range g.Stacks {
		out.Stacks = append(out.Stacks, graphStack{Name: s.Name, Units: len(g.UnitsOf(s))})
	}
	for _, e := range g.StackEdges {
		out.StackEdges = append(out.StackEdges, graphStackEdge{From: e.From.Name, To: e.To.Name, Kind: string(e.Kind), Via: e.Why})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeGraphHTML writes the graph as one HTML page, each unit with its
// last run as the state dir at stateDir keeps it
// (docs/behaviour.md#the-unit-dag).
func writeGraphHTML(c *cli.Context, g *stacks.Graph, stateDir string) error {
	last, err := runstate.ReadLastRun(stateDir)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	h := history.Local(stateDir)
	h.Warn = func(msg string) { warnf(c, "%s", msg) }
	ix, err := h.Index(c.Context)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	recs, err := h.Runs(c.Context, pageRuns)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	runsByUnit := history.RunsByUnit(recs)
	page := &report.GraphPage{}
	for _, u := range g.Units {
		pu := report.PageUnit{ID: u.ID(), Name: u.Name(), Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, StackPath: u.Stack.Path, Layer: g.Layer[u]}
		if lu := last.Units[u.ID()]; lu != nil && lu.Unit != nil {
			pu.Run, pu.Command, pu.RunStartedAt, pu.Log, pu.LogCut = lu.Unit, lu.Command, lu.StartedAt, lu.Log, lu.LogCut
		}
		if us := ix.Units[u.ID()]; us != nil {
			pu.Drift = us.Drift
			if us.DriftedSince != nil {
				pu.DriftedSince = *us.DriftedSince
			}
		}
		for _, r := range runsByUnit[u.ID()] {
			if len(pu.Recent) == recentRuns {
				break
			}
			pu.Recent = append(pu.Recent, report.PageRun{StartedAt: r.Run.StartedAt, Command: r.Run.Command, Status: r.Unit.HistoryStatus(), Took: r.Unit.Took()})
		}
		page.Units = append(page.Units, pu)
	}
	for _, e := range g.Edges {
		page.Edges = append(page.Edges, report.PageEdge{From: e.From.ID(), To: e.To.ID(), Apply: e.Kind == stacks.ApplyEdge, Via: e.Why})
	}
	for _, e := range g.StackEdges {
		page.StackEdges = append(page.StackEdges, report.PageEdge{From: e.From.Name, To: e.To.Name, Apply: e.Kind == stacks.ApplyEdge, Via: e.Why})
	}
	return report.WriteGraphHTML(c.App.Writer, page)
}

// The pages read the newest pageRuns runs of the history, and show a
// unit's last recentRuns of them.
const (
	pageRuns   = 20
	recentRuns = 5
)

// writeDot prints Graphviz: units clustered by stack, a stack edge drawn
// once between the two clusters (an edge between a unit of each, clipped
// to the clusters' borders), labelled with its rule; apply edges dashed
// (docs/behaviour.md#the-unit-dag).
func writeDot(w io.Writer, g *stacks.Graph) {
	fmt.Fprintln(w, "digraph strata {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  compound=true;")
	fmt.Fprintln(w, "  node [shape=box];")
	cluster := make(map[*stacks.Stack]int, len(g.Stacks))
	for i, s := range g.Stacks {
		cluster[s] = i
		fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=%q;\n", i, s.Name)
		for _, u := range g.UnitsOf(s) {
			fmt.Fprintf(w, "    %q [label=%q];\n", u.ID(), u.Name())
		}
		fmt.Fprintln(w, "  }")
	}
	for _, e := range g.StackEdges {
		style := ""
		if e.Kind == stacks.ApplyEdge {
			style = "style=dashed, "
		}
		fmt.Fprintf(w, "  %q -> %q [%sltail=cluster_%d, lhead=cluster_%d, penwidth=2, label=%q];\n",
			g.UnitsOf(e.From)[0].ID(), g.UnitsOf(e.To)[0].ID(), style, cluster[e.From], cluster[e.To], e.Why)
	}
	dotStyle := map[edgeLook]string{lookPlan: "", lookData: " [style=dotted, color=blue, label=\"data\"]", lookApply: " [style=dashed, label=\"apply\"]"}
	for _, e := range g.Edges {
		fmt.Fprintf(w, "  %q -> %q%s;\n", e.From.ID(), e.To.ID(), dotStyle[lookOf(e)])
	}
	fmt.Fprintln(w, "}")
}

// writeMermaid prints a Mermaid flowchart: a subgraph per stack, a stack
// edge once between two subgraphs; plan edges solid, apply edges dotted
// (docs/behaviour.md#the-unit-dag).
func writeMermaid(w io.Writer, g *stacks.Graph) {
	fmt.Fprintln(w, "flowchart LR")
	ids := make(map[*stacks.Unit]string, len(g.Units))
	for i, u := range g.Units {
		ids[u] = fmt.Sprintf("u%d", i)
	}
	sub := make(map[*stacks.Stack]string, len(g.Stacks))
	for i, s := range g.Stacks {
		sub[s] = fmt.Sprintf("s%d", i)
		fmt.Fprintf(w, "  subgraph %s[\"%s\"]\n", sub[s], mermaidText(s.Name))
		for _, u := range g.UnitsOf(s) {
			fmt.Fprintf(w, "    %s[\"%s\"]\n", ids[u], mermaidText(u.Name()))
		}
		fmt.Fprintln(w, "  end")
	}
	for _, e := range g.StackEdges {
		arrow := "-->"
		switch {
		case e.Kind == stacks.ApplyEdge:
			arrow = "-. apply .->"
		case e.Why == "prerequisite":
			arrow = "-- prerequisite -->"
		}
		fmt.Fprintf(w, "  %s %s %s\n", sub[e.From], arrow, sub[e.To])
	}
	arrows := map[edgeLook]string{lookPlan: "-->", lookData: "-. data .->", lookApply: "-. apply .->"}
	for _, e := range g.Edges {
		fmt.Fprintf(w, "  %s %s %s\n", ids[e.From], arrows[lookOf(e)], ids[e.To])
	}
}

// edgeLook is how a drawing tells an edge between units apart.
type edgeLook int

const (
	lookPlan  edgeLook = iota // holds a plan
	lookData                  // holds a plan for the outputs it reads
	lookApply                 // holds only an apply
)

// lookOf is how an edge between units is drawn, in every format.
func lookOf(e stacks.Edge) edgeLook {
	switch {
	case e.Why == "inputs":
		return lookData
	case e.Kind == stacks.ApplyEdge:
		return lookApply
	}
	return lookPlan
}

func mermaidText(s string) string { return strings.ReplaceAll(s, `"`, "#quot;") }

// engineGraph says graph in a unit's dir is the engine's own graph of the
// unit's resources, as `terraform graph` there: no flag of strata's unit
// DAG is given (--workspace and --stack pick the unit).
func engineGraph(c *cli.Context, s *session) bool {
	for _, f := range []string{"format", "destroy", "expand", "all", "query", "dir", "changed", "with-dependencies"} {
		if c.IsSet(f) {
			return false
		}
	}
	return len(s.project.UnitsIn(s.cwd)) > 0
}
