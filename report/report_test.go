package report

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/strata-iac/strata/command"
)

func TestVerdict(t *testing.T) {
	rep := func(statuses ...Status) *Report {
		r := &Report{Command: command.Plan}
		for _, s := range statuses {
			r.Units = append(r.Units, &UnitReport{Status: s})
		}
		return r
	}
	tests := []struct {
		rep  *Report
		want string
	}{
		{rep(StatusPlanned, StatusPlanned, StatusPlanned, StatusBlocked, StatusFailed, StatusFailed, StatusNoChanges), "3 to change, 1 blocked, 2 failed"},
		{rep(StatusNoChanges, StatusNoChanges), "no changes"},
		{rep(StatusPlanned, StatusDeferred, StatusDeferred), "1 to change, 2 deferred"},
		{rep(StatusApplied, StatusFailed, StatusSkipped, StatusNoChanges), "1 applied, 1 failed, 1 skipped"},
		{rep(StatusDestroyed, StatusCancelled), "1 destroyed, 1 cancelled"},
		{rep(StatusSucceeded, StatusSucceeded), "2 succeeded"},
		{rep(), "no units"},
		{&Report{Error: "the apply lock is held"}, "stopped"},
	}
	for _, tc := range tests {
		if got := tc.rep.Verdict(); got != tc.want {
			t.Errorf("verdict = %q, want %q", got, tc.want)
		}
	}
}

func TestChangesColumn(t *testing.T) {
	planOK := []StepReport{{Name: StepInit, OK: true}, {Name: StepPlan, OK: true}}
	planFailed := []StepReport{{Name: StepInit, OK: true}, {Name: StepPlan, OK: false}}
	tests := []struct {
		u    UnitReport
		want string
	}{
		{UnitReport{Status: StatusPlanned, Changes: Changes{Add: 1}}, "+1 ~0 -0"},
		{UnitReport{Status: StatusNoChanges}, "+0 ~0 -0"},
		{UnitReport{Status: StatusApplied, Changes: Changes{Destroy: 2}}, "+0 ~0 -2"},
		{UnitReport{Status: StatusBlocked}, "-"},
		{UnitReport{Status: StatusSkipped}, "-"},
		// A skipped unit keeps the plan it made before its producer failed.
		{UnitReport{Status: StatusSkipped, Changes: Changes{Change: 1}}, "+0 ~1 -0"},
		{UnitReport{Status: StatusCancelled}, "-"},
		{UnitReport{Status: StatusFailed, Steps: planFailed}, "-"},
		// Failed in apply after a plan without resource changes.
		{UnitReport{Status: StatusFailed, Steps: append(planOK, StepReport{Name: StepApply})}, "+0 ~0 -0"},
		// Planned and failed applying in one engine call: no plan step, but
		// the plan's summary is in its log.
		{UnitReport{Status: StatusFailed, Steps: []StepReport{{Name: StepInit, OK: true}, {Name: StepApply}},
			Log: "Plan: 1 to add, 2 to change, 0 to destroy.\nError: local-exec provisioner error"}, "+1 ~2 -0"},
		{UnitReport{Status: StatusSucceeded}, "-"},
	}
	for _, tc := range tests {
		if got := tc.u.ChangesText(); got != tc.want {
			t.Errorf("%s %v: changes %q, want %q", tc.u.Status, tc.u.Changes, got, tc.want)
		}
	}
}

