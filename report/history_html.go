package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sync"
	"time"
)

// HistoryPage is what `history --format html` draws
// (docs/behaviour.md#history): the runs over time and each unit's step
// times over its runs.
type HistoryPage struct {
	// Runs are newest first.
	Runs  []HistoryRun
	Units []HistoryUnit
}

// HistoryRun is one run: when, what, and how many units ended each
// status (a drift check's as drifted and in_sync).
type HistoryRun struct {
	Command, Commit, Actor string
	StartedAt, FinishedAt  time.Time
	ExitCode               int
	Counts                 map[Status]int
}

// HistoryUnit is a unit with its drift and its runs, newest first.
type HistoryUnit struct {
	ID           string
	Status       Status
	Drift        Status
	DriftedSince time.Time
	Runs         []HistoryUnitRun
}

// HistoryUnitRun is one run of a unit: its status and steps' times.
type HistoryUnitRun struct {
	StartedAt time.Time
	Command   string
	Status    Status
	Steps     []HistoryStep
}

// HistoryStep is a step's name and time.
type HistoryStep struct {
	Name string
	Took time.Duration
}

// Statuses of the history beyond a report's, and their colours.
const (
	historyDrifted Status = "drifted"
	historyInSync  Status = "in_sync"
)

var historyColours = append([]struct {
	status Status
	fill   string
}{{historyDrifted, "#bc4c00"}, {historyInSync, "#4ac26b"}}, statusColours...)

// historyFill is a status's colour.
func historyFill(s Status) string {
	for _, c := range historyColours {
		if c.status == s {
			return c.fill
		}
	}
	return noRunFill
}

//go:embed history.html.tmpl
var historyHTML string

// historyTemplate is parsed on first use, not at every start of strata.
var historyTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("history").Parse(historyHTML))
})

// Layout of the history page's pictures, in pixels.
const (
	runsH, runBarW, runGap = 160, 14, 4
	sparkH, sparkBarW      = 40, 10
)

type historyView struct {
	Runs      int
	Timeline  timelineView
	Legend    []legendEntry
	Steps     []legendEntry
	Units     []historyUnitView
	RunsTable []historyRunRow
}

type timelineView struct {
	Width, Height int
	Bars          []histBar
	First, Last   string
}

// histBar is a rectangle of the page's pictures.
type histBar struct {
	Step, Title, Fill string
	X, Y, W, H        int
}

type historyRunRow struct {
	Started, Command, Result, Took, Commit, Actor string
	Exit                                          int
}

type historyUnitView struct {
	ID, Status, Fill, Drift, Since string
	Runs                           int
	Width, Height                  int
	Bars                           []histBar
}

// WriteHistoryHTML writes the history page: one HTML file with no
// external resources, every name escaped as text.
func WriteHistoryHTML(w io.Writer, p *HistoryPage) error {
	v := historyView{Runs: len(p.Runs), Timeline: layoutTimeline(p.Runs)}
	for _, c := range historyColours {
		v.Legend = append(v.Legend, legendEntry{string(c.status), c.fill})
	}
	for _, s := range []string{"init", "plan", "apply", "other"} {
		v.Steps = append(v.Steps, legendEntry{s, stepFill(StepReport{Name: s, OK: true})})
	}
	for _, r := range p.Runs {
		v.RunsTable = append(v.RunsTable, historyRunRow{Started: r.StartedAt.UTC().Format(time.RFC3339), Command: r.Command,
			Result: countsText(r.Counts), Took: r.FinishedAt.Sub(r.StartedAt).Round(100 * time.Millisecond).String(),
			Commit: r.Commit[:min(len(r.Commit), 12)], Actor: r.Actor, Exit: r.ExitCode})
	}
	for _, u := range p.Units {
		v.Units = append(v.Units, layoutSpark(u))
	}
	if err := historyTemplate().Execute(w, v); err != nil {
		return fmt.Errorf("writing the history page: %w", err)
	}
	return nil
}

// countsText is a run's counts in words, in the legend's order.
func countsText(counts map[Status]int) string {
	s := ""
	for _, c := range historyColours {
		if n := counts[c.status]; n > 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%d %s", n, c.status)
		}
	}
	if s == "" {
		return "-"
	}
	return s
}

// layoutTimeline draws the runs oldest to newest, a bar per run as tall
// as its units are many, stacked by how they ended.
func layoutTimeline(runs []HistoryRun) timelineView {
	t := timelineView{Height: runsH + 2*margin}
	most := 1
	for _, r := range runs {
		n := 0
		for _, c := range r.Counts {
			n += c
		}
		most = max(most, n)
	}
	for i := range runs {
		r := runs[len(runs)-1-i]
		x := margin + i*(runBarW+runGap)
		y := margin + runsH
		for _, c := range historyColours {
			n := r.Counts[c.status]
			if n == 0 {
				continue
			}
			h := max(n*runsH/most, 1)
			y -= h
			t.Bars = append(t.Bars, histBar{Step: string(c.status), X: x, Y: y, W: runBarW, H: h, Fill: c.fill,
				Title: fmt.Sprintf("%s %s: %d %s", r.Command, r.StartedAt.UTC().Format(time.RFC3339), n, c.status)})
		}
	}
	t.Width = 2*margin + max(len(runs), 1)*(runBarW+runGap)
	if len(runs) > 0 {
		t.Last, t.First = runs[0].StartedAt.UTC().Format(time.RFC3339), runs[len(runs)-1].StartedAt.UTC().Format(time.RFC3339)
	}
	return t
}

// layoutSpark draws a unit's runs oldest to newest, a bar per run as tall
// as its steps took against the unit's longest run, a segment per step.
func layoutSpark(u HistoryUnit) historyUnitView {
	v := historyUnitView{ID: u.ID, Status: string(u.Status), Fill: historyFill(u.Status), Drift: string(u.Drift), Runs: len(u.Runs),
		Height: sparkH + 4}
	if u.Status == "" {
		v.Status = "no status recorded"
	}
	if !u.DriftedSince.IsZero() {
		v.Since = u.DriftedSince.UTC().Format(time.RFC3339)
	}
	var longest time.Duration
	for _, r := range u.Runs {
		var total time.Duration
		for _, s := range r.Steps {
			total += s.Took
		}
		longest = max(longest, total)
	}
	longest = max(longest, time.Millisecond)
	for i := range u.Runs {
		r := u.Runs[len(u.Runs)-1-i]
		x := 2 + i*(sparkBarW+2)
		y := 2 + sparkH
		for _, s := range r.Steps {
			h := int(float64(sparkH) * float64(s.Took) / float64(longest))
			if h == 0 {
				continue
			}
			y -= h
			v.Bars = append(v.Bars, histBar{Step: s.Name, X: x, Y: y, W: sparkBarW, H: h, Fill: stepFill(StepReport{Name: s.Name, OK: true}),
				Title: fmt.Sprintf("%s %s (%s): %s %s", r.Command, r.StartedAt.UTC().Format(time.RFC3339), r.Status, s.Name, s.Took.Round(time.Millisecond))})
		}
	}
	v.Width = 4 + max(len(u.Runs), 1)*(sparkBarW+2)
	return v
}
