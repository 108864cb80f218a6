package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// GraphPage is what `graph --format html` draws (docs/behaviour.md#the-unit-dag):
// the units of the DAG in a box per stack, the edges between units, the
// rules between stacks, each one edge between two boxes, and each unit's
// last run.
type GraphPage struct {
	Units []PageUnit
	Edges []PageEdge
	// StackEdges are the rules between stacks, From and To naming stacks:
	// every unit of To waits for every unit of From.
	StackEdges []PageEdge
}

// PageUnit is a unit of the DAG with its last run, when one is recorded.
type PageUnit struct {
	ID, Name, Dir, Workspace, Stack string
	// StackPath is the stacks from a top stack down to Stack, the unit's
	// leaf; the page nests their boxes so. Empty is Stack alone.
	StackPath []string
	Layer     int
	// Run is the unit's report in its last run; nil when none is recorded.
	Run *UnitReport
	// Command is the command of that run, and RunStartedAt when it began.
	Command      string
	RunStartedAt time.Time
	// Log is the unit's engine output in that run, masked; LogCut says it
	// was already cut when it was recorded.
	Log    string
	LogCut bool
	// Drift is drifted or in_sync as the history says, "" when no drift
	// check looked at the unit; DriftedSince when it drifted.
	Drift        Status
	DriftedSince time.Time
	// Recent are the unit's last runs in the history, newest first.
	Recent []PageRun
}

// PageRun is one of a unit's last runs.
type PageRun struct {
	StartedAt time.Time
	Command   string
	Status    Status
	Took      time.Duration
}

// PageEdge is an edge of the DAG: To waits for From, two units' IDs in
// Edges, two stacks' names in StackEdges.
type PageEdge struct {
	From, To string
	Apply    bool
	Via      string
}

// PageLogLimit is the most of a unit's output the page holds.
const PageLogLimit = 32 << 10

// Layout of the page's pictures, in pixels.
const (
	nodeW, nodeH   = 200, 46
	colGap, rowGap = 110, 22
	margin         = 20
	// A stack's box holds its units stackPad inside it, under a title
	// stackHead high, and stackGap apart from the next box down.
	stackPad, stackHead, stackGap = 10, 20, 16
	ganttLabelW                   = 280
	ganttPlotW                    = 760
	ganttRowH                     = 26
)

//go:embed graph.html.tmpl
var graphHTML string

// graphTemplate is parsed on first use, not at every start of strata.
var graphTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("graph").Parse(graphHTML))
})

// noRunFill fills a unit with no recorded run.
const noRunFill = "#d0d7de"

type pageView struct {
	Units, Edges, StackEdges int
	DAG                      dagView
	Gantt                    *ganttView
	Panels                   []panelView
	Legend                   []legendEntry
}

type dagView struct {
	// Width is the picture's at the narrowest pitch; the page's script
	// spreads its Columns over the window's width.
	Width, Height, Columns int
	Stacks                 []stackView
	Nodes                  []nodeView
	Edges                  []edgeView
	StackEdges             []stackEdgeView
}

// stackView is a stack's box around its units or its children's boxes;
// Parent names the stack whose box holds it. The box starts in column
// Col and spans Span more.
type stackView struct {
	Name, Full, Parent    string
	X, Y, W, H, Col, Span int
}

// stackEdgeView is a rule between two stacks, a path between their
// boxes with the rule written at its middle.
type stackEdgeView struct {
	edgeView
	Via            string
	LabelX, LabelY int
	LabelCol       float64
}

type nodeView struct {
	Key, Name, Full, Status, Fill, Text string
	X, Y, W, H, Col                     int
}

// edgeView is a path; Spread is the same path as the page's script
// spreads it (xpos).
type edgeView struct {
	Path, Spread, Title string
	Apply               bool
}

type legendEntry struct{ Status, Fill string }