// TestMarkdownForAReviewer: verdict and totals first, then stacks and
// their units in DAG order (not by name), "-" where a unit has no plan,
// no block for a unit without changes, and "1 unit".
func TestMarkdownForAReviewer(t *testing.T) {
	rep := &Report{Command: command.Apply,
		Stacks: []StackReport{
			{Name: "app", Path: []string{"app"}, Status: StatusFailed},
			{Name: "net", Path: []string{"net"}, Status: StatusApplied},
		},
		Units: []*UnitReport{
			{Dir: "app/api", Workspace: "default", Stack: "app", Status: StatusFailed, Reason: "apply failed: local-exec provisioner error",
				Changes: Changes{Add: 1}, Steps: []StepReport{{Name: StepPlan, OK: true}, {Name: StepApply}}, Log: "Plan: 1 to add\nError: local-exec provisioner error", Order: 3},
			{Dir: "app/web", Workspace: "default", Stack: "app", Status: StatusSkipped, Reason: "app/api@default failed", Order: 4},
			{Dir: "net/a", Workspace: "default", Stack: "net", Status: StatusNoChanges, Log: "No changes. Your infrastructure matches the configuration.", Order: 2},
			{Dir: "net/z", Workspace: "default", Stack: "net", Status: StatusApplied, Changes: Changes{Add: 2, Change: 1}, Log: "Apply complete! Resources: 2 added, 1 changed, 0 destroyed.", Order: 0},
		},
		CI: &CIReport{Service: "github", Commit: "0123456789abcdef0123456789abcdef01234567", CommitURL: "https://github.example/o/r/commit/0123456789abcdef0123456789abcdef01234567",
			Base: "main", RunURL: "https://github.example/o/r/actions/runs/42"},
	}
	md := rep.Markdown()
	lines := strings.Split(md, "\n")
	if lines[0] != "## strata apply: 1 applied, 1 failed, 1 skipped" {
		t.Errorf("verdict line %q", lines[0])
	}
	wantContext := "**+3 ~1 -0** in 4 units · commit [`0123456789ab`](https://github.example/o/r/commit/0123456789abcdef0123456789abcdef01234567) · base `main` · [CI run](https://github.example/o/r/actions/runs/42)"
	if lines[2] != wantContext {
		t.Errorf("context line\n%q\nwant\n%q", lines[2], wantContext)
	}
	// net's first unit comes first in the DAG: its section leads, and in
	// it net/z (layer 0) stands above net/a.
	order := []string{"### net — applied", "| `net/z@default` | applied | +2 ~1 -0 |", "| `net/a@default` | no_changes | +0 ~0 -0 |",
		"### app — failed", "| `app/api@default` | failed | +1 ~0 -0 | apply failed: local-exec provisioner error |", "| `app/web@default` | skipped | - | app/api@default failed |"}
	at := 0
	for _, want := range order {
		i := strings.Index(md[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order in\n%s", want, md)
		}
		at += i + len(want)
	}
	if strings.Contains(md, "No changes. Your infrastructure") {
		t.Errorf("a unit without changes has a plan block:\n%s", md)
	}
	for _, want := range []string{"<summary>net/z@default: applied, +2 ~1 -0</summary>", "<summary>app/api@default: failed, +1 ~0 -0</summary>"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	one := &Report{Command: command.Plan, Stacks: []StackReport{{Name: "s", Path: []string{"s"}, Status: StatusPlanned}},
		Units: []*UnitReport{{Dir: "d", Workspace: "default", Stack: "s", Status: StatusPlanned, Changes: Changes{Add: 1}, Log: "Plan: 1 to add"}}}
	if md := one.Markdown(); !strings.Contains(md, "**+1 ~0 -0** in 1 unit\n") || strings.Contains(md, "1 units") {
		t.Errorf("one unit:\n%s", md)
	}
	stopped := FailedReport(command.Apply, time.Unix(0, 0), time.Unix(1, 0), "another strata holds the repository apply lock")
	if md := stopped.Markdown(); !strings.HasPrefix(md, "## strata apply: stopped\n\n**Stopped before any unit ran.**") {
		t.Errorf("stopped:\n%s", md)
	}
}

func TestCIFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    *CIReport
	}{
		{"not in CI", []string{"CI=true", "GITHUB_SHA=abc"}, nil},
		{"GitHub Actions, pull request", []string{"GITHUB_ACTIONS=true", "GITHUB_SHA=abc123", "GITHUB_BASE_REF=main",
			"GITHUB_SERVER_URL=https://github.com", "GITHUB_REPOSITORY=o/r", "GITHUB_RUN_ID=99"},
			&CIReport{Service: "github", Commit: "abc123", CommitURL: "https://github.com/o/r/commit/abc123", Base: "main", RunURL: "https://github.com/o/r/actions/runs/99"}},
		{"GitHub Actions, push: no base", []string{"GITHUB_ACTIONS=true", "GITHUB_SHA=abc123", "GITHUB_BASE_REF="},
			&CIReport{Service: "github", Commit: "abc123"}},
		{"GitLab CI, merge request", []string{"GITLAB_CI=true", "CI_COMMIT_SHA=def456", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main",
			"CI_PIPELINE_URL=https://gitlab.example/g/p/-/pipelines/7", "CI_PROJECT_URL=https://gitlab.example/g/p"},
			&CIReport{Service: "gitlab", Commit: "def456", CommitURL: "https://gitlab.example/g/p/-/commit/def456", Base: "main", RunURL: "https://gitlab.example/g/p/-/pipelines/7"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CIFromEnv(tc.environ); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("CIFromEnv = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestReportJSONIsAdditive: outside CI the report has no "ci" key and
// nothing of the summary's ordering; in CI the key is there.
func TestReportJSONIsAdditive(t *testing.T) {
	rep := &Report{Version: 1, Command: command.Plan, Stacks: []StackReport{}, Units: []*UnitReport{{Dir: "d", Workspace: "default", Stack: "s", Order: 7}}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"ci"`) || strings.Contains(string(b), "order") {
		t.Errorf("report: %s", b)
	}
	rep.CI = &CIReport{Service: "gitlab", Commit: "def"}
	b, _ = json.Marshal(rep)
	if !strings.Contains(string(b), `"ci":{"service":"gitlab","commit":"def"}`) {
		t.Errorf("report: %s", b)
	}
}

// codeSpans reads a line of Markdown as CommonMark does for code spans: a
// run of n backticks opens a span that the next run of exactly n closes
// (one space is taken off each end when both are spaces), and an
// unmatched run is text. It returns the spans' contents and the text
// outside them.
func codeSpans(line string) (spans []string, outside string) {
	var out strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			out.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		closeAt := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(line) && line[j+m] == '`' {
				m++
			}
			if m == n {
				closeAt = j
				break
			}
			j += m
		}
		if closeAt < 0 {
			out.WriteString(line[i : i+n])
			i += n
			continue
		}
		c := line[i+n : closeAt]
		if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.TrimLeft(c, " ") != "" {
			c = c[1 : len(c)-1]
		}
		spans = append(spans, c)
		out.WriteString("\x00")
		i = closeAt + n
	}
	return spans, out.String()
}

// TestMarkdownEscapesNames: a base branch or a unit name holding backticks
// (legal in a git ref and in a dir name) stays whole in one code span, so
// what follows a backtick in it, such as "](http://x)", never becomes a
// link or other markup; a "|" in a unit name does not break its table
// row; and in HTML the name is text.
func TestMarkdownEscapesNames(t *testing.T) {
	for _, name := range []string{"ma`in](http://x)", "`x", "x``", "a ``` b", " sp ", "plain"} {
		spans, outside := codeSpans(codeSpan(name))
		if len(spans) != 1 || spans[0] != name || outside != "\x00" {
			t.Errorf("codeSpan(%q) = %q: spans %q, outside %q", name, codeSpan(name), spans, outside)
		}
	}
	base := "ma`in](http://x)"
	rep := &Report{Command: command.Plan,
		Stacks: []StackReport{{Name: "s", Path: []string{"s"}, Status: StatusPlanned}},
		Units: []*UnitReport{{Dir: "d`ir|x](http://y)<b>", Workspace: "default", Stack: "s", Status: StatusPlanned,
			Changes: Changes{Add: 1}, Log: "Plan: 1 to add"}},
		CI: &CIReport{Service: "github", Commit: "0123456789abcdef", Base: base}}
	md := rep.Markdown()
	lines := strings.Split(md, "\n")
	spans, outside := codeSpans(lines[2])
	if !reflect.DeepEqual(spans, []string{"0123456789ab", base}) || strings.Contains(outside, "](") || strings.Contains(outside, "`") {
		t.Errorf("context line %q: spans %q, outside %q", lines[2], spans, outside)
	}
	row := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") && strings.Contains(l, "planned") {
			row = l
		}
	}
	// GitHub splits a row at every "|" not escaped, in a code span too,
	// then reads each cell.
	var cells []string
	cell := ""
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cell += "|"
			i++
		case row[i] == '|':
			cells, cell = append(cells, cell), ""
		default:
			cell += string(row[i])
		}
	}
	if len(cells) == 5 {
		spans, outside = codeSpans(cells[1])
	}
	if len(cells) != 5 || !reflect.DeepEqual(spans, []string{"d`ir|x](http://y)<b>@default"}) || strings.TrimSpace(outside) != "\x00" {
		t.Errorf("unit row %q: cells %q, spans %q", row, cells, spans)
	}
	if !strings.Contains(md, "<summary>d`ir|x](http://y)&lt;b&gt;@default: planned, +1 ~0 -0</summary>") {
		t.Errorf("the unit's name is not HTML text in its block's summary:\n%s", md)
	}
}

