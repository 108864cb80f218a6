package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/history"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// The scale benchmarks (docs/architecture.md#the-graph): the commands that
// read the whole repository, in-process, on the generated repositories of
// 10,000 and 50,000 units of testenv.ScaleShapes. make bench runs them once
// each with STRATA_BENCH_SCALE=1; without it they are skipped, so that
// `-bench .` stays quick.

// scaleRepos are the repositories generated in this process; TestMain
// removes them.
var scaleRepos testenv.ScaleRepos

// byteCounter counts what is written to it and keeps none of it.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

// BenchmarkScale runs check, ls, ls --status drifted (with a history of a
// drift check of every unit, every tenth drifted), graph --format json and ci start plan
// --shards 16 on each shape, one command an iteration, and reports beside
// time and allocations: cpu-s/op, the process's CPU time (user and system)
// during the command, which moves less than the wall time when other
// processes keep the machine busy; peak-heap-MB, the highest heap in use during the
// command above what the process held before it (testenv.WatchHeap);
// out-bytes, what the command printed; and for ci start manifest-bytes
// (runs/<id>/manifest.json), waves-bytes (the waves' parts of it, which the
// jobs read) and tree-bytes (the stored tree). The collector runs at 200,
// as in the strata binary.
func BenchmarkScale(b *testing.B) {
	if os.Getenv("STRATA_BENCH_SCALE") != "1" {
		b.Skip("generates repositories of 50,000 units: set STRATA_BENCH_SCALE=1 (make bench does)")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	for _, env := range []string{"CI", "GITHUB_ACTIONS", "GITLAB_CI", "STRATA_STATE_URL", "STRATA_SHARDS"} {
		b.Setenv(env, "")
	}
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("STRATA_CACHE_DIR", filepath.Join(home, "cache"))
	b.Setenv("CHECKPOINT_DISABLE", "1")
	for _, shape := range testenv.ScaleShapes {
		b.Run(shape.Name, func(b *testing.B) {
			root := scaleRepos.Repo(b, shape)
			command := func(name string, args ...string) {
				b.Run(name, func(b *testing.B) { benchScaleCommand(b, root, args...) })
			}
			command("check", "check")
			command("ls", "ls")
			b.Run("ls-status", func(b *testing.B) {
				stateDir := driftedHistory(b, root)
				benchScaleCommand(b, root, "ls", "--status", "drifted", "--state-dir", stateDir)
			})
			command("graph-json", "graph", "--format", "json")
			b.Run("ci-start", func(b *testing.B) {
				bucket := b.TempDir()
				benchScaleCommand(b, root, "ci", "start", "plan", "--shards", "16", "--state", "file://"+bucket)
				reportRunSizes(b, bucket)
			})
		})
	}
}

// benchScaleCommand runs strata with args in root, in-process, once an
// iteration.
func benchScaleCommand(b *testing.B, root string, args ...string) {
	b.Helper()
	args = append([]string{"strata", "-C", root}, args...)
	b.ReportAllocs()
	var peak uint64
	var cpu time.Duration
	var out byteCounter
	for b.Loop() {
		out = 0
		var errOut byteCounter
		h := testenv.WatchHeap()
		start := testenv.CPUTime()
		code := run(args, &out, &errOut)
		cpu += testenv.CPUTime() - start
		peak = max(peak, h.Stop())
		if code != 0 {
			// Run again for its messages: the first run kept none.
			run(args, io.Discard, os.Stderr)
			b.Fatalf("%v: exit %d", args[1:], code)
		}
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(out), "out-bytes")
}

// reportRunSizes reports the sizes of the files of the last run ci start
// wrote into the bucket dir.
func reportRunSizes(b *testing.B, bucket string) {
	b.Helper()
	runs, err := os.ReadDir(filepath.Join(bucket, "runs"))
	if err != nil || len(runs) == 0 {
		b.Fatalf("no run in the bucket: %v", err)
	}
	dir := filepath.Join(bucket, "runs", runs[len(runs)-1].Name())
	size := func(pattern string) float64 {
		paths, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil || len(paths) == 0 {
			b.Fatalf("no %s in %s: %v", pattern, dir, err)
		}
		var n int64
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				b.Fatal(err)
			}
			n += fi.Size()
		}
		return float64(n)
	}
	b.ReportMetric(size("manifest.json"), "manifest-bytes")
	b.ReportMetric(size("waves/*.json"), "waves-bytes")
	b.ReportMetric(size("tree-*.json"), "tree-bytes")
}

// TestScaleShapes checks the generated repositories hold the units and
// stacks they are named for, on small sizes of the same generators.
func TestScaleShapes(t *testing.T) {
	for _, tc := range []struct {
		write         func(string) error
		units, stacks int
	}{
		{func(dir string) error { return testenv.WriteStacked(dir, 3, 4) }, 12, 3},
		{func(dir string) error { return testenv.WriteLayered(dir, 3, 4) }, 12, 12},
		{func(dir string) error { return testenv.WriteGrouped(dir, 3, 8, 4) }, 24, 6},
	} {
		dir := t.TempDir()
		if err := tc.write(dir); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := strata(t, "-C", dir, "check")
		want := fmt.Sprintf("%d dirspaces, %d stacks (%d leaf), %d units", tc.units, tc.stacks, tc.stacks, tc.units)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("check: exit %d, want %q in\n%s%s", code, want, out, errOut)
		}
	}
}

// driftedHistory is a state dir whose history holds a drift check of
// every unit of the repository at root, every tenth drifted.
func driftedHistory(b *testing.B, root string) string {
	b.Helper()
	p, err := stacks.Load(root, filepath.Join(root, "strata.yml"))
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	units := make([]*report.UnitReport, len(p.Units))
	for i, u := range p.Units {
		s := report.StatusNoChanges
		if i%10 == 0 {
			s = report.StatusPlanned
		}
		units[i] = &report.UnitReport{Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, Status: s,
			Steps: []report.StepReport{{Name: report.StepPlan, StartedAt: t0, FinishedAt: t0.Add(time.Second), OK: true}}}
	}
	dir := b.TempDir()
	rec := history.FromReport(report.Assemble("drift", t0, t0.Add(time.Minute), units, false), history.Meta{})
	if err := history.Local(dir).Append(context.Background(), rec, history.DefaultKeep); err != nil {
		b.Fatal(err)
	}
	return dir
}
