package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
)

// at is a time n minutes into the tests' day.
func at(n int) time.Time {
	return time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute)
}

// unitReport is a unit of a report with one plan step of ms.
func unitReport(dir string, status report.Status, start time.Time, ms int) *report.UnitReport {
	return &report.UnitReport{Dir: dir, Workspace: "default", Stack: "default", Status: status,
		Changes: report.Changes{Add: 1},
		Steps: []report.StepReport{
			{Name: "init", StartedAt: start, FinishedAt: start.Add(100 * time.Millisecond), OK: true},
			{Name: "plan", StartedAt: start.Add(100 * time.Millisecond), FinishedAt: start.Add(time.Duration(100+ms) * time.Millisecond), OK: status != report.StatusFailed},
		}}
}

// run is the record of a command at minute n over units (dir → status).
func run(command string, n int, units map[string]report.Status) *Record {
	var us []*report.UnitReport
	for dir, s := range units {
		us = append(us, unitReport(dir, s, at(n), 1000))
	}
	rep := report.Assemble(command, at(n), at(n).Add(30*time.Second), us, false)
	return FromReport(rep, Meta{Commit: "c0ffee", Actor: "alice", Run: fmt.Sprintf("r%d", n)})
}

func TestFromReport(t *testing.T) {
	t.Parallel()
	if FromReport(report.Assemble("init", at(0), at(1), nil, false), Meta{}) != nil {
		t.Error("init is recorded")
	}
	r := run("drift", 5, map[string]report.Status{"b": report.StatusPlanned, "a": report.StatusNoChanges, "c": report.StatusFailed})
	if r.ID != "20260102T030500.000000000Z-r5" || r.Command != "drift" || r.Commit != "c0ffee" || r.Actor != "alice" || r.ExitCode != 1 {
		t.Errorf("record %+v", r)
	}
	want := []struct {
		id    string
		drift report.Status
	}{{"a@default#default", StatusInSync}, {"b@default#default", StatusDrifted}, {"c@default#default", ""}}
	for i, w := range want {
		u := r.Units[i]
		if u.ID != w.id || u.Drift != w.drift {
			t.Errorf("unit %d: %s drift %q, want %s %q", i, u.ID, u.Drift, w.id, w.drift)
		}
	}
	if s := r.Units[0].Steps; len(s) != 2 || s[1].Name != "plan" || s[1].StartMS != 100 || s[1].MS != 1000 {
		t.Errorf("steps %+v", s)
	}
	if c := r.Counts(); c[StatusDrifted] != 1 || c[StatusInSync] != 1 || c[report.StatusFailed] != 1 {
		t.Errorf("counts %v", c)
	}
	local := FromReport(report.Assemble("plan", at(0), at(1), nil, false), Meta{})
	if !ValidName(local.ID) || local.Run != "" {
		t.Errorf("a local run's id %q, run %q", local.ID, local.Run)
	}
	ci := FromReport(report.Assemble("plan", at(0), at(1), nil, false), Meta{Run: "a/../b c"})
	if !ValidName(ci.ID) || strings.ContainsAny(ci.ID, "/ ") {
		t.Errorf("a CI run's id %q", ci.ID)
	}
}