func TestExitCode(t *testing.T) {
	rep := func(statuses ...Status) *Report {
		r := &Report{}
		for _, s := range statuses {
			r.Units = append(r.Units, &UnitReport{Status: s})
		}
		return r
	}
	tests := []struct {
		rep      *Report
		command  string
		detailed bool
		want     int
	}{
		{rep(StatusNoChanges, StatusApplied), command.Apply, false, 0},
		{rep(StatusPlanned, StatusNoChanges), command.Plan, false, 0},
		{rep(StatusPlanned, StatusNoChanges), command.Plan, true, 2},
		{rep(StatusBlocked), command.Plan, true, 2},
		{rep(StatusDeferred), command.Plan, true, 2},
		{rep(StatusDeferred, StatusPlanned), command.Plan, false, 0},
		{rep(StatusApplied, StatusDeferred), command.Apply, false, 1},
		{rep(StatusApplied), command.Plan, true, 2}, // auto-applied
		{rep(StatusNoChanges), command.Drift, true, 0},
		{rep(StatusPlanned, StatusFailed), command.Plan, true, 1},
		{rep(StatusSkipped), command.Apply, false, 1},
		{rep(StatusCancelled), command.Plan, false, 1},
		// apply and destroy carry the DAG to its end: a unit left blocked
		// means they did not.
		{rep(StatusApplied, StatusBlocked), command.Apply, false, 1},
		{rep(StatusBlocked), command.Destroy, false, 1},
		{rep(StatusBlocked), command.Plan, false, 0},
		// A plan not approved: apply exits 1, as terraform's "no" does.
		{rep(StatusApplied, StatusPlanned), command.Apply, false, 1},
		// init, validate and output have no gate: every unit must run.
		{rep(StatusSucceeded, StatusSucceeded), command.Init, false, 0},
		{rep(StatusSucceeded, StatusBlocked), command.Validate, false, 1},
		{rep(StatusBlocked), command.Output, true, 1},
		{rep(StatusSucceeded, StatusPlanned), command.Init, false, 1},
	}
	for i, tc := range tests {
		if got := exitCode(tc.rep, tc.command, tc.detailed); got != tc.want {
			t.Errorf("%d: exit %d, want %d", i, got, tc.want)
		}
	}
}

