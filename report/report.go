package report

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/textbudget"
)

// Report is the JSON report of a command (docs/behaviour.md#report).
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
	// CI is the commit and CI run the command ran for, when a CI service
	// says.
	CI *CIReport `json:"ci,omitempty"`
	// Hooks are the config's hooks that ran around the units
	// (docs/behaviour.md#hooks).
	Hooks *HooksReport `json:"hooks,omitempty"`
	// Producers are the units outside the run whose outputs it read, and
	// how (docs/behaviour.md#outputs-without-init).
	Producers []ProducerRead `json:"producers,omitempty"`
	// Schedule compares the run's length with its critical path.
	Schedule *ScheduleReport `json:"schedule,omitempty"`
	// Cost is the run's estimated monthly cost (docs/behaviour.md#cost-estimation).
	Cost *CostSummary `json:"cost,omitempty"`
	// CPU is the CPU time the command had used by the time of the report.
	CPU *CPUReport `json:"cpu,omitempty"`
}

// FailedReport is the report of a command that stopped before any unit
// ran: CI still gets a report and a summary saying why.
func FailedReport(command string, started, finished time.Time, reason string) *Report {
	return &Report{Version: 1, Command: command, OK: false, ExitCode: 1, StartedAt: started.UTC(), FinishedAt: finished.UTC(),
		Stacks: []StackReport{}, Units: []*UnitReport{}, Error: textbudget.Cut(reason, textbudget.Error)}
}

// StackReport is a stack's outcome: the first of failed, missing (in the
// report of a run shared by CI jobs), cancelled, skipped, blocked,
// planned, applied, destroyed, succeeded, no_changes that one of its units
// has.
type StackReport struct {
	Name   string   `json:"name"`
	Path   []string `json:"path"`
	Status Status   `json:"status"`
}

