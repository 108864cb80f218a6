package report

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func htmlTestPage() *GraphPage {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	step := func(name string, from, to int, ok bool) StepReport {
		return StepReport{Name: name, StartedAt: t0.Add(time.Duration(from) * time.Second), FinishedAt: t0.Add(time.Duration(to) * time.Second), OK: ok}
	}
	hostile := `<script>alert(1)</script>`
	return &GraphPage{
		Units: []PageUnit{
			{ID: "net@default#net", Name: "net@default", Dir: "net", Workspace: "default", Stack: "net", Layer: 0,
				Run:     &UnitReport{Status: StatusApplied, Steps: []StepReport{step("init", 0, 1, true), step("plan", 1, 3, true), step("apply", 3, 6, true)}},
				Command: "apply", RunStartedAt: t0, Log: "Plan: 1 to add, 0 to change, 0 to destroy.\npassword = " + hostile},
			{ID: "app" + hostile + "@default#app", Name: "app" + hostile + "@default", Dir: "app" + hostile, Workspace: "default", Stack: "app", Layer: 1,
				Run:     &UnitReport{Status: StatusFailed, Reason: "plan failed: " + hostile, Steps: []StepReport{step("init", 6, 7, true), step("plan", 7, 8, false)}},
				Command: "apply", RunStartedAt: t0, Log: strings.Repeat("x", PageLogLimit+100)},
			{ID: "old@default#old", Name: "old@default", Dir: "old", Workspace: "default", Stack: "old", Layer: 1,
				Run:     &UnitReport{Status: StatusPlanned, Steps: []StepReport{step("plan", -100, -90, true)}},
				Command: "plan", RunStartedAt: t0.Add(-time.Hour)},
			{ID: "new@default#new", Name: "new@default", Dir: "new", Workspace: "default", Stack: "new", Layer: 2},
		},
		Edges: []PageEdge{
			{From: "net@default#net", To: "app" + hostile + "@default#app", Via: "plan_after"},
			{From: "net@default#net", To: "old@default#old", Via: "depends_on"},
			{From: "app" + hostile + "@default#app", To: "new@default#new", Apply: true, Via: "apply_after"},
		},
	}
}

// TestGraphHTMLEscapes: names, reasons and output are text in the page,
// never markup, and the page loads nothing from elsewhere.
func TestGraphHTMLEscapes(t *testing.T) {
	var b bytes.Buffer
	if err := WriteGraphHTML(&b, htmlTestPage()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<script>alert") {
		t.Fatalf("a name or output was written as markup:\n%s", page)
	}
	if n := strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 5 {
		t.Errorf("the hostile text shows escaped %d times, want it in the node, panel, reason and output", n)
	}
	if strings.Count(page, "<script>") != 1 || strings.Count(page, "<script") != 1 {
		t.Errorf("want exactly the page's own script")
	}
	for _, external := range []string{"http://", "https://", "src=", "@import", "<link"} {
		for _, line := range strings.Split(page, "\n") {
			if strings.Contains(line, external) && !strings.Contains(line, `xmlns="http://www.w3.org/2000/svg"`) {
				t.Errorf("the page refers to something outside it (%s): %s", external, line)
			}
		}
	}
}