func TestMarkdownIsCutPerUnit(t *testing.T) {
	rep := &Report{Command: command.Plan, Stacks: []StackReport{{Name: "s", Path: []string{"s"}, Status: StatusPlanned}}}
	for i := 0; i < 3; i++ {
		rep.Units = append(rep.Units, &UnitReport{Dir: fmt.Sprintf("d%d", i), Workspace: "default", Stack: "s", Status: StatusPlanned,
			Log: strings.Repeat("line of plan output\n", 40000)})
	}
	md := rep.Markdown()
	if len(md) > summaryLimit+4096 {
		t.Errorf("summary is %d bytes, over the limit", len(md))
	}
	if strings.Count(md, "… cut:") != 3 || strings.Count(md, "<details>") != 3 {
		t.Errorf("each unit's log is cut with a note")
	}
	small := &Report{Command: command.Plan, Stacks: rep.Stacks, Units: []*UnitReport{{Dir: "d", Workspace: "default", Stack: "s", Status: StatusPlanned, Log: "Plan: 1 to add"}}}
	if md := small.Markdown(); strings.Contains(md, "cut") || !strings.Contains(md, "### s — planned") || !strings.Contains(md, "Plan: 1 to add") {
		t.Errorf("small summary:\n%s", md)
	}
}

// TestMarkdownCutKeepsCharacters: a log cut for the summary's limit is cut
// on a character boundary, and the count says what the cut left out.
func TestMarkdownCutKeepsCharacters(t *testing.T) {
	t.Parallel()
	var units []*UnitReport
	for i := range 3 {
		units = append(units, &UnitReport{Dir: fmt.Sprintf("d%d", i), Workspace: "default", Stack: "s", Status: StatusPlanned, Log: "x" + strings.Repeat("é", 300_000)})
	}
	md := NewReport("plan", time.Now(), time.Now(), units, false).Markdown()
	if !utf8.ValidString(md) {
		t.Error("the summary is not valid UTF-8: a log was cut inside a character")
	}
}

