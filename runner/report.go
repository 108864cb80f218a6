package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the JSON report of a command (§9.2).
type Report struct {
	Version    int           `json:"version"`
	Command    string        `json:"command"`
	OK         bool          `json:"ok"`
	ExitCode   int           `json:"exit_code"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at"`
	Stacks     []StackReport `json:"stacks"`
	Units      []*UnitReport `json:"units"`
	// Error is why the command stopped before any unit ran (a config
	// error, the apply lock held, an engine that cannot be had).
	Error string `json:"error,omitempty"`
}

// FailedReport is the report of a command that stopped before any unit
// ran: CI still gets a report and a summary saying why.
func FailedReport(command string, started, finished time.Time, reason string) *Report {
	return &Report{Version: 1, Command: command, OK: false, ExitCode: 1, StartedAt: started.UTC(), FinishedAt: finished.UTC(),
		Stacks: []StackReport{}, Units: []*UnitReport{}, Error: reason}
}

// StackReport is a stack's outcome: the first of failed, cancelled,
// skipped, blocked, planned, applied, destroyed, succeeded, no_changes
// that one of its units has.
type StackReport struct {
	Name   string   `json:"name"`
	Path   []string `json:"path"`
	Status string   `json:"status"`
}

// UnitReport is one unit's outcome.
type UnitReport struct {
	Dir       string                 `json:"dir"`
	Workspace string                 `json:"workspace"`
	Stack     string                 `json:"stack"`
	StackPath []string               `json:"stack_path"`
	Engine    EngineReport           `json:"engine"`
	Why       string                 `json:"why"`
	Status    string                 `json:"status"`
	Changes   Changes                `json:"changes"`
	Reason    string                 `json:"reason"`
	Inputs    map[string]InputReport `json:"inputs"`
	Steps     []StepReport           `json:"steps"`
	// Outputs are the unit's outputs (output command only).
	Outputs map[string]any `json:"outputs,omitempty"`
	// Shared is true when the dirspace is in several stacks.
	Shared bool `json:"-"`
	// Log is the engine output of the unit's plan and apply, masked, for
	// the summary.
	Log string `json:"-"`
}

// Name is the unit as the console shows it.
func (u *UnitReport) Name() string {
	n := u.Dir + "@" + u.Workspace
	if u.Shared {
		n += "#" + u.Stack
	}
	return n
}

// ID is dir@workspace#stack.
func (u *UnitReport) ID() string { return u.Dir + "@" + u.Workspace + "#" + u.Stack }

// EngineReport is the engine a unit used.
type EngineReport struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// InputReport is a wired input variable (§10.1).
type InputReport struct {
	From  string `json:"from"`
	Value any    `json:"value"`
}

