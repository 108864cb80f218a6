package runstate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/strata-iac/strata/report"
)

// TestLastRunHTMLRecord: a run replaces the last-run entries of its own
// units and keeps the others'; a long output is cut on a rune boundary.
func TestLastRunHTMLRecord(t *testing.T) {
	sd, err := OpenStateDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if lr, err := ReadLastRun(sd.Path); err != nil || len(lr.Units) != 0 {
		t.Fatalf("no record: %v %v", lr, err)
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	a := &report.UnitReport{Dir: "a", Workspace: "default", Stack: "a", Status: report.StatusPlanned, Log: "plan of a"}
	b := &report.UnitReport{Dir: "b", Workspace: "default", Stack: "b", Status: report.StatusPlanned}
	if err := sd.RecordLastRun(&report.Report{Command: "plan", StartedAt: t0, Units: []*report.UnitReport{a, b}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", LastLogLimit)
	a2 := &report.UnitReport{Dir: "a", Workspace: "default", Stack: "a", Status: report.StatusApplied, Log: long}
	if err := sd.RecordLastRun(&report.Report{Command: "apply", StartedAt: t0.Add(time.Hour), Units: []*report.UnitReport{a2}}); err != nil {
		t.Fatal(err)
	}
	lr, err := ReadLastRun(sd.Path)
	if err != nil {
		t.Fatal(err)
	}
	ua, ub := lr.Units["a@default#a"], lr.Units["b@default#b"]
	if ua == nil || ub == nil {
		t.Fatalf("units recorded: %v", lr.Units)
	}
	if ua.Command != "apply" || ua.Unit.Status != report.StatusApplied || !ua.StartedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("a = %+v, want the apply", ua)
	}
	if !ua.LogCut || len(ua.Log) > LastLogLimit || !utf8.ValidString(ua.Log) || !strings.HasPrefix(long, ua.Log) {
		t.Errorf("a's output: cut %v, %d bytes, valid %v", ua.LogCut, len(ua.Log), utf8.ValidString(ua.Log))
	}
	if ub.Command != "plan" || ub.Unit.Status != report.StatusPlanned {
		t.Errorf("b = %+v, want the plan kept", ub)
	}
	for _, unit := range []string{"a/default.json", "b/default.json"} {
		if fi, err := os.Stat(filepath.Join(LastRunDir(sd.Path), unit)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("last run of %s: %v %v", unit, fi, err)
		}
	}
}

// TestLastRunConcurrentRuns: runs of different units recording at once
// (each several times) keep every unit.
func TestLastRunConcurrentRuns(t *testing.T) {
	dir := t.TempDir()
	const runs = 8
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sd, err := OpenStateDir(dir)
			for range 10 {
				if err != nil {
					break
				}
				u := &report.UnitReport{Dir: fmt.Sprintf("u%d", i), Workspace: "default", Stack: "s", Status: report.StatusPlanned}
				err = sd.RecordLastRun(&report.Report{Command: "plan", Units: []*report.UnitReport{u}})
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	lr, err := ReadLastRun(dir)
	if err != nil || len(lr.Units) != runs {
		t.Fatalf("%d units recorded of %d: %v", len(lr.Units), runs, err)
	}
}

// TestLastRunOfManyUnits: the last runs of many units, written several
// at a time, are each recorded as their own unit's; when some cannot be
// written (a directory where the file goes) the others still are, and
// the error names the first of those in the report's order.
func TestLastRunOfManyUnits(t *testing.T) {
	sd, err := OpenStateDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{Command: "plan"}
	for i := range 40 {
		rep.Units = append(rep.Units, &report.UnitReport{Dir: fmt.Sprintf("u/u%02d", i), Workspace: "default", Stack: "default",
			Status: report.StatusNoChanges, Log: fmt.Sprintf("log of u%02d", i)})
	}
	for _, i := range []int{31, 7} {
		if err := os.MkdirAll(filepath.Join(LastRunDir(sd.Path), "u", fmt.Sprintf("u%02d", i), "default.json"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	err = sd.RecordLastRun(rep)
	if err == nil || !strings.Contains(err.Error(), "u/u07@default") {
		t.Errorf("error %v, want the one of u/u07, the first unit that failed", err)
	}
	for _, i := range []int{31, 7} {
		os.RemoveAll(filepath.Join(LastRunDir(sd.Path), "u", fmt.Sprintf("u%02d", i)))
	}
	lr, err := ReadLastRun(sd.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Units) != 38 {
		t.Errorf("%d units recorded, want 38", len(lr.Units))
	}
	for id, u := range lr.Units {
		if want := "log of " + strings.TrimPrefix(u.Unit.Dir, "u/"); u.Log != want || id != u.Unit.ID() {
			t.Errorf("%s: log %q, want %q", id, u.Log, want)
		}
	}
}