// TestDetailedOnlyWhereTaken: -detailed-exitcode counts for a command
// whose policy takes it (plan), drift's exit code is always detailed, and
// apply's never is, whoever assembles the report: a run on one machine
// or ci finish.
func TestDetailedOnlyWhereTaken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		command  string
		detailed bool
		status   Status
		want     int
	}{
		{"plan", true, StatusPlanned, 2},
		{"plan", false, StatusPlanned, 0},
		{"drift", false, StatusPlanned, 2},
		{"apply", true, StatusApplied, 0},
	} {
		units := []*UnitReport{{Dir: "a", Workspace: "default", Stack: "s", Status: tc.status}}
		if got := NewReport(tc.command, time.Now(), time.Now(), units, tc.detailed).ExitCode; got != tc.want {
			t.Errorf("%s (detailed %v), a unit %s: exit %d, want %d", tc.command, tc.detailed, tc.status, got, tc.want)
		}
	}
}

// TestColourTable: at a terminal each status is in its colour, and the
// columns line up as without colour.
func TestColourTable(t *testing.T) {
	t.Parallel()
	rep := &Report{Units: []*UnitReport{
		{Dir: "a", Workspace: "default", Stack: "s", StackPath: []string{"s"}, Status: StatusApplied},
		{Dir: "bbbbbbbbbbbb", Workspace: "default", Stack: "s", StackPath: []string{"s"}, Status: StatusDenied, Reason: "bob may not apply it"},
	}}
	var plain, colour strings.Builder
	rep.WriteTable(&plain)
	rep.WriteColourTable(&colour)
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("the plain table has escapes:\n%q", plain.String())
	}
	for _, want := range []string{"\x1b[32mapplied\x1b[0m", "\x1b[31mdenied\x1b[0m"} {
		if !strings.Contains(colour.String(), want) {
			t.Errorf("no %q in\n%q", want, colour.String())
		}
	}
	stripped := regexp.MustCompile("\x1b\\[[0-9]+m").ReplaceAllString(colour.String(), "")
	if stripped != plain.String() {
		t.Errorf("colours moved the columns:\n%s\nwant\n%s", stripped, plain.String())
	}
}

// TestMarkdownWhy: when a unit is in the run for more than being selected
// (a change, a read, propagation), the summary's table says each unit's
// why, as code; a run of selected units only has no why column.
func TestMarkdownWhy(t *testing.T) {
	t.Parallel()
	unit := func(dir, why string) *UnitReport {
		return &UnitReport{Dir: dir, Workspace: "default", Stack: "s", Status: StatusPlanned, Why: why}
	}
	stacks := []StackReport{{Name: "s", Path: []string{"s"}, Status: StatusPlanned}}
	tests := []struct {
		name  string
		units []*UnitReport
		want  []string
		not   []string
	}{
		{"changed", []*UnitReport{unit("net", "modified: shared/net.json (read by net/main.tf:2)"), unit("app", "modified_by: network")},
			[]string{"| unit | status | changes | reason | why |", "| `net@default` | planned | +0 ~0 -0 |  | `modified: shared/net.json (read by net/main.tf:2)` |", "| `app@default` | planned | +0 ~0 -0 |  | `modified_by: network` |"}, nil},
		{"a file name with a bar", []*UnitReport{unit("net", "modified: a|b.json (read by net/main.tf:2)")},
			[]string{"| `modified: a\\|b.json (read by net/main.tf:2)` |"}, nil},
		{"selected only", []*UnitReport{unit("net", "selected")},
			[]string{"| unit | status | changes | reason |\n"}, []string{"| why |", "`selected`"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			md := (&Report{Command: command.Plan, Stacks: stacks, Units: tc.units}).Markdown()
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("summary has no %q:\n%s", w, md)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(md, n) {
					t.Errorf("summary has %q:\n%s", n, md)
				}
			}
		})
	}
}