// UnitReport is one unit's outcome.
type UnitReport struct {
	Dir       string   `json:"dir"`
	Workspace string   `json:"workspace"`
	Stack     string   `json:"stack"`
	StackPath []string `json:"stack_path"`
	// StackInstance is the key of the unit's stack instance
	// (docs/behaviour.md#stack-instances).
	StackInstance string       `json:"stack_instance,omitempty"`
	Engine        EngineReport `json:"engine"`
	Why           string       `json:"why"`
	Status        Status       `json:"status"`
	Changes       Changes      `json:"changes"`
	Reason        string       `json:"reason"`
	// Warnings are what the user must hear of the unit beyond its status
	// (a corrupt record in the state bucket moved aside, say).
	Warnings []string `json:"warnings,omitempty"`
	// Digest is the content digest of the unit's last plan or apply in
	// this command (docs/behaviour.md#run-state).
	Digest string `json:"digest,omitempty"`
	// Cause names the failed unit at the root of a skipped one, or of a
	// planned one whose apply a failure held.
	Cause string `json:"cause,omitempty"`
	// After are the IDs of the units of the run this one waits for, over
	// the command's edges between units (depends_on, inputs); AfterStacks
	// the stacks of the run whose every unit it waits for, over the rules
	// between stacks, each stack once however many units it has
	// (docs/behaviour.md#the-unit-dag). The summary draws both.
	After       []string `json:"after,omitempty"`
	AfterStacks []string `json:"after_stacks,omitempty"`
	// Replanned compares the plan apply made in place of the reviewed
	// saved plan with it (docs/behaviour.md#saved-plans).
	Replanned *Replanned `json:"replanned,omitempty"`
	// DeferredOn are the inputs, as written ("net.vpc_id"), that a
	// producer's plan left unknown: the unit is deferred, or planned only
	// once that producer was applied (docs/behaviour.md#deferred-units).
	DeferredOn []string `json:"deferred_on,omitempty"`
	// UnknownUntilApplied are the outputs the unit's plan in this command
	// left unknown until it is applied, when it ended planned or applied:
	// a later job of a CI run defers its consumers on them, or says they
	// planned once they were known (docs/behaviour.md#deferred-units).
	UnknownUntilApplied []string `json:"unknown_until_applied,omitempty"`
	// Gates are the gates the unit's plan raised: its apply waits for
	// their approval (docs/controls.md#gates).
	Gates []Gate `json:"gates,omitempty"`
	// Cost is the plan's estimated monthly cost, when estimated.
	Cost   *CostReport            `json:"cost,omitempty"`
	Inputs map[string]InputReport `json:"inputs"`
	Steps  []StepReport           `json:"steps"`
	// Outputs are the unit's outputs (output command only).
	Outputs map[string]any `json:"outputs,omitempty"`
	// Shared is true when the dirspace is in several stacks.
	Shared bool `json:"-"`
	// Log is the engine output of the unit's plan and apply, masked, for
	// the summary.
	Log string `json:"-"`
	// Order is the unit's place in the run's DAG (by layer, then name), so
	// the summary reads in the order things happen; the report's units
	// stay in ID order.
	Order int `json:"-"`
	// Layer is the unit's layer in the run's DAG (its wave, in CI): the
	// final table lists units by layer, then by when they started.
	Layer int `json:"-"`
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

// InputReport is a wired input variable (docs/behaviour.md#inputs-between-stacks).
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
var stackStatusOrder = []Status{StatusFailed, StatusDenied, StatusMissing, StatusCancelled, StatusSkipped, StatusBlocked, StatusDeferred, StatusPlanned, StatusApplied, StatusDestroyed, StatusSucceeded, StatusNoChanges}

// Note is the unit's reason and warnings, as the table, the summary and
// the PR comment show them.
func (u *UnitReport) Note() string {
	parts := make([]string, 0, 1+len(u.Warnings))
	if u.Reason != "" {
		parts = append(parts, u.Reason)
	}
	for _, w := range u.Warnings {
		parts = append(parts, "warning: "+w)
	}
	return strings.Join(parts, "; ")
}

// NewReport assembles the report of a command from its units' reports,
// given in the order things happen (a CI run's report, docs/ci.md):
// each stack's status and the exit code are worked out as for a run on
// one machine. detailed is plan's -detailed-exitcode (always so for drift).
func NewReport(command string, started, finished time.Time, units []*UnitReport, detailed bool) *Report {
	for i, u := range units {
		u.Order = i
	}
	return Assemble(command, started, finished, units, detailed)
}

// Assemble is the report of a command from its units' reports, in
// their order (NewReport numbers it); detailed is -detailed-exitcode as
// given, which counts where the command's policy takes it (drift's exit
// code is always detailed).
func Assemble(command string, started, finished time.Time, units []*UnitReport, detailed bool) *Report {
	rep := &Report{Version: 1, Command: command, StartedAt: started.UTC(), FinishedAt: finished.UTC(), Units: units}
	byStack := map[string]*StackReport{}
	var order []string
	for _, ureport := range units {
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
	rep.ExitCode = exitCode(rep, command, detailed)
	rep.OK = rep.ExitCode == 0 || rep.ExitCode == 2
	return rep
}

func rank(status Status) int {
	for i, s := range stackStatusOrder {
		if s == status {
			return i
		}
	}
	return len(stackStatusOrder)
}

// exitCode: 1 when any unit failed, was denied, skipped or cancelled, or, in apply
// and destroy, was left blocked or planned (the command did not finish its
// work: a plan not approved exits 1, as terraform's "no" does), or, in
// init, validate and output, ended anything but succeeded; 2 with a
// detailed exit code when some unit ended planned or blocked or was
// auto-applied; else 0. Signals are the caller's (130, 143).
func exitCode(rep *Report, command string, detailed bool) int {
	code := 0
	pol, _ := cmdpolicy.Of(command)
	// -detailed-exitcode counts where the command takes it.
	detailed = pol.Detailed || pol.DetailedOnRequest && detailed
	for _, u := range rep.Units {
		if pol.ReadsOnly && u.Status != StatusSucceeded {
			// These commands have no gate to wait for: a unit that did
			// not run is a unit the user asked about and did not get.
			return 1
		}
		switch u.Status {
		case StatusFailed, StatusDenied, StatusSkipped, StatusCancelled, StatusMissing:
			return 1
		case StatusBlocked, StatusDeferred, StatusPlanned:
			if pol.Applies {
				return 1
			}
			if detailed {
				code = 2
			}
		case StatusApplied, StatusDestroyed:
			if detailed && pol.AutoApplies {
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
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o600)
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

// duration is the unit's own running time, as the table shows it.
func (u *UnitReport) duration() string {
	if len(u.Steps) == 0 {
		return "-"
	}
	return u.ran().Round(100 * time.Millisecond).String()
}

// waited is the time the unit waited between its steps, at a prompt or
// for its apply gates, as the table shows it: "-" under a second.
func (u *UnitReport) waited() string {
	if w := u.took() - u.ran(); w >= time.Second {
		return w.Round(time.Second).String()
	}
	return "-"
}

// summaryLimit caps the Markdown summary (GitHub's step summary limit).
const summaryLimit = 1 << 20

// Markdown renders the summary (docs/behaviour.md#summary) the way a
// reviewer reads it: a verdict line, the change totals with the commit,
// base and CI run, then a section per stack in the order the run's DAG
// goes, with its status, a table of its units and each changing unit's
// plan output in a collapsed block. A unit whose changes are not known
// (blocked, skipped, cancelled, failed before its plan) shows "-"; a unit
// without changes is its table row alone. Over summaryLimit the plan
// outputs are cut per unit, with a note.
func (rep *Report) Markdown() string {
	stacks := append([]StackReport(nil), rep.Stacks...)
	byStack := map[string][]*UnitReport{}
	first := map[string]int{}
	for _, u := range rep.Units {
		if o, ok := first[u.Stack]; !ok || u.Order < o {
			first[u.Stack] = u.Order
		}
		byStack[u.Stack] = append(byStack[u.Stack], u)
	}
	for _, us := range byStack {
		sort.SliceStable(us, func(i, j int) bool { return us[i].Order < us[j].Order })
	}
	sort.SliceStable(stacks, func(i, j int) bool { return first[stacks[i].Name] < first[stacks[j].Name] })
	shared := rep.sharedWarnings()
	showWhy := rep.hasWhy()
	render := func(logLimit int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "## strata %s: %s\n\n", rep.Command, rep.Verdict())
		if line := rep.contextLine(); line != "" {
			b.WriteString(line + "\n\n")
		}
		if line := rep.NotReviewedLine(func(s string) string { return "`" + s + "`" }); line != "" {
			b.WriteString(line + "\n\n")
		}
		if rep.Error != "" {
			fmt.Fprintf(&b, "**Stopped before any unit ran.**\n\n```\n%s\n```\n\n", fence(rep.Error))
		}
		b.WriteString(rep.hookFailure(commentErrorLimit))
		b.WriteString(rep.costBlock())
		b.WriteString(rep.dagBlock())
		b.WriteString(warningsBlock(shared))
		for _, s := range stacks {
			fmt.Fprintf(&b, "### %s — %s\n\n", strings.Join(s.Path, " / "), s.Status)
			if showWhy {
				b.WriteString("| unit | status | changes | reason | why |\n|---|---|---|---|---|\n")
			} else {
				b.WriteString("| unit | status | changes | reason |\n|---|---|---|---|\n")
			}
			for _, u := range byStack[s.Name] {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |", tableCode(u.Name()), u.Status, u.ChangesText(), strings.ReplaceAll(u.Note(), "|", `\|`))
				if showWhy {
					fmt.Fprintf(&b, " %s |", tableCode(u.Why))
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
			for _, u := range byStack[s.Name] {
				for _, st := range u.Steps {
					if out := strings.TrimSpace(st.Output); out != "" {
						fmt.Fprintf(&b, "<details><summary>%s: %s output</summary>\n\n```\n%s\n```\n\n</details>\n\n", html.EscapeString(u.Name()), html.EscapeString(st.Name), fence(out))
					}
				}
				log := strings.TrimSpace(withoutShared(u.Log, shared))
				if log == "" || u.unchanged() {
					continue
				}
				if logLimit >= 0 && len(log) > logLimit {
					end := textbudget.CutPoint(log, logLimit)
					log = log[:end] + fmt.Sprintf("\n… cut: %s more (the summary is limited to 1 MiB)", CountOf(len(log)-end, "byte"))
				}
				summary := html.EscapeString(u.Name()) + ": " + string(u.Status)
				if c, ok := u.PlanChanges(); ok {
					summary += ", " + c.String()
				}
				if u.hasPlan() {
					log = DiffView(log)
				}
				fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n%s\n%s\n```\n\n</details>\n\n", summary, u.fenceFor(), fence(log))
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

// hasWhy reports whether some unit is in the run for a reason other than
// being selected (docs/behaviour.md#changed-units): the summary then says
// each unit's why.
func (rep *Report) hasWhy() bool {
	for _, u := range rep.Units {
		if u.Why != "" && u.Why != "selected" {
			return true
		}
	}
	return false
}

// fence keeps text from closing the code block it is quoted in.
func fence(s string) string { return strings.ReplaceAll(s, "```", "``\u200b`") }

// codeSpan is s as a Markdown code span, inside which nothing is markup. A
// name may hold backticks (a git branch may): the span's fence is one
// backtick longer than the longest run of them in s, with a space inside
// it when s starts or ends with a backtick or with spaces at both ends
// (CommonMark takes one such space off each end). A line break, which
// would end a table row, becomes a space.
func codeSpan(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, c := range []byte(s) {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if s[0] == '`' || s[len(s)-1] == '`' || (s[0] == ' ' && s[len(s)-1] == ' ' && strings.TrimLeft(s, " ") != "") {
		s = " " + s + " "
	}
	f := strings.Repeat("`", longest+1)
	return f + s + f
}

// tableCode is a code span in a table cell: a "|", even in a code span,
// would end the cell unless escaped.
func tableCode(s string) string { return strings.ReplaceAll(codeSpan(s), "|", `\|`) }

// verdictOrder is how the verdict counts units: what changes first, then
// what keeps a change from landing.
var verdictOrder = []struct {
	status Status
	words  string
}{
	{StatusApplied, "applied"},
	{StatusDestroyed, "destroyed"},
	{StatusPlanned, "to change"},
	{StatusDeferred, "deferred"},
	{StatusSucceeded, "succeeded"},
	{StatusBlocked, "blocked"},
	{StatusFailed, "failed"},
	{StatusDenied, "denied"},
	{StatusSkipped, "skipped"},
	{StatusCancelled, "cancelled"},
}

// Verdict is the summary's first line: how many units change, changed or
// did not get there, e.g. "3 to change, 1 blocked, 2 failed"; "no changes"
// when every unit has none.
func (rep *Report) Verdict() string {
	if rep.Error != "" {
		return "stopped"
	}
	if len(rep.Units) == 0 {
		return "no units"
	}
	n := map[Status]int{}
	for _, u := range rep.Units {
		n[u.Status]++
	}
	var parts []string
	for _, v := range verdictOrder {
		if n[v.status] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v.status], v.words))
		}
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, ", ")
}

// NotReviewedLine calls out, under the verdict, the units that applied
// changes their reviewed plan did not hold: planned again, with other
// changes (docs/behaviour.md#saved-plans). "" when there is none. code
// renders a unit's name.
func (rep *Report) NotReviewedLine(code func(string) string) string {
	var names []string
	for _, u := range rep.Units {
		if (u.Status == StatusApplied || u.Status == StatusDestroyed) && u.Replanned != nil && !u.Replanned.Same {
			names = append(names, code(u.Name()))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "**Applied changes their reviewed plan did not hold:** " + strings.Join(names, ", ") + " (each unit's reason says how)"
}

// contextLine is the line under the verdict, in the summary's Markdown.
func (rep *Report) contextLine() string {
	return rep.ContextLine(codeSpan,
		func(text, url string) string { return "[" + text + "](" + url + ")" })
}

// ContextLine is the line under a report's verdict: the change totals over
// the units whose changes are known, how many units, and the commit, base
// and CI run when CI says. code renders a commit or branch name and link a
// link, as the document the line goes in needs.
func (rep *Report) ContextLine(code func(string) string, link func(text, url string) string) string {
	var parts []string
	if len(rep.Units) > 0 {
		total, _ := TotalChanges(rep.Units)
		parts = append(parts, fmt.Sprintf("**%s** in %s", total, CountOf(len(rep.Units), "unit")))
	}
	if ci := rep.CI; ci != nil {
		if ci.Commit != "" {
			short := ci.Commit
			if len(short) > 12 {
				short = short[:12]
			}
			if ci.CommitURL != "" {
				parts = append(parts, "commit "+link(code(short), ci.CommitURL))
			} else {
				parts = append(parts, "commit "+code(short))
			}
		}
		if ci.Base != "" {
			parts = append(parts, "base "+code(ci.Base))
		}
		if ci.RunURL != "" {
			parts = append(parts, link("CI run", ci.RunURL))
		}
	}
	return strings.Join(parts, " · ")
}

// PlanChanges are the changes the unit's plan counts, and whether it has
// one: not when it never planned (blocked, skipped or cancelled before its
// plan, failed before or in it) nor in commands that do not plan. A unit
// that planned and failed applying in one engine call has no plan step of
// its own; the plan summary in its log says what it planned.
func (u *UnitReport) PlanChanges() (Changes, bool) {
	switch u.Status {
	case StatusPlanned, StatusApplied, StatusDestroyed, StatusNoChanges:
		return u.Changes, true
	case StatusSucceeded:
		return Changes{}, false
	}
	if u.Changes != (Changes{}) {
		return u.Changes, true
	}
	for _, st := range u.Steps {
		if st.Name == StepPlan && st.OK {
			return u.Changes, true
		}
	}
	if c, ok := ParsePlanSummary(u.Log); ok {
		return c, true
	}
	return Changes{}, false
}

// TotalChanges sums the changes of the units whose changes are known
// (PlanChanges), and reports whether any is.
func TotalChanges(units []*UnitReport) (Changes, bool) {
	var total Changes
	known := false
	for _, u := range units {
		if c, ok := u.PlanChanges(); ok {
			total.Add += c.Add
			total.Change += c.Change
			total.Destroy += c.Destroy
			total.Outputs += c.Outputs
			known = true
		}
	}
	return total, known
}

// ChangesText is the unit's changes column: "-" when they are not known.
func (u *UnitReport) ChangesText() string {
	c, ok := u.PlanChanges()
	if !ok {
		return "-"
	}
	return c.String()
}

// unchanged reports a unit whose plan changes nothing: its table row
// says all there is. A plan that changes only outputs counts no resource
// changes, and is still shown.
func (u *UnitReport) unchanged() bool { return u.Status == StatusNoChanges }

// planSummary is the engine's own count of a plan's changes.
var planSummary = regexp.MustCompile(`Plan: (?:(\d+) to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy`)

// ParsePlanSummary reads the counts of the engine's "Plan: N to add, …"
// line in s, when there is one.
func ParsePlanSummary(s string) (Changes, bool) {
	m := planSummary.FindStringSubmatch(s)
	if m == nil {
		return Changes{}, false
	}
	var c Changes
	c.Add, _ = strconv.Atoi(m[2])
	c.Change, _ = strconv.Atoi(m[3])
	c.Destroy, _ = strconv.Atoi(m[4])
	return c, true
}

// CountOf is n nouns, in words: "1 unit", "3 units".
func CountOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