// TestIndexStatuses: each unit's last status and drift after a series
// of runs, in the order they finished, and when an older run's record
// comes in late (two runs ending at once): it does not undo what a later
// one said.
func TestIndexStatuses(t *testing.T) {
	t.Parallel()
	p, a, n, d, f, s := report.StatusPlanned, report.StatusApplied, report.StatusNoChanges, report.StatusDestroyed, report.StatusFailed, report.StatusSkipped
	recs := []*Record{
		run("apply", 0, map[string]report.Status{"x": a, "y": a, "z": a}),
		run("drift", 10, map[string]report.Status{"x": p, "y": n, "z": p}),
		run("drift", 20, map[string]report.Status{"x": p, "z": n}),
		run("apply", 30, map[string]report.Status{"x": f, "y": s}),
		run("plan", 40, map[string]report.Status{"w": p}),
		run("destroy", 50, map[string]report.Status{"v": d}),
	}
	tests := []struct {
		id        string
		status    report.Status
		drift     report.Status
		since     time.Time
		neverOnce bool
	}{
		// Drifted at 10 and 20: since 10; the failed apply keeps it so.
		{"x@default#default", f, StatusDrifted, at(10).Add(30 * time.Second), false},
		// In sync at 10; the skip at 30 is no status.
		{"y@default#default", StatusInSync, StatusInSync, time.Time{}, false},
		// Drifted at 10, in sync at 20.
		{"z@default#default", StatusInSync, StatusInSync, time.Time{}, false},
		{"w@default#default", p, "", time.Time{}, true},
		{"v@default#default", d, "", time.Time{}, true},
	}
	for name, order := range map[string][]int{"in order": {0, 1, 2, 3, 4, 5}, "late": {0, 2, 1, 3, 5, 4}} {
		ix := newIndex()
		for _, i := range order {
			ix.add(recs[i], 100)
		}
		for _, tt := range tests {
			us := ix.Units[tt.id]
			if us == nil {
				t.Fatalf("%s: %s has no status", name, tt.id)
			}
			since := time.Time{}
			if us.DriftedSince != nil {
				since = *us.DriftedSince
			}
			if name != "in order" {
				// The first check of the series came in after the
				// second: the unit drifted since the second.
				since = tt.since
			}
			if us.Status != tt.status || us.Drift != tt.drift || !since.Equal(tt.since) || (us.AppliedAt == nil) != tt.neverOnce {
				t.Errorf("%s: %s: %+v (since %v), want status %s drift %q since %v never applied %v", name, tt.id, us, since, tt.status, tt.drift, tt.since, tt.neverOnce)
			}
		}
		if len(ix.Runs) != 6 || ix.Runs[0].Command != "destroy" || ix.Runs[5].Command != "apply" {
			t.Errorf("%s: runs %+v", name, ix.Runs)
		}
	}
	ix := build(recs, 2)
	if len(ix.Runs) != 2 || ix.Runs[1].Command != "plan" {
		t.Errorf("kept runs %+v, want the newest 2", ix.Runs)
	}
}

func TestParseStatuses(t *testing.T) {
	t.Parallel()
	drifted := &UnitStatus{Status: StatusDrifted, Drift: StatusDrifted}
	failedDrifted := &UnitStatus{Status: report.StatusFailed, Drift: StatusDrifted}
	applied := &UnitStatus{Status: report.StatusApplied, AppliedAt: new(time.Time)}
	tests := []struct {
		values  []string
		err     string
		matches []*UnitStatus
		misses  []*UnitStatus
	}{
		{values: []string{"drifted"}, matches: []*UnitStatus{drifted, failedDrifted}, misses: []*UnitStatus{applied, nil}},
		{values: []string{"failed"}, matches: []*UnitStatus{failedDrifted}, misses: []*UnitStatus{drifted, nil}},
		{values: []string{"never applied"}, matches: []*UnitStatus{nil, drifted}, misses: []*UnitStatus{applied}},
		{values: []string{"never_applied,applied"}, matches: []*UnitStatus{nil, applied}},
		{values: []string{"drifed"}, err: "--status drifed: no such status; did you mean drifted?"},
		{values: []string{"bogus"}, err: "expected one of: drifted, in-sync, planned"},
	}
	for _, tt := range tests {
		f, err := ParseStatuses(tt.values)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want %q", tt.values, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tt.values, err)
		}
		for _, us := range tt.matches {
			if !f.Match(us) {
				t.Errorf("%v does not match %+v", tt.values, us)
			}
		}
		for _, us := range tt.misses {
			if f.Match(us) {
				t.Errorf("%v matches %+v", tt.values, us)
			}
		}
	}
	if f, err := ParseStatuses(nil); f != nil || err != nil {
		t.Errorf("no --status: %v, %v", f, err)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	runOf := func(ms ...int64) UnitRun {
		var steps []Step
		for i, m := range ms {
			steps = append(steps, Step{Name: []string{"init", "plan"}[i], MS: m, OK: true})
		}
		return UnitRun{Unit: Unit{Steps: steps}}
	}
	tests := []struct {
		name             string
		runs             []UnitRun // newest first
		step             string
		p50, p95, latest time.Duration
		slow             bool
	}{
		{"steady", []UnitRun{runOf(100, 1000), runOf(100, 1100), runOf(100, 900)}, "plan", time.Second, 1100 * time.Millisecond, time.Second, false},
		{"slower", []UnitRun{runOf(100, 5000), runOf(100, 1000), runOf(100, 1000), runOf(100, 1000)}, "plan", time.Second, 5 * time.Second, 5 * time.Second, true},
		// Twice as slow but not a second more: not flagged.
		{"fast", []UnitRun{runOf(100, 900), runOf(100, 300), runOf(100, 300)}, "plan", 300 * time.Millisecond, 900 * time.Millisecond, 900 * time.Millisecond, false},
		{"total", []UnitRun{runOf(100, 5000), runOf(100, 1000), runOf(100, 1000)}, Total, 1100 * time.Millisecond, 5100 * time.Millisecond, 5100 * time.Millisecond, true},
		{"latest without it", []UnitRun{runOf(100), runOf(100, 1000)}, "plan", time.Second, time.Second, 0, false},
	}
	for _, tt := range tests {
		var got *StepStats
		stats := Stats(tt.runs)
		for i := range stats {
			if stats[i].Name == tt.step {
				got = &stats[i]
			}
		}
		if got == nil {
			t.Fatalf("%s: no %s in %+v", tt.name, tt.step, stats)
		}
		if got.P50 != tt.p50 || got.P95 != tt.p95 || got.Latest != tt.latest || got.Slow != tt.slow {
			t.Errorf("%s: %+v, want p50 %v p95 %v latest %v slow %v", tt.name, got, tt.p50, tt.p95, tt.latest, tt.slow)
		}
		if stats[len(stats)-1].Name != Total || stats[0].Name != "init" {
			t.Errorf("%s: order %+v", tt.name, stats)
		}
	}
}