type panelView struct {
	Key, Name, Dir, Workspace, Stack string
	Status, Fill, Reason, Changes    string
	Command, At, Log, LogNote        string
	HasRun                           bool
	Drift                            string
	Recent                           []recentView
}

type recentView struct{ At, Command, Status, Fill, Took string }

// WriteGraphHTML writes the page: one HTML file with no external
// resources, every name and output escaped as text.
func WriteGraphHTML(w io.Writer, p *GraphPage) error {
	v := pageView{Units: len(p.Units), Edges: len(p.Edges), Legend: legend()}
	keys := make(map[string]string, len(p.Units))
	for i, u := range p.Units {
		keys[u.ID] = fmt.Sprintf("u%d", i)
	}
	v.DAG = layoutDAG(p, keys)
	v.StackEdges = len(v.DAG.StackEdges)
	v.Gantt = layoutGantt(p)
	for _, u := range p.Units {
		v.Panels = append(v.Panels, panelOf(u, keys[u.ID]))
	}
	if err := graphTemplate().Execute(w, v); err != nil {
		return fmt.Errorf("writing the graph page: %w", err)
	}
	return nil
}

func legend() []legendEntry {
	var out []legendEntry
	for _, c := range statusColours {
		out = append(out, legendEntry{string(c.status), c.fill})
	}
	return append(out, legendEntry{"no run recorded", noRunFill})
}

// fillOf is the colour of a unit's last status.
func fillOf(u PageUnit) string {
	if u.Run == nil {
		return noRunFill
	}
	for _, c := range statusColours {
		if c.status == u.Run.Status {
			return c.fill
		}
	}
	return noRunFill
}

func statusOf(u PageUnit) string {
	if u.Run == nil {
		return "no run recorded"
	}
	return string(u.Run.Status)
}