// TestGraphHTMLUnitsEdgesColours: every unit is a node filled by its last
// status, every edge is drawn (apply edges dashed), and a unit with no run
// says so.
func TestGraphHTMLUnitsEdgesColours(t *testing.T) {
	var b bytes.Buffer
	if err := WriteGraphHTML(&b, htmlTestPage()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	nodes := regexp.MustCompile(`<g class="node" data-unit="(u\d)" tabindex="0"><title>([^<]*)</title><rect [^>]*fill="([^"]+)"`).FindAllStringSubmatch(page, -1)
	want := []struct{ key, title, fill string }{
		{"u0", "net@default#net: applied", "#2da44e"},
		{"u1", "app&lt;script&gt;alert(1)&lt;/script&gt;@default#app: failed", "#cf222e"},
		{"u2", "old@default#old: planned", "#bf8700"},
		{"u3", "new@default#new: no run recorded", noRunFill},
	}
	if len(nodes) != len(want) {
		t.Fatalf("%d nodes, want %d:\n%s", len(nodes), len(want), page)
	}
	for i, w := range want {
		if nodes[i][1] != w.key || nodes[i][2] != w.title || nodes[i][3] != w.fill {
			t.Errorf("node %d = %q, want %+v", i, nodes[i][1:], w)
		}
		if !strings.Contains(page, `<section class="panel" id="`+w.key+`">`) {
			t.Errorf("no panel for %s", w.key)
		}
	}
	edges := regexp.MustCompile(`<path class="edge( apply)?" d="M[^"]+" marker-end="url\(#arrow\)" data-d="M[^"]+"><title>([^<]*)</title>`).FindAllStringSubmatch(page, -1)
	if len(edges) != 3 {
		t.Fatalf("%d edges, want 3", len(edges))
	}
	for i, e := range edges {
		if apply := e[1] != ""; apply != strings.Contains(e[2], "(apply, apply_after)") || (i == 2) != apply {
			t.Errorf("edge %d: dashed %v, title %q", i, apply, e[2])
		}
	}
	if !strings.Contains(page, "No run of this unit is recorded in the state dir.") {
		t.Error("the unit with no run does not say so")
	}
	if !strings.Contains(page, "Output cut at 32 KiB of 32 KiB.") || strings.Contains(page, strings.Repeat("x", PageLogLimit+1)) {
		t.Error("a long output is not cut with a note")
	}
}

// TestGraphHTMLGantt: the Gantt holds a bar per step of the units of the
// latest run, placed by their times, failed steps red, and leaves out a
// unit whose last run was an earlier one.
func TestGraphHTMLGantt(t *testing.T) {
	var b bytes.Buffer
	if err := WriteGraphHTML(&b, htmlTestPage()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	bars := regexp.MustCompile(`<rect class="bar" data-step="(\w+)" x="(\d+)" y="\d+" width="(\d+)" height="18" fill="([^"]+)"><title>([^<]*)</title>`).FindAllStringSubmatch(page, -1)
	want := []struct{ step, x, w, fill, title string }{
		// 8s over 760px from x=280: 95px a second.
		{"init", "280", "95", "#8250df", "net@default init: 1s"},
		{"plan", "375", "190", "#0969da", "net@default plan: 2s"},
		{"apply", "565", "285", "#2da44e", "net@default apply: 3s"},
		{"init", "850", "95", "#8250df", "app&lt;script&gt;alert(1)&lt;/script&gt;@default init: 1s"},
		{"plan", "945", "95", "#cf222e", "app&lt;script&gt;alert(1)&lt;/script&gt;@default plan: 1s"},
	}
	if len(bars) != len(want) {
		t.Fatalf("%d bars, want %d", len(bars), len(want))
	}
	for i, w := range want {
		got := bars[i][1:]
		if got[0] != w.step || got[1] != w.x || got[2] != w.w || got[3] != w.fill || got[4] != w.title {
			t.Errorf("bar %d = %q, want %+v", i, got, w)
		}
	}
	if !strings.Contains(page, "apply started 2025-01-02T03:04:05Z, steps over 8s.") {
		t.Error("the Gantt does not say which run it shows")
	}
}

// TestGraphHTMLNoRuns: a DAG with no run recorded has no Gantt and says
// why.
func TestGraphHTMLNoRuns(t *testing.T) {
	var b bytes.Buffer
	p := &GraphPage{Units: []PageUnit{{ID: "a@default#a", Name: "a@default", Dir: "a", Workspace: "default", Stack: "a"}}}
	if err := WriteGraphHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="gantt"`) || !strings.Contains(b.String(), "No run with steps is recorded in the state dir.") {
		t.Error("a page with no run draws a Gantt")
	}
}

// stacksTestPage is three stacks of seven units each, no edge between two
// units, staging planning after base and prod applying after staging.
func stacksTestPage() *GraphPage {
	p := &GraphPage{}
	for layer, stack := range []string{"base", "staging", "prod"} {
		for i := range 7 {
			dir := fmt.Sprintf("%s/u%d", stack, i)
			p.Units = append(p.Units, PageUnit{ID: dir + "@default#" + stack, Name: dir + "@default", Dir: dir, Workspace: "default", Stack: stack, Layer: layer})
		}
	}
	p.StackEdges = []PageEdge{
		{From: "base", To: "staging", Via: "plan_after"},
		{From: "staging", To: "prod", Apply: true, Via: "apply_after"},
	}
	return p
}

// TestGraphHTMLStackEdges: each stack is a box around its units, and a
// rule between stacks is one path between two boxes, dashed for an apply
// edge and titled with its rule, not a path between every unit pair.
func TestGraphHTMLStackEdges(t *testing.T) {
	var b bytes.Buffer
	if err := WriteGraphHTML(&b, stacksTestPage()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, `<g class="node"`); n != 21 {
		t.Errorf("%d units drawn, want 21", n)
	}
	boxes := regexp.MustCompile(`<g class="stackbox" data-stack="\w+" data-in=""><title>stack (\w+)</title><rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"`).FindAllStringSubmatch(page, -1)
	if len(boxes) != 3 || boxes[0][1] != "base" || boxes[1][1] != "staging" || boxes[2][1] != "prod" {
		t.Fatalf("stack boxes: %q", boxes)
	}
	if n := strings.Count(page, "<path "); n != 2+2 {
		// The two markers' arrow heads and the two rules.
		t.Errorf("%d paths, want the 2 rules and the 2 arrow heads:\n%s", n, page)
	}
	edges := regexp.MustCompile(`<path class="edge stack( apply)?" d="M(\d+) (\d+) [^"]* (\d+) (\d+)" marker-end="url\(#stackarrow\)" data-d="[^"]+"><title>([^<]*)</title></path><text class="rule"[^>]*>(\w+)</text>`).FindAllStringSubmatch(page, -1)
	want := []struct{ apply, title, via string }{
		{"", "stack base -&gt; stack staging (plan, plan_after): every unit of staging waits for every unit of base", "plan_after"},
		{" apply", "stack staging -&gt; stack prod (apply, apply_after): every unit of prod waits for every unit of staging", "apply_after"},
	}
	if len(edges) != len(want) {
		t.Fatalf("%d stack edges, want %d", len(edges), len(want))
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	for i, w := range want {
		e := edges[i]
		if e[1] != w.apply || e[6] != w.title || e[7] != w.via {
			t.Errorf("stack edge %d = %q, want %+v", i, e[1:], w)
		}
		// From the right side of one box to the left side of the next.
		from, to := boxes[i], boxes[i+1]
		if x1, x2 := atoi(e[2]), atoi(e[4]); x1 != atoi(from[2])+atoi(from[4]) || x2 != atoi(to[2])-4 {
			t.Errorf("stack edge %d runs from x %d to %d, want from box %q to box %q", i, x1, x2, from[1:], to[1:])
		}
	}
	if !strings.Contains(page, "21 units; edges: 0 between units, 2 between stacks.") {
		t.Error("the page does not count the stack edges")
	}
}

// TestGraphHTMLStackBoxesApart: stacks sharing a column get boxes one
// under the other, each holding its units.
func TestGraphHTMLStackBoxesApart(t *testing.T) {
	p := &GraphPage{Units: []PageUnit{
		{ID: "a1@default#a", Name: "a1", Stack: "a", Layer: 0},
		{ID: "b1@default#b", Name: "b1", Stack: "b", Layer: 0},
		{ID: "a2@default#a", Name: "a2", Stack: "a", Layer: 1},
		{ID: "c1@default#c", Name: "c1", Stack: "c", Layer: 1},
	}}
	keys := map[string]string{}
	for i, u := range p.Units {
		keys[u.ID] = fmt.Sprintf("u%d", i)
	}
	d := layoutDAG(p, keys)
	if len(d.Stacks) != 3 {
		t.Fatalf("%d boxes, want 3", len(d.Stacks))
	}
	box := map[string]stackView{}
	for _, s := range d.Stacks {
		box[s.Full] = s
	}
	overlap := func(a, b stackView) bool {
		return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
	}
	for _, pair := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "c"}} {
		if overlap(box[pair[0]], box[pair[1]]) {
			t.Errorf("boxes %s %+v and %s %+v overlap", pair[0], box[pair[0]], pair[1], box[pair[1]])
		}
	}
	for i, n := range d.Nodes {
		b := box[p.Units[i].Stack]
		if n.X < b.X || n.X+n.W > b.X+b.W || n.Y < b.Y || n.Y+n.H > b.Y+b.H {
			t.Errorf("unit %s %+v is outside its stack's box %+v", n.Full, n, b)
		}
	}
}

// TestGraphHTMLStackEdgeAround: a rule between stacks with columns
// between them runs under the boxes in those columns, not through them.
func TestGraphHTMLStackEdgeAround(t *testing.T) {
	p := &GraphPage{
		Units: []PageUnit{
			{ID: "a@default#a", Name: "a", Stack: "a", Layer: 0},
			{ID: "b@default#b", Name: "b", Stack: "b", Layer: 1},
			{ID: "c@default#c", Name: "c", Stack: "c", Layer: 2},
		},
		StackEdges: []PageEdge{{From: "a", To: "b", Via: "plan_after"}, {From: "b", To: "c", Via: "plan_after"}, {From: "a", To: "c", Via: "prerequisite"}},
	}
	d := layoutDAG(p, map[string]string{})
	if len(d.StackEdges) != 3 {
		t.Fatalf("%d stack edges, want 3", len(d.StackEdges))
	}
	b := d.Stacks[1]
	m := regexp.MustCompile(` L(\d+) (\d+) `).FindStringSubmatch(d.StackEdges[2].Path)
	if m == nil {
		t.Fatalf("the edge over b is %q, want it to run under b", d.StackEdges[2].Path)
	}
	if y, _ := strconv.Atoi(m[2]); y <= b.Y+b.H || y+margin > d.Height {
		t.Errorf("the edge runs at y %d, want it under b (bottom %d) and inside the picture (%d high)", y, b.Y+b.H, d.Height)
	}
	for _, e := range d.StackEdges[:2] {
		if strings.Contains(e.Path, " L") {
			t.Errorf("an edge between neighbouring columns goes around: %q", e.Path)
		}
	}
}

// TestGraphHTMLMarksWaiting: the timeline marks the time a unit waited
// between its plan and its apply (a prompt, its apply gates), a second or
// more, apart from its steps.
func TestGraphHTMLMarksWaiting(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	step := func(name string, from, to int) StepReport {
		return StepReport{Name: name, StartedAt: t0.Add(time.Duration(from) * time.Second), FinishedAt: t0.Add(time.Duration(to) * time.Second), OK: true}
	}
	page := &GraphPage{Units: []PageUnit{
		{ID: "a@default#a", Name: "a@default", Dir: "a", Workspace: "default", Stack: "a", Command: "apply", RunStartedAt: t0,
			Run: &UnitReport{Status: StatusApplied, Steps: []StepReport{step("init", 0, 1), step("plan", 1, 3), step("apply", 33, 35)}}},
		{ID: "b@default#b", Name: "b@default", Dir: "b", Workspace: "default", Stack: "b", Command: "apply", RunStartedAt: t0,
			Run: &UnitReport{Status: StatusApplied, Steps: []StepReport{step("plan", 0, 2), step("apply", 2, 3)}}},
	}}
	var b bytes.Buffer
	if err := WriteGraphHTML(&b, page); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, `<rect class="wait"`); n != 1 || !strings.Contains(out, "<title>a@default waited 30s (at a prompt, or for its apply gates)</title>") {
		t.Errorf("%d waits marked:\n%s", n, out)
	}
}

