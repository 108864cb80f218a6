package report

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"
)

// mermaidLimit is the most units the summary draws: a bigger DAG is
// unreadable as a picture (`strata graph` prints it whole).
const mermaidLimit = 120

// statusColours fill a unit's box by how it ended.
var statusColours = []struct {
	status Status
	fill   string
}{
	// What ended well is green, each end a shade of its own: applied,
	// destroyed, a command that only reads succeeded.
	{StatusApplied, "#2da44e"}, {StatusDestroyed, "#116329"}, {StatusSucceeded, "#1b7c83"},
	{StatusNoChanges, "#8c959f"}, {StatusPlanned, "#bf8700"}, {StatusBlocked, "#8250df"},
	{StatusDeferred, "#0969da"},
	{StatusFailed, "#cf222e"}, {StatusDenied, "#cf222e"}, {StatusMissing, "#cf222e"},
	{StatusSkipped, "#6e7781"}, {StatusCancelled, "#6e7781"},
}

// Mermaid is the run's DAG as a Mermaid flowchart, which GitHub and
// GitLab draw (docs/behaviour.md#summary): a box per unit filled by its
// status, an edge where one waits for another, and the critical path (the
// chain whose units took longest end to end) drawn bold. When a unit waits
// for a stack (AfterStacks), the units are grouped in a subgraph per
// stack and the rule is one edge between two subgraphs. "" when the run
// has no edges or more units than the picture can hold.
func (rep *Report) Mermaid() string {
	units := append([]*UnitReport(nil), rep.Units...)
	if len(units) < 2 || len(units) > mermaidLimit {
		return ""
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].Order < units[j].Order })
	node := make(map[string]string, len(units))
	stackOf := make(map[string]string, len(units))
	sub := map[string]string{}
	var stackNames []string
	for i, u := range units {
		node[u.ID()] = fmt.Sprintf("u%d", i)
		stackOf[u.ID()] = u.Stack
		if _, ok := sub[u.Stack]; !ok {
			sub[u.Stack] = fmt.Sprintf("s%d", len(stackNames))
			stackNames = append(stackNames, u.Stack)
		}
	}
	type edge struct{ from, to string }
	var edges, stackEdges []edge
	seen, unitEdge := map[edge]bool{}, map[edge]bool{}
	for _, u := range units {
		for _, a := range u.After {
			if _, ok := node[a]; ok {
				edges = append(edges, edge{a, u.ID()})
				unitEdge[edge{a, u.ID()}] = true
			}
		}
		for _, s := range u.AfterStacks {
			e := edge{s, u.Stack}
			if _, ok := sub[s]; ok && s != u.Stack && !seen[e] {
				seen[e] = true
				stackEdges = append(stackEdges, e)
			}
		}
	}
	if len(edges)+len(stackEdges) == 0 {
		return ""
	}
	crit, _ := criticalPath(units)
	var b strings.Builder
	b.WriteString("```mermaid\nflowchart LR\n")
	box := func(indent string, u *UnitReport) {
		fmt.Fprintf(&b, "%s%s[\"%s<br/>%s\"]:::%s\n", indent, node[u.ID()], mermaidText(u.Name()), u.Status, u.Status)
	}
	if len(stackEdges) == 0 {
		for _, u := range units {
			box("  ", u)
		}
	} else {
		for _, name := range stackNames {
			fmt.Fprintf(&b, "  subgraph %s[\"%s\"]\n", sub[name], mermaidText(name))
			for _, u := range units {
				if u.Stack == name {
					box("    ", u)
				}
			}
			b.WriteString("  end\n")
		}
	}
	for _, e := range edges {
		arrow := "-->"
		if from, on := crit[e.to]; on && from == e.from {
			arrow = "==>"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", node[e.from], arrow, node[e.to])
	}
	// A stack edge is bold when the path goes from a unit of one stack to
	// a unit of the other over it.
	onPath := map[edge]bool{}
	for to, from := range crit {
		if from != "" && stackOf[from] != stackOf[to] && !unitEdge[edge{from, to}] {
			onPath[edge{stackOf[from], stackOf[to]}] = true
		}
	}
	for _, e := range stackEdges {
		arrow := "-->"
		if onPath[e] {
			arrow = "==>"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", sub[e.from], arrow, sub[e.to])
	}
	// A class per status the picture has, none for the others: the block
	// stays short where Mermaid is not drawn.
	used := map[Status]bool{}
	for _, u := range units {
		used[u.Status] = true
	}
	for _, c := range statusColours {
		if used[c.status] {
			fmt.Fprintf(&b, "  classDef %s fill:%s,color:#fff,stroke:#24292f\n", c.status, c.fill)
		}
	}
	var critical []string
	for _, u := range units {
		if _, on := crit[u.ID()]; on {
			critical = append(critical, node[u.ID()])
		}
	}
	if len(critical) > 1 {
		fmt.Fprintf(&b, "  classDef critical stroke-width:4px\n  class %s critical\n", strings.Join(critical, ","))
	}
	b.WriteString("```\n")
	return b.String()
}

// criticalPath is the chain of units, each waiting for the one before,
// that took longest end to end. A unit waited for one it comes after when
// its last step started once that one's last step had ended: an edge a
// command does not wait on (a plan does not wait for an apply_after
// producer's apply) is no link, and a unit that ran nothing is on no
// chain. Each unit of a chain counts from its first step's start, or the
// end of the one before when that is later, to its last step's end, so a
// chain is never longer than the time from its first start to its last
// end. A unit waits for the units it comes after (After) and for every
// unit of the stacks it comes after (AfterStacks). It maps each unit of
// the chain to the one before it ("" for the first), and says how long the
// chain took.
func criticalPath(units []*UnitReport) (map[string]string, time.Duration) {
	byID := make(map[string]*UnitReport, len(units))
	ofStack := map[string][]string{}
	for _, u := range units {
		byID[u.ID()] = u
		if len(u.Steps) > 0 {
			ofStack[u.Stack] = append(ofStack[u.Stack], u.ID())
		}
	}
	total := map[string]time.Duration{}
	prev := map[string]string{}
	// ends[s]: the units of stack s by when they ended, built when a unit
	// first waits for s, every unit of s behind it in DAG order.
	ends := map[string]*stackEnds{}
	var last string
	// units come in DAG order: every unit after what it waits for.
	for _, u := range units {
		if len(u.Steps) == 0 {
			continue
		}
		id := u.ID()
		started, finished := Span(u.Steps)
		best, from := finished.Sub(started), ""
		// A tie goes to the chain: the unit waited for it.
		take := func(t time.Duration, a string) {
			if t > best || t == best && from == "" {
				best, from = t, a
			}
		}
		for _, a := range u.After {
			au, ok := byID[a]
			if !ok || len(au.Steps) == 0 {
				continue
			}
			_, aFinished := Span(au.Steps)
			if lastStart(u.Steps).Before(aFinished) {
				continue
			}
			take(total[a]+finished.Sub(later(started, aFinished)), a)
		}
		for _, st := range u.AfterStacks {
			if st == u.Stack || len(ofStack[st]) == 0 {
				continue
			}
			if ends[st] == nil {
				ends[st] = newStackEnds(ofStack[st], byID, total)
			}
			if t, a, ok := ends[st].best(started, lastStart(u.Steps), finished); ok {
				take(t, a)
			}
		}
		total[id], prev[id] = best, from
		if last == "" || total[id] > total[last] {
			last = id
		}
	}
	path := map[string]string{}
	for id := last; id != ""; id = prev[id] {
		path[id] = prev[id]
	}
	return path, total[last]
}

// stackEnds are the units of a stack sorted by when they ended, so that
// the best link into a unit waiting for the whole stack is found without
// looking at each of its units: a unit of the stack that ended by the
// waiting one's start adds its chain and the waiting one's whole time
// (the most total, a prefix), one that ended later but before the
// waiting one's last step started its chain and the time from its end
// (the most total less end, a range of a sparse table).
type stackEnds struct {
	ids   []string
	ended []time.Time
	total []time.Duration
	// most[k]: the index of the most total among the first k+1.
	most []int
	// table[j][i]: the index of the most total less end among i to
	// i+2^j-1.
	table [][]int
}

func newStackEnds(ids []string, byID map[string]*UnitReport, total map[string]time.Duration) *stackEnds {
	e := &stackEnds{ids: append([]string(nil), ids...)}
	end := func(id string) time.Time { _, f := Span(byID[id].Steps); return f }
	sort.SliceStable(e.ids, func(i, j int) bool { return end(e.ids[i]).Before(end(e.ids[j])) })
	n := len(e.ids)
	e.ended, e.total, e.most = make([]time.Time, n), make([]time.Duration, n), make([]int, n)
	for i, id := range e.ids {
		e.ended[i], e.total[i] = end(id), total[id]
		e.most[i] = i
		if i > 0 && e.total[e.most[i-1]] >= e.total[i] {
			e.most[i] = e.most[i-1]
		}
	}
	row := make([]int, n)
	for i := range row {
		row[i] = i
	}
	e.table = [][]int{row}
	for w := 2; w <= n; w *= 2 {
		prevRow, half := e.table[len(e.table)-1], w/2
		row := make([]int, n-w+1)
		for i := range row {
			row[i] = e.better(prevRow[i], prevRow[i+half])
		}
		e.table = append(e.table, row)
	}
	return e
}

// better is whichever of units i and j has the more total less end, i on
// a tie.
func (e *stackEnds) better(i, j int) int {
	if e.total[j]-e.ended[j].Sub(e.ended[0]) > e.total[i]-e.ended[i].Sub(e.ended[0]) {
		return j
	}
	return i
}

// best is the longest chain through a unit of the stack into a unit that
// started at started, started its last step at lastStart and ended at
// finished, and that unit; ok is false when no unit of the stack ended
// by lastStart.
func (e *stackEnds) best(started, lastStart, finished time.Time) (time.Duration, string, bool) {
	byStart := sort.Search(len(e.ended), func(i int) bool { return e.ended[i].After(started) })
	byLast := sort.Search(len(e.ended), func(i int) bool { return e.ended[i].After(lastStart) })
	t, at := time.Duration(0), -1
	if byStart > 0 {
		k := e.most[byStart-1]
		t, at = e.total[k]+finished.Sub(started), k
	}
	if lo, hi := byStart, byLast; lo < hi {
		j := bits.Len(uint(hi-lo)) - 1
		k := e.better(e.table[j][lo], e.table[j][hi-1<<j])
		if v := e.total[k] + finished.Sub(e.ended[k]); at < 0 || v > t {
			t, at = v, k
		}
	}
	if at < 0 {
		return 0, "", false
	}
	return t, e.ids[at], true
}

// lastStart is when the last of steps started.
func lastStart(steps []StepReport) time.Time {
	var t time.Time
	for _, s := range steps {
		if s.StartedAt.After(t) {
			t = s.StartedAt
		}
	}
	return t
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// took is the unit's time from its first step's start to its last step's
// end.
func (u *UnitReport) took() time.Duration {
	started, finished := Span(u.Steps)
	return finished.Sub(started)
}

// ran is the unit's own running time: the time some step of it ran, each
// moment once. took less ran is the time it waited between its steps, at
// a prompt or for its apply gates.
func (u *UnitReport) ran() time.Duration {
	steps := slices.Clone(u.Steps)
	slices.SortFunc(steps, func(a, b StepReport) int { return a.StartedAt.Compare(b.StartedAt) })
	var total time.Duration
	var end time.Time
	for _, s := range steps {
		start := s.StartedAt
		if start.Before(end) {
			start = end
		}
		if s.FinishedAt.After(start) {
			total += s.FinishedAt.Sub(start)
			end = s.FinishedAt
		}
	}
	return total
}

// Span is when the first of steps started and the last finished; zero
// times for no steps.
func Span(steps []StepReport) (started, finished time.Time) {
	for _, s := range steps {
		if started.IsZero() || s.StartedAt.Before(started) {
			started = s.StartedAt
		}
		if s.FinishedAt.After(finished) {
			finished = s.FinishedAt
		}
	}
	return started, finished
}

// mermaidText is a name inside a quoted Mermaid label: quotes and markup
// characters as entities.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "`", "#96;", "|", "#124;").Replace(s)
}

// dagBlock is the DAG in a collapsed block, for the summary and the
// comment; "" when there is none to draw.
func (rep *Report) dagBlock() string {
	m := rep.Mermaid()
	if m == "" {
		return ""
	}
	return "<details><summary>DAG (the critical path in bold)</summary>\n\n" + m + "\n</details>\n\n"
}