// layoutDAG puts each layer in a column and each stack in a box spanning
// its columns: a leaf's box holds its units, a nested stack's box the
// boxes of its children (docs/behaviour.md#the-unit-dag). Boxes sharing
// a column are stacked one under the other. It draws an edge between
// units from the right of one box to the left of the other, and a rule
// between stacks once, between the outermost two boxes it holds for
// whole (liftRules).
//
// Every x is drawn at the narrowest pitch and carries its column, so the
// page's script can spread the columns over the window's width
// (xpos).
func layoutDAG(p *GraphPage, keys map[string]string) dagView {
	var d dagView
	t := stackTree(p)
	pad := stackPad
	if t.levels > 0 && t.levels*pad > colGap/2-8 {
		pad = max(2, (colGap/2-8)/t.levels)
	}
	colX := func(c int) int { return margin + t.levels*pad + c*(nodeW+colGap) }
	// free[c]: the first y below every box placed in column c.
	free := map[int]int{}
	var place func(b *pageBox)
	place = func(b *pageBox) {
		// A box is drawn before the boxes inside it.
		at := len(d.Stacks)
		d.Stacks = append(d.Stacks, stackView{})
		b.y = margin
		for c := b.first; c <= b.last; c++ {
			b.y = max(b.y, free[c])
		}
		if b.children == nil {
			height := 0
			for c := b.first; c <= b.last; c++ {
				height = max(height, b.rows[c])
			}
			b.h = stackHead + height*(nodeH+rowGap) - rowGap + 2*stackPad
		} else {
			for c := b.first; c <= b.last; c++ {
				free[c] = b.y + stackHead + stackPad
			}
			bottom := b.y
			for _, k := range b.children {
				place(k)
				bottom = max(bottom, k.y+k.h)
			}
			b.h = bottom + stackPad - b.y
		}
		for c := b.first; c <= b.last; c++ {
			free[c] = b.y + b.h + stackGap
		}
		x := colX(b.first) - b.levels*pad
		b.view = stackView{Name: shorten(b.name, 28+(b.last-b.first)*36), Full: b.name, Parent: b.parentName(),
			X: x, Col: b.first, Y: b.y, W: colX(b.last) + nodeW + b.levels*pad - x, Span: b.last - b.first, H: b.h}
		d.Stacks[at] = b.view
		d.Width = max(d.Width, b.view.X+b.view.W+margin)
		d.Height = max(d.Height, b.y+b.h+margin)
	}
	for _, b := range t.tops {
		place(b)
	}
	rows := map[*pageBox]map[int]int{}
	pos := make(map[string][2]int, len(p.Units))
	for _, u := range p.Units {
		b := t.leafOf[u.Stack]
		if rows[b] == nil {
			rows[b] = map[int]int{}
		}
		x := colX(u.Layer)
		y := b.y + stackHead + stackPad + rows[b][u.Layer]*(nodeH+rowGap)
		rows[b][u.Layer]++
		pos[u.ID] = [2]int{x, y}
		text := "#fff"
		if u.Run == nil {
			text = "#24292f"
		}
		status := statusOf(u)
		if u.Drift == historyDrifted {
			status += " · drifted"
		}
		d.Nodes = append(d.Nodes, nodeView{Key: keys[u.ID], Name: shorten(u.Name, 28), Full: u.ID, Status: status,
			Fill: fillOf(u), Text: text, X: x, Col: u.Layer, Y: y, W: nodeW, H: nodeH})
	}
	layer := make(map[string]int, len(p.Units))
	for _, u := range p.Units {
		layer[u.ID] = u.Layer
	}
	for _, e := range p.Edges {
		from, okf := pos[e.From]
		to, okt := pos[e.To]
		if !okf || !okt {
			continue
		}
		x1, y1 := xpos{from[0] + nodeW, float64(layer[e.From])}, from[1]+nodeH/2
		x2, y2 := xpos{to[0] - 4, float64(layer[e.To])}, to[1]+nodeH/2
		path, spread := curve(x1, y1, x2, y2)
		d.Edges = append(d.Edges, edgeView{Path: path, Spread: spread, Apply: e.Apply,
			Title: fmt.Sprintf("%s -> %s (%s, %s)", e.From, e.To, kindOf(e), e.Via)})
	}
	for _, r := range t.liftRules(p.StackEdges) {
		from, to := r.from.view, r.to.view
		x1, y1 := xpos{from.X + from.W, float64(r.from.last)}, from.Y+from.H/2
		x2, y2 := xpos{to.X - 4, float64(r.to.first)}, to.Y+to.H/2
		path, spread := curve(x1, y1, x2, y2)
		labelX, labelY := xpos{(x1.px + x2.px) / 2, (x1.col + x2.col) / 2}, min(y1, y2)-8
		// Over columns between the two boxes, the edge runs under every
		// box in them, down and up again in the gaps beside its ends.
		if a, b := r.from.last+1, r.to.first; a < b {
			low := 0
			for c := a; c < b; c++ {
				low = max(low, free[c])
			}
			if low > 0 {
				g := (colGap - 2*pad) / 2
				path, spread = pathOf("M%x %d C%x %d %x %d %x %d L%x %d C%x %d %x %d %x %d",
					x1, y1, x1.add(g/2), y1, x1.add(g/2), low, x1.add(g), low, x2.add(-g), low, x2.add(-g/2), low, x2.add(-g/2), y2, x2, y2)
				labelY = low - 6
				d.Height = max(d.Height, low+margin)
			}
		}
		e := r.edge
		d.StackEdges = append(d.StackEdges, stackEdgeView{
			edgeView: edgeView{Path: path, Spread: spread, Apply: e.Apply,
				Title: fmt.Sprintf("stack %s -> stack %s (%s, %s): every unit of %s waits for every unit of %s", r.from.name, r.to.name, kindOf(e), e.Via, r.to.name, r.from.name)},
			Via: e.Via, LabelX: labelX.px, LabelCol: labelX.col, LabelY: labelY})
	}
	for _, u := range p.Units {
		d.Columns = max(d.Columns, u.Layer+1)
	}
	return d
}