// TestTableWhy: the console's table says each unit's why when some unit
// is in the run for more than being selected, in a last column; a run of
// selected units only has none.
func TestTableWhy(t *testing.T) {
	t.Parallel()
	units := []*UnitReport{
		{Dir: "net", Workspace: "default", Stack: "s", StackPath: []string{"s"}, Status: StatusPlanned, Why: "modified: shared/net.json (read by net/main.tf:2)"},
		{Dir: "app", Workspace: "default", Stack: "s", StackPath: []string{"s"}, Status: StatusPlanned, Why: "depends_on: net@default"},
	}
	var b strings.Builder
	(&Report{Units: units}).WriteTable(&b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "REASON  WHY") || !strings.HasSuffix(lines[1], "modified: shared/net.json (read by net/main.tf:2)") ||
		!strings.HasSuffix(lines[2], "depends_on: net@default") {
		t.Errorf("the table of a changed run:\n%s", b.String())
	}
	for _, u := range units {
		u.Why = "selected"
	}
	b.Reset()
	(&Report{Units: units}).WriteTable(&b)
	if strings.Contains(b.String(), "WHY") || strings.Contains(b.String(), "selected") {
		t.Errorf("a run of selected units shows a why:\n%s", b.String())
	}
}

// TestTableRunOrder: the final table lists units by layer, then by when
// each started, across stacks; a unit's duration is its own running time,
// and the time it waited between its plan and its apply is shown apart.
func TestTableRunOrder(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	step := func(name string, from, to int) StepReport {
		return StepReport{Name: name, StartedAt: at(from), FinishedAt: at(to)}
	}
	units := []*UnitReport{
		{Dir: "a", Workspace: "default", Stack: "z", StackPath: []string{"z"}, Status: StatusApplied, Layer: 0, Order: 0,
			Steps: []StepReport{step("plan", 5, 7), step("apply", 37, 40)}},
		{Dir: "b", Workspace: "default", Stack: "a", StackPath: []string{"a"}, Status: StatusApplied, Layer: 0, Order: 1,
			Steps: []StepReport{step("plan", 0, 2), step("apply", 2, 3)}},
		{Dir: "c", Workspace: "default", Stack: "a", StackPath: []string{"a"}, Status: StatusSkipped, Layer: 1, Order: 2},
		{Dir: "d", Workspace: "default", Stack: "m", StackPath: []string{"m"}, Status: StatusApplied, Layer: 1, Order: 3,
			Steps: []StepReport{step("init", 41, 42), step("plan", 41, 43)}},
	}
	var b strings.Builder
	(&Report{Units: units}).WriteTable(&b)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{
		"STACK UNIT STATUS CHANGES DURATION WAITED REASON",
		"a b@default applied - 3s -",
		"z a@default applied - 5s 30s",
		"m d@default applied - 2s -",
		"a c@default skipped - - -",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTableTellsAWarningOnce: a warning several units carry is in the
// table once, at the first of them, with how many carry it; a unit's own
// warning stays with it.
func TestTableTellsAWarningOnce(t *testing.T) {
	t.Parallel()
	shared := "a corrupt record in the state bucket was moved aside"
	units := []*UnitReport{
		{Dir: "a", Workspace: "default", Stack: "s", StackPath: []string{"s"}, Status: StatusPlanned, Warnings: []string{shared}},
		{Dir: "b", Workspace: "default", Stack: "s", StackPath: []string{"s"}, Status: StatusPlanned, Reason: "planned against a@default's plan", Warnings: []string{shared, "its own"}},
		{Dir: "c", Workspace: "default", Stack: "s", StackPath: []string{"s"}, Status: StatusPlanned, Warnings: []string{shared}},
	}
	var b strings.Builder
	(&Report{Units: units}).WriteTable(&b)
	out := b.String()
	if n := strings.Count(out, shared); n != 1 || !strings.Contains(out, "warning: "+shared+" (for 3 units)") {
		t.Errorf("the shared warning is told %d times:\n%s", n, out)
	}
	if !strings.Contains(out, "planned against a@default's plan; warning: its own") {
		t.Errorf("b's reason and own warning:\n%s", out)
	}
}
