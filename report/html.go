package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
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
	Layer                           int
	// Run is the unit's report in its last run; nil when none is recorded.
	Run *UnitReport
	// Command is the command of that run, and RunStartedAt when it began.
	Command      string
	RunStartedAt time.Time
	// Log is the unit's engine output in that run, masked; LogCut says it
	// was already cut when it was recorded.
	Log    string
	LogCut bool
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

var graphTemplate = template.Must(template.New("graph").Parse(graphHTML))

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
	Width, Height int
	Stacks        []stackView
	Nodes         []nodeView
	Edges         []edgeView
	StackEdges    []stackEdgeView
}

// stackView is a stack's box around its units.
type stackView struct {
	Name, Full string
	X, Y, W, H int
}

// stackEdgeView is a rule between two stacks, a path between their
// boxes with the rule written at its middle.
type stackEdgeView struct {
	edgeView
	Via            string
	LabelX, LabelY int
}

type nodeView struct {
	Key, Name, Full, Status, Fill, Text string
	X, Y, W, H                          int
}

type edgeView struct {
	Path, Title string
	Apply       bool
}

type legendEntry struct{ Status, Fill string }

type panelView struct {
	Key, Name, Dir, Workspace, Stack string
	Status, Fill, Reason, Changes    string
	Command, At, Log, LogNote        string
	HasRun                           bool
}

// WriteGraphHTML writes the page: one HTML file with no external
// resources, every name and output escaped as text.
func WriteGraphHTML(w io.Writer, p *GraphPage) error {
	v := pageView{Units: len(p.Units), Edges: len(p.Edges), StackEdges: len(p.StackEdges), Legend: legend()}
	keys := make(map[string]string, len(p.Units))
	for i, u := range p.Units {
		keys[u.ID] = fmt.Sprintf("u%d", i)
	}
	v.DAG = layoutDAG(p, keys)
	v.Gantt = layoutGantt(p)
	for _, u := range p.Units {
		v.Panels = append(v.Panels, panelOf(u, keys[u.ID]))
	}
	if err := graphTemplate.Execute(w, v); err != nil {
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

// layoutDAG puts each layer in a column and each stack's units in a box
// spanning its columns, the boxes of stacks sharing a column stacked one
// under the other. It draws an edge between units from the right of one
// box to the left of the other, and a rule between stacks once, from the
// right of one stack's box to the left of the other's.
func layoutDAG(p *GraphPage, keys map[string]string) dagView {
	var d dagView
	// The stacks in the order of their first column, then of their first
	// unit; each with its columns and its most units in one column.
	type band struct {
		name           string
		first, last, y int
		rows           map[int]int
	}
	var bands []*band
	bandOf := map[string]*band{}
	for _, u := range p.Units {
		b := bandOf[u.Stack]
		if b == nil {
			b = &band{name: u.Stack, first: u.Layer, last: u.Layer, rows: map[int]int{}}
			bandOf[u.Stack] = b
			bands = append(bands, b)
		}
		b.first, b.last = min(b.first, u.Layer), max(b.last, u.Layer)
		b.rows[u.Layer]++
	}
	sort.SliceStable(bands, func(i, j int) bool { return bands[i].first < bands[j].first })
	// free[c]: the first y below every box placed in column c.
	free := map[int]int{}
	boxes := make(map[string]stackView, len(bands))
	for _, b := range bands {
		b.y = margin
		height := 0
		for c := b.first; c <= b.last; c++ {
			b.y = max(b.y, free[c])
			height = max(height, b.rows[c])
		}
		h := stackHead + height*(nodeH+rowGap) - rowGap + 2*stackPad
		for c := b.first; c <= b.last; c++ {
			free[c] = b.y + h + stackGap
		}
		box := stackView{Name: shorten(b.name, 28+(b.last-b.first)*36), Full: b.name,
			X: margin + b.first*(nodeW+colGap), Y: b.y, W: (b.last-b.first)*(nodeW+colGap) + nodeW + 2*stackPad, H: h}
		boxes[b.name] = box
		d.Stacks = append(d.Stacks, box)
		d.Width = max(d.Width, box.X+box.W+margin)
		d.Height = max(d.Height, box.Y+box.H+margin)
	}
	rows := map[string]map[int]int{}
	pos := make(map[string][2]int, len(p.Units))
	for _, u := range p.Units {
		b := bandOf[u.Stack]
		if rows[u.Stack] == nil {
			rows[u.Stack] = map[int]int{}
		}
		x := margin + u.Layer*(nodeW+colGap) + stackPad
		y := b.y + stackHead + stackPad + rows[u.Stack][u.Layer]*(nodeH+rowGap)
		rows[u.Stack][u.Layer]++
		pos[u.ID] = [2]int{x, y}
		text := "#fff"
		if u.Run == nil {
			text = "#24292f"
		}
		d.Nodes = append(d.Nodes, nodeView{Key: keys[u.ID], Name: shorten(u.Name, 28), Full: u.ID, Status: statusOf(u),
			Fill: fillOf(u), Text: text, X: x, Y: y, W: nodeW, H: nodeH})
	}
	for _, e := range p.Edges {
		from, okf := pos[e.From]
		to, okt := pos[e.To]
		if !okf || !okt {
			continue
		}
		x1, y1 := from[0]+nodeW, from[1]+nodeH/2
		x2, y2 := to[0]-4, to[1]+nodeH/2
		d.Edges = append(d.Edges, edgeView{Path: curve(x1, y1, x2, y2), Apply: e.Apply,
			Title: fmt.Sprintf("%s -> %s (%s, %s)", e.From, e.To, kindOf(e), e.Via)})
	}
	for _, e := range p.StackEdges {
		from, okf := boxes[e.From]
		to, okt := boxes[e.To]
		if !okf || !okt {
			continue
		}
		x1, y1 := from.X+from.W, from.Y+from.H/2
		x2, y2 := to.X-4, to.Y+to.H/2
		path, labelX, labelY := curve(x1, y1, x2, y2), (x1+x2)/2, min(y1, y2)-8
		// Over columns between the two boxes, the edge runs under every
		// box in them, down and up again in the gaps beside its ends.
		if a, b := bandOf[e.From].last+1, bandOf[e.To].first; a < b {
			low := 0
			for c := a; c < b; c++ {
				low = max(low, free[c])
			}
			if low > 0 {
				g := (colGap - 2*stackPad) / 2
				path = fmt.Sprintf("M%d %d C%d %d %d %d %d %d L%d %d C%d %d %d %d %d %d",
					x1, y1, x1+g/2, y1, x1+g/2, low, x1+g, low, x2-g, low, x2-g/2, low, x2-g/2, y2, x2, y2)
				labelY = low - 6
				d.Height = max(d.Height, low+margin)
			}
		}
		d.StackEdges = append(d.StackEdges, stackEdgeView{
			edgeView: edgeView{Path: path, Apply: e.Apply,
				Title: fmt.Sprintf("stack %s -> stack %s (%s, %s): every unit of %s waits for every unit of %s", e.From, e.To, kindOf(e), e.Via, e.To, e.From)},
			Via: e.Via, LabelX: labelX, LabelY: labelY})
	}
	return d
}

// curve is an SVG path from (x1, y1) to (x2, y2), leaving and arriving
// level.
func curve(x1, y1, x2, y2 int) string {
	return fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, x1+colGap/2, y1, x2-colGap/2, y2, x2, y2)
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