// xpos is an x on the page's picture: px at the narrowest pitch, in
// column col, which the page's script moves right by col times the room
// the window leaves over (docs/behaviour.md#the-unit-dag).
type xpos struct {
	px  int
	col float64
}

func (x xpos) add(d int) xpos { return xpos{x.px + d, x.col} }

// spread is x as the page's script reads it: "px+col".
func (x xpos) spread() string {
	return strconv.Itoa(x.px) + "+" + strconv.FormatFloat(x.col, 'f', -1, 64)
}

// pathOf is an SVG path written twice from format, where %x is an xpos:
// as drawn at the narrowest pitch, and as the page's script spreads it.
func pathOf(format string, args ...any) (path, spread string) {
	drawn, spreads := make([]any, len(args)), make([]any, len(args))
	for i, a := range args {
		drawn[i], spreads[i] = a, a
		if x, ok := a.(xpos); ok {
			drawn[i], spreads[i] = x.px, x.spread()
		}
	}
	return fmt.Sprintf(strings.ReplaceAll(format, "%x", "%d"), drawn...), fmt.Sprintf(strings.ReplaceAll(format, "%x", "%s"), spreads...)
}

// curve is an SVG path from (x1, y1) to (x2, y2), leaving and arriving
// level.
func curve(x1 xpos, y1 int, x2 xpos, y2 int) (path, spread string) {
	return pathOf("M%x %d C%x %d %x %d %x %d", x1, y1, x1.add(colGap/2), y1, x2.add(-colGap/2), y2, x2, y2)
}

func kindOf(e PageEdge) string {
	if e.Apply {
		return "apply"
	}
	return "plan"
}

// shorten cuts s to n characters, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func panelOf(u PageUnit, key string) panelView {
	pv := panelView{Key: key, Name: u.Name, Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack, Status: statusOf(u), Fill: fillOf(u)}
	switch {
	case u.Drift == historyDrifted && !u.DriftedSince.IsZero():
		pv.Drift = "drifted since " + u.DriftedSince.UTC().Format(time.RFC3339)
	case u.Drift != "":
		pv.Drift = strings.ReplaceAll(string(u.Drift), "_", " ")
	}
	for _, r := range u.Recent {
		pv.Recent = append(pv.Recent, recentView{At: r.StartedAt.UTC().Format(time.RFC3339), Command: r.Command, Status: string(r.Status),
			Fill: historyFill(r.Status), Took: r.Took.Round(100 * time.Millisecond).String()})
	}
	if u.Run == nil {
		return pv
	}
	pv.HasRun = true
	pv.Reason = u.Run.Note()
	if c, ok := u.Run.PlanChanges(); ok {
		pv.Changes = c.String()
	}
	pv.Command = u.Command
	if !u.RunStartedAt.IsZero() {
		pv.At = u.RunStartedAt.UTC().Format(time.RFC3339)
	}
	log := strings.TrimSpace(u.Log)
	if len(log) > PageLogLimit {
		log = strings.ToValidUTF8(log[:PageLogLimit], "")
		pv.LogNote = fmt.Sprintf("cut at %d KiB of %d KiB", PageLogLimit>>10, len(u.Log)>>10)
	} else if u.LogCut {
		pv.LogNote = "cut when it was recorded"
	}
	pv.Log = log
	return pv
}

type ganttView struct {
	Command, Started, Took string
	Width, Height          int
	LabelW                 int
	Rows                   []ganttRow
	Ticks                  []ganttTick
}

type ganttRow struct {
	Name, Key string
	Y, TextY  int
	Bars      []ganttBar
	// Waits are the times the unit waited between two of its steps, a
	// second or more: at a prompt, or for its apply gates.
	Waits []ganttBar
}