// nestedTestPage is a page of units, one per leaf stack, each leaf given
// as its stack path "top/…/leaf" in the layer given.
func nestedTestPage(leaves map[string]int, rules ...string) *GraphPage {
	p := &GraphPage{}
	names := make([]string, 0, len(leaves))
	for path := range leaves {
		names = append(names, path)
	}
	sort.Strings(names)
	for _, path := range names {
		parts := strings.Split(path, "/")
		leaf := parts[len(parts)-1]
		p.Units = append(p.Units, PageUnit{ID: leaf + "@default#" + leaf, Name: leaf + "@default", Dir: leaf, Workspace: "default",
			Stack: leaf, StackPath: parts, Layer: leaves[path]})
	}
	for _, r := range rules {
		from, to, _ := strings.Cut(r, "->")
		e := PageEdge{From: from, To: to, Via: "plan_after"}
		if strings.HasSuffix(to, "!") {
			e.To, e.Apply, e.Via = strings.TrimSuffix(to, "!"), true, "apply_after"
		}
		p.StackEdges = append(p.StackEdges, e)
	}
	return p
}

// TestGraphHTMLNestedRules: a rule between two leaves is drawn between
// the outermost boxes holding them for which every leaf of one waits for
// every leaf of the other, once however many leaf rules come to it.
func TestGraphHTMLNestedRules(t *testing.T) {
	t.Parallel()
	nested := map[string]int{"base": 0, "dev/dn": 1, "dev/dd": 2, "dev/ds": 3, "prod/pn": 4, "prod/pd": 5, "prod/ps": 6}
	for _, tc := range []struct {
		name   string
		leaves map[string]int
		rules  []string
		want   []string
	}{
		{"a rule on a nested stack between its box and the other's",
			nested, []string{"dn->dd", "base->dn", "dd->ds", "pn->pd", "base->pn", "ds->pn!", "pd->ps"},
			[]string{"dn->dd", "base->dev", "dd->ds", "pn->pd", "base->prod", "dev->prod!", "pd->ps"}},
		{"a rule that holds for one leaf of a nested stack stays between leaves",
			map[string]int{"a/a1": 0, "a/a2": 0, "b/b1": 1, "b/b2": 1}, []string{"a1->b1"},
			[]string{"a1->b1"}},
		{"the box it goes into whole, from the leaf it comes from",
			map[string]int{"a/a1": 0, "a/a2": 0, "b/b1": 1, "b/b2": 2}, []string{"a1->b1", "b1->b2"},
			[]string{"a1->b", "b1->b2"}},
		{"two leaf rules to one pair of boxes drawn once",
			map[string]int{"a/a1": 0, "a/a2": 0, "c": 1}, []string{"a1->c", "a2->c"},
			[]string{"a->c"}},
		{"deeper nesting lifts to the outermost boxes it holds for",
			map[string]int{"x/y/y1": 0, "x/y/y2": 0, "x/z": 1, "w": 2}, []string{"y1->z", "y2->z", "z->w"},
			[]string{"y->z", "x->w"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := layoutDAG(nestedTestPage(tc.leaves, tc.rules...), map[string]string{})
			var got []string
			for _, e := range d.StackEdges {
				m := regexp.MustCompile(`^stack (\S+) -> stack (\S+) `).FindStringSubmatch(e.Title)
				s := m[1] + "->" + m[2]
				if e.Apply {
					s += "!"
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("rules drawn %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGraphHTMLNestedBoxes: a nested stack's box holds its children's
// boxes, drawn before them, and a leaf's box its units; boxes side by side
// in one parent do not overlap.
func TestGraphHTMLNestedBoxes(t *testing.T) {
	t.Parallel()
	p := nestedTestPage(map[string]int{"base": 0, "dev/dn": 1, "dev/dd": 2, "dev/ds": 3, "prod/pn": 4, "prod/pd": 5, "prod/ps": 6,
		"dev/extra": 1, "x/y/z": 2})
	d := layoutDAG(p, map[string]string{})
	box := map[string]stackView{}
	at := map[string]int{}
	for i, s := range d.Stacks {
		box[s.Full], at[s.Full] = s, i
	}
	inside := func(a, b stackView) bool {
		return a.X > b.X && a.X+a.W < b.X+b.W && a.Y > b.Y && a.Y+a.H < b.Y+b.H
	}
	want := map[string]string{"base": "", "dev": "", "prod": "", "x": "", "y": "x", "z": "y",
		"dn": "dev", "dd": "dev", "ds": "dev", "extra": "dev", "pn": "prod", "pd": "prod", "ps": "prod"}
	if len(d.Stacks) != len(want) {
		t.Fatalf("%d boxes, want %d: %+v", len(d.Stacks), len(want), d.Stacks)
	}
	for name, parent := range want {
		b := box[name]
		if b.Parent != parent {
			t.Errorf("box %s is in %q, want %q", name, b.Parent, parent)
		}
		if parent != "" && (!inside(b, box[parent]) || at[parent] > at[name]) {
			t.Errorf("box %s %+v is not inside its parent %s %+v, drawn after it", name, b, parent, box[parent])
		}
	}
	if a, b := box["dn"], box["extra"]; a.Y+a.H > b.Y && b.Y+b.H > a.Y {
		t.Errorf("dn %+v and extra %+v in one column overlap", a, b)
	}
	for i, n := range d.Nodes {
		b := box[p.Units[i].Stack]
		if n.X < b.X || n.X+n.W > b.X+b.W || n.Y < b.Y || n.Y+n.H > b.Y+b.H {
			t.Errorf("unit %s %+v is outside its stack's box %+v", n.Full, n, b)
		}
	}
	if d.Columns != 7 {
		t.Errorf("%d columns, want 7", d.Columns)
	}
}

// TestHistoryHTML: the history page draws a bar per run and a chart per
// unit, escapes every name as text and refers to nothing outside it.
func TestHistoryHTML(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hostile := "<script>alert(1)</script>"
	page := &HistoryPage{
		Runs: []HistoryRun{
			{Command: "drift", Actor: hostile, StartedAt: t0.Add(time.Hour), FinishedAt: t0.Add(time.Hour + time.Minute), ExitCode: 2,
				Counts: map[Status]int{"drifted": 1, "in_sync": 2}},
			{Command: "apply", Commit: "0123456789abcdef", StartedAt: t0, FinishedAt: t0.Add(time.Minute), Counts: map[Status]int{StatusApplied: 3}},
		},
		Units: []HistoryUnit{
			{ID: hostile + "@default#default", Status: "drifted", Drift: "drifted", DriftedSince: t0.Add(time.Hour), Runs: []HistoryUnitRun{
				{StartedAt: t0.Add(time.Hour), Command: "drift", Status: "drifted", Steps: []HistoryStep{{Name: "plan", Took: 2 * time.Second}}},
				{StartedAt: t0, Command: "apply", Status: StatusApplied, Steps: []HistoryStep{{Name: "init", Took: time.Second}, {Name: "apply", Took: time.Second}}},
			}},
			{ID: "b@default#default"},
		},
	}
	var b bytes.Buffer
	if err := WriteHistoryHTML(&b, page); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(html, "<script") {
		t.Fatalf("a name was written as markup")
	}
	if n := strings.Count(html, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 2 {
		t.Errorf("the hostile text shows escaped %d times", n)
	}
	// Three bars for the two runs (drifted, in_sync; applied), three steps.
	if n := strings.Count(html, `<rect data-status=`); n != 3 {
		t.Errorf("%d run bars, want 3", n)
	}
	if n := strings.Count(html, `<rect data-step=`); n != 3 {
		t.Errorf("%d step bars, want 3", n)
	}
	if !strings.Contains(html, "drifted since 2026-01-02T04:04:05Z") || !strings.Contains(html, "no status recorded") ||
		!strings.Contains(html, "1 drifted, 2 in_sync") || !strings.Contains(html, "<code>0123456789ab</code>") {
		t.Errorf("the page lacks a drift, a unit with no status, a run's counts or its commit:\n%s", html)
	}
	for _, external := range []string{"http://", "https://", "src=", "@import", "<link"} {
		for _, line := range strings.Split(html, "\n") {
			if strings.Contains(line, external) && !strings.Contains(line, `xmlns="http://www.w3.org/2000/svg"`) {
				t.Errorf("the page refers to something outside it (%s): %s", external, line)
			}
		}
	}
}

// TestGraphHTMLDrift: a unit the history says drifted says so on its node
// and its panel, with its last runs.
func TestGraphHTMLDrift(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &GraphPage{Units: []PageUnit{
		{ID: "a@default#default", Name: "a@default", Dir: "a", Workspace: "default", Stack: "default",
			Run: &UnitReport{Status: StatusPlanned}, Drift: "drifted", DriftedSince: t0,
			Recent: []PageRun{{StartedAt: t0, Command: "drift", Status: "drifted", Took: time.Second}, {StartedAt: t0.Add(-time.Hour), Command: "apply", Status: StatusApplied}}},
		{ID: "b@default#default", Name: "b@default", Dir: "b", Workspace: "default", Stack: "default", Drift: "in_sync"},
	}}
	var b bytes.Buffer
	if err := WriteGraphHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"planned · drifted", "Drift: drifted since 2026-01-02T03:04:05Z.", "Drift: in sync.", `<ul class="recent"><li>2026-01-02T03:04:05Z drift`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(html, "<li>"); n != 2 {
		t.Errorf("%d recent runs, want 2", n)
	}
}