// stores are a state dir's history and a bucket's, for one test.
func stores(t *testing.T) map[string]*History {
	t.Helper()
	st, err := objstore.Open(context.Background(), "file://"+t.TempDir(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return map[string]*History{"local": Local(t.TempDir()), "bucket": InBucket(st)}
}

// TestAppendKeeps: the last keep runs are kept, the oldest removed first,
// in the index too; runs ending at once all keep their record.
func TestAppendKeeps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, h := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for n := range 5 {
				if err := h.Append(ctx, run("plan", n, map[string]report.Status{"a": report.StatusPlanned}), 3); err != nil {
					t.Fatal(err)
				}
			}
			recs, err := h.Runs(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 3 || !recs[0].StartedAt.Equal(at(4)) || !recs[2].StartedAt.Equal(at(2)) {
				t.Fatalf("kept %d runs, newest %v", len(recs), recs[0].StartedAt)
			}
			// Eight runs end at once.
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for n := 10; n < 18; n++ {
				wg.Go(func() {
					errs <- h.Append(ctx, run("drift", n, map[string]report.Status{fmt.Sprintf("u%d", n): report.StatusPlanned}), 100)
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			ix, err := h.Index(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ix.Runs) != 11 {
				t.Errorf("the index lists %d runs, want 11", len(ix.Runs))
			}
			for n := 10; n < 18; n++ {
				if us := ix.Units[fmt.Sprintf("u%d@default#default", n)]; us == nil || us.Drift != StatusDrifted {
					t.Errorf("u%d: %+v", n, us)
				}
			}
			if recs, _ := h.Runs(ctx, 0); len(recs) != 11 {
				t.Errorf("%d records, want 11", len(recs))
			}
		})
	}
}

// TestUntrustedRecords: a record that is not one strata wrote is skipped,
// named in a warning; an index that cannot be read is built again from
// the records; neither panics.
func TestUntrustedRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	h := Local(dir)
	var warnings []string
	h.Warn = func(s string) { warnings = append(warnings, s) }
	good := run("drift", 1, map[string]report.Status{"a": report.StatusPlanned})
	if err := h.Append(ctx, good, 100); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "history", "runs")
	bad := map[string]string{
		"20260102T030000.000000000Z-garbage.json":  "{not json",
		"20260102T030100.000000000Z-two.json":      `{"version":1} {}`,
		"20260102T030200.000000000Z-wrongid.json":  `{"version":1,"id":"x","command":"plan","started_at":"2026-01-02T03:00:00Z","finished_at":"2026-01-02T03:00:00Z","units":[]}`,
		"20260102T030300.000000000Z-version.json":  `{"version":7}`,
		"20260102T030400.000000000Z-nounitid.json": `{"version":1,"id":"20260102T030400.000000000Z-nounitid","command":"plan","started_at":"2026-01-02T03:00:00Z","finished_at":"2026-01-02T03:00:00Z","units":[{"status":"planned"}]}`,
		// What a crash can leave of a record, which is not synced.
		"20260102T030500.000000000Z-torn.json": "",
		"../escape.json":                       "",
		"notarecord.json":                      "{}",
	}
	for name, content := range bad {
		if strings.Contains(name, "/") {
			continue
		}
		if err := os.WriteFile(filepath.Join(runs, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := h.Runs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].ID != good.ID {
		t.Errorf("read %d records", len(recs))
	}
	if len(warnings) != 6 {
		t.Errorf("%d warnings, want 6 (one per bad record):\n%s", len(warnings), strings.Join(warnings, "\n"))
	}
	for _, w := range warnings {
		if !strings.Contains(w, runs) || !strings.Contains(w, "skipped") {
			t.Errorf("warning names no record: %s", w)
		}
	}
	warnings = nil
	if err := os.WriteFile(filepath.Join(dir, "history", "index.json"), []byte(`{"version":1,"units":{"x":null}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := h.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if us := ix.Units["a@default#default"]; us == nil || us.Drift != StatusDrifted {
		t.Errorf("the index built again: %+v", ix.Units)
	}
	if len(warnings) == 0 || !strings.Contains(warnings[0], "index.json") {
		t.Errorf("warnings %q", warnings)
	}
}

// TestUnitRunsReadsOneUnit: a unit's runs read for it alone are the runs
// read whole, names that JSON escapes and a record that is not sorted
// included, and a record that cannot be read is skipped with a warning.
func TestUnitRunsReadsOneUnit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	h := Local(dir)
	var warnings []string
	h.Warn = func(s string) { warnings = append(warnings, s) }
	dirs := []string{`we"ird<dir>`, "a", "b", "a/b"}
	for n := range 4 {
		units := map[string]report.Status{}
		for _, d := range dirs[:n+1] {
			units[d] = report.StatusPlanned
		}
		r := run("plan", n, units)
		if n == 2 {
			r.Units[0], r.Units[1] = r.Units[1], r.Units[0]
		}
		if err := h.Append(ctx, r, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "history", "runs", "20260102T040000.000000000Z-bad.json"), []byte(`{"version":1,"id":"20260102T040000.000000000Z-bad","command":"plan","started_at":"2026-01-02T04:00:00Z","finished_at":"2026-01-02T04:00:00Z","units":[{"id":"a@default#default",`), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, err := h.Runs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		id := d + "@default#default"
		got, err := h.UnitRuns(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := RunsByUnit(recs)[id]
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d runs, want %d", id, len(got), len(want))
		}
		for i := range got {
			if got[i].Run.ID != want[i].Run.ID || got[i].Unit.ID != id || len(got[i].Unit.Steps) != 2 {
				t.Errorf("%s: run %d: %+v, want %+v", id, i, got[i], want[i])
			}
		}
	}
	if len(warnings) == 0 || !strings.Contains(warnings[len(warnings)-1], "-bad.json") {
		t.Errorf("warnings %q", warnings)
	}
}

// TestIndexApplyDestroy: a unit with nothing to change in an apply that
// destroys (apply -destroy) is not thereby applied; in an apply that
// does not destroy it is.
func TestIndexApplyDestroy(t *testing.T) {
	t.Parallel()
	destroying := run("apply", 0, map[string]report.Status{"x": report.StatusNoChanges})
	destroying.Destroy = true
	ix := newIndex()
	ix.add(destroying, 100)
	if us := ix.Units["x@default#default"]; us == nil || us.AppliedAt != nil {
		t.Errorf("after apply -destroy: %+v", us)
	}
	ix.add(run("apply", 10, map[string]report.Status{"x": report.StatusNoChanges}), 100)
	if us := ix.Units["x@default#default"]; us == nil || us.AppliedAt == nil {
		t.Errorf("after an apply: %+v", us)
	}
}

// TestValidName: a record's name is its UTC stamp, a dash and at most 120
// safe characters; nothing else is read as a record.
func TestValidName(t *testing.T) {
	const stamp = "20261128T173112.123456789Z-"
	for name, want := range map[string]bool{
		stamp + "run-1": true, stamp + "a=b.c_d": true, stamp + strings.Repeat("x", 120): true,
		stamp: false, stamp + strings.Repeat("x", 121): false, stamp + "a/b": false, stamp + "..": true,
		"20261128T173112.12345678Z-x": false, "20261128T173112.123456789-x": false, "x" + stamp + "x": false, stamp + "x\n": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