type ganttBar struct {
	Step, Title, Fill string
	X, Y, W           int
}

type ganttTick struct {
	X     int
	Label string
}

// layoutGantt draws the last run: the units whose last run is the latest
// one recorded, a bar per step from its start to its end. nil when no
// unit's run has steps.
func layoutGantt(p *GraphPage) *ganttView {
	var latest time.Time
	for _, u := range p.Units {
		if u.Run != nil && u.RunStartedAt.After(latest) {
			latest = u.RunStartedAt
		}
	}
	var units []PageUnit
	var steps []StepReport
	for _, u := range p.Units {
		if u.Run != nil && u.RunStartedAt.Equal(latest) && len(u.Run.Steps) > 0 {
			units = append(units, u)
			steps = append(steps, u.Run.Steps...)
		}
	}
	if len(units) == 0 {
		return nil
	}
	sort.SliceStable(units, func(i, j int) bool {
		a, _ := Span(units[i].Run.Steps)
		b, _ := Span(units[j].Run.Steps)
		return a.Before(b)
	})
	t0, t1 := Span(steps)
	span := max(t1.Sub(t0), time.Millisecond)
	x := func(t time.Time) int { return ganttLabelW + int(float64(ganttPlotW)*float64(t.Sub(t0))/float64(span)) }
	g := &ganttView{Command: units[0].Command, Started: latest.UTC().Format(time.RFC3339), Took: span.Round(time.Millisecond).String(),
		Width: ganttLabelW + ganttPlotW + margin, LabelW: ganttLabelW}
	for i := 0; i <= 4; i++ {
		g.Ticks = append(g.Ticks, ganttTick{X: ganttLabelW + ganttPlotW*i/4, Label: (span * time.Duration(i) / 4).Round(time.Millisecond).String()})
	}
	for i, u := range units {
		y := 24 + i*ganttRowH
		row := ganttRow{Name: shorten(u.Name, 40), Y: y, TextY: y + 15}
		for _, s := range u.Run.Steps {
			x1, x2 := x(s.StartedAt), x(s.FinishedAt)
			row.Bars = append(row.Bars, ganttBar{Step: s.Name, X: x1, Y: y + 2, W: max(x2-x1, 2), Fill: stepFill(s),
				Title: fmt.Sprintf("%s %s: %s", u.Name, s.Name, s.FinishedAt.Sub(s.StartedAt).Round(time.Millisecond))})
		}
		for _, w := range waits(u.Run.Steps) {
			x1, x2 := x(w[0]), x(w[1])
			row.Waits = append(row.Waits, ganttBar{Step: "wait", X: x1, Y: y + 9, W: max(x2-x1, 2),
				Title: fmt.Sprintf("%s waited %s (at a prompt, or for its apply gates)", u.Name, w[1].Sub(w[0]).Round(time.Second))})
		}
		g.Rows = append(g.Rows, row)
		g.Height = y + ganttRowH + margin
	}
	return g
}

// waits are the gaps of a second or more between a unit's steps, each
// from the end of what ran before to the start of what ran next.
func waits(steps []StepReport) [][2]time.Time {
	sorted := append([]StepReport(nil), steps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].StartedAt.Before(sorted[j].StartedAt) })
	var out [][2]time.Time
	var end time.Time
	for _, s := range sorted {
		if !end.IsZero() && s.StartedAt.Sub(end) >= time.Second {
			out = append(out, [2]time.Time{end, s.StartedAt})
		}
		if s.FinishedAt.After(end) {
			end = s.FinishedAt
		}
	}
	return out
}

// stepFill colours a step by what it is, red when it failed.
func stepFill(s StepReport) string {
	if !s.OK {
		return "#cf222e"
	}
	switch s.Name {
	case "init":
		return "#8250df"
	case "plan":
		return "#0969da"
	case "apply", "destroy":
		return "#2da44e"
	}
	return "#6e7781"
}