// StepReport is one step of a unit.
type StepReport struct {
	Name       string    `json:"name"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	OK         bool      `json:"ok"`
	// Output is a run step's output when it sets capture_output (masked).
	Output string `json:"output,omitempty"`
}

// stackStatusOrder ranks unit statuses for a stack's status.
var stackStatusOrder = []string{StatusFailed, StatusCancelled, StatusSkipped, StatusBlocked, StatusPlanned, StatusApplied, StatusDestroyed, StatusSucceeded, StatusNoChanges}

func (r *runState) unitReport(ur *unitRun) *UnitReport {
	u := ur.u
	rep := &UnitReport{
		Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, StackPath: u.Stack.Path,
		Engine: EngineReport{Name: ur.choice.Name, Version: ur.choice.Version},
		Why:    ur.why, Status: ur.status, Changes: ur.changes, Reason: ur.reason,
		Inputs: r.inputReports(ur), Steps: ur.steps, Outputs: ur.outputs, Shared: u.Shared,
		Log: ur.output.String(),
	}
	if ur.engine != nil {
		rep.Engine = EngineReport{Name: ur.engine.Name, Version: ur.engine.Version.String()}
	}
	if rep.Steps == nil {
		rep.Steps = []StepReport{}
	}
	if rep.Status == statusPending {
		rep.Status = StatusCancelled
	}
	return rep
}

// report assembles the report and its exit code (§1).
func (r *runState) report(started time.Time) *Report {
	rep := &Report{Version: 1, Command: r.opt.Command, StartedAt: started.UTC(), FinishedAt: r.opt.Now().UTC()}
	byStack := map[string]*StackReport{}
	var order []string
	for _, ur := range r.units {
		if ur.external {
			continue
		}
		ureport := r.unitReport(ur)
		rep.Units = append(rep.Units, ureport)
		sr, ok := byStack[ureport.Stack]
		if !ok {
			sr = &StackReport{Name: ureport.Stack, Path: ureport.StackPath, Status: ureport.Status}
			byStack[ureport.Stack] = sr
			order = append(order, ureport.Stack)
		}
		if rank(ureport.Status) < rank(sr.Status) {
			sr.Status = ureport.Status
		}
	}
	sort.Strings(order)
	for _, name := range order {
		rep.Stacks = append(rep.Stacks, *byStack[name])
	}
	if rep.Units == nil {
		rep.Units = []*UnitReport{}
	}
	if rep.Stacks == nil {
		rep.Stacks = []StackReport{}
	}
	rep.ExitCode = exitCode(rep, r.opt.Command, r.detailed())
	rep.OK = rep.ExitCode == 0 || rep.ExitCode == 2
	return rep
}

func (r *runState) detailed() bool {
	return r.opt.Command == CmdDrift || (r.opt.Command == CmdPlan && r.opt.DetailedExitCode)
}

func rank(status string) int {
	for i, s := range stackStatusOrder {
		if s == status {
			return i
		}
	}
	return len(stackStatusOrder)
}

// exitCode: 1 when any unit failed, was skipped or cancelled, or, in apply
// and destroy, was left blocked or planned (the command did not finish its
// work: a plan not approved exits 1, as terraform's "no" does); 2 with a
// detailed exit code when some unit ended planned or blocked or was
// auto-applied; else 0. Signals are the caller's (130, 143).
func exitCode(rep *Report, command string, detailed bool) int {
	code := 0
	mutating := command == CmdApply || command == CmdDestroy
	for _, u := range rep.Units {
		switch u.Status {
		case StatusFailed, StatusSkipped, StatusCancelled:
			return 1
		case StatusBlocked, StatusPlanned:
			if mutating {
				return 1
			}
			if detailed {
				code = 2
			}
		case StatusApplied, StatusDestroyed:
			if detailed && command == CmdPlan {
				code = 2
			}
		}
	}
	return code
}

// WriteJSON writes the report to a file atomically.
func (rep *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// ReadReport reads a report written by --report (for --resume).
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	if err := json.Unmarshal(b, rep); err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	return rep, nil
}

// WriteTable prints the final table, grouped by stack: unit, status,
// changes, duration (§9.1).
func (rep *Report) WriteTable(w io.Writer) {
	if len(rep.Units) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STACK\tUNIT\tSTATUS\tCHANGES\tDURATION\tREASON")
	units := append([]*UnitReport(nil), rep.Units...)
	sort.SliceStable(units, func(i, j int) bool {
		return strings.Join(units[i].StackPath, "/") < strings.Join(units[j].StackPath, "/")
	})
	for _, u := range units {
		changes := "-"
		if u.Changes != (Changes{}) {
			changes = u.Changes.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", strings.Join(u.StackPath, "/"), u.Name(), u.Status, changes, u.duration(), u.Reason)
	}
	tw.Flush()
}

func (u *UnitReport) duration() string {
	if len(u.Steps) == 0 {
		return "-"
	}
	d := u.Steps[len(u.Steps)-1].FinishedAt.Sub(u.Steps[0].StartedAt)
	return d.Round(100 * time.Millisecond).String()
}

// summaryLimit caps the Markdown summary (GitHub's step summary limit).
const summaryLimit = 1 << 20

// Markdown renders the summary (§9.3): a section per stack with its status,
// each unit's changes and its plan output in a collapsed block. Over
// summaryLimit the plan outputs are cut per unit, with a note.
func (rep *Report) Markdown() string {
	render := func(logLimit int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "## strata %s\n\n", rep.Command)
		if rep.Error != "" {
			fmt.Fprintf(&b, "**Stopped before any unit ran.**\n\n```\n%s\n```\n\n", strings.ReplaceAll(rep.Error, "```", "``\u200b`"))
		}
		byStack := map[string][]*UnitReport{}
		for _, u := range rep.Units {
			byStack[u.Stack] = append(byStack[u.Stack], u)
		}
		for _, s := range rep.Stacks {
			fmt.Fprintf(&b, "### %s — %s\n\n", strings.Join(s.Path, " / "), s.Status)
			b.WriteString("| unit | status | changes | reason |\n|---|---|---|---|\n")
			for _, u := range byStack[s.Name] {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", u.Name(), u.Status, u.Changes, strings.ReplaceAll(u.Reason, "|", `\|`))
			}
			b.WriteString("\n")
			for _, u := range byStack[s.Name] {
				for _, st := range u.Steps {
					if out := strings.TrimSpace(st.Output); out != "" {
						fmt.Fprintf(&b, "<details><summary>%s: %s output</summary>\n\n```\n%s\n```\n\n</details>\n\n", u.Name(), st.Name, strings.ReplaceAll(out, "```", "``\u200b`"))
					}
				}
				log := strings.TrimSpace(u.Log)
				if log == "" {
					continue
				}
				if logLimit >= 0 && len(log) > logLimit {
					log = log[:logLimit] + fmt.Sprintf("\n… cut: %d more bytes (the summary is limited to 1 MiB)", len(u.Log)-logLimit)
				}
				fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n```\n%s\n```\n\n</details>\n\n", u.Name(), strings.ReplaceAll(log, "```", "``\u200b`"))
			}
		}
		return b.String()
	}
	md := render(-1)
	if len(md) <= summaryLimit || len(rep.Units) == 0 {
		return md
	}
	return render(summaryLimit / (2 * len(rep.Units)))
}
