package runner

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// A plan before the engines, at scale (docs/architecture.md#the-graph):
// what a plan of every unit of a generated repository of 10,000 or 50,000
// units (testenv.ScaleShapes) holds, with jobs that start no engine and
// answer at once. Skipped unless STRATA_BENCH_SCALE=1 (make bench sets it).

// scaleRepos are the repositories generated in this process; TestMain
// removes them.
var scaleRepos testenv.ScaleRepos

func TestMain(m *testing.M) {
	code := m.Run()
	scaleRepos.RemoveAll()
	os.Exit(code)
}

// noChangeJobs is the work of a plan whose every unit plans at once with
// nothing to change, so that every unit is scheduled and none is skipped.
func noChangeJobs() work {
	return work{
		job: func(context.Context, *unit, job.Kind, func()) job.Result { return job.Result{} },
		outside: func(_ context.Context, ur *unitRun) {
			ur.phase, ur.status = phaseDone, report.StatusBlocked
		},
	}
}

// BenchmarkScalePlan loads the project, selects every unit, builds the
// graph and the run's state (each unit's paths, gates and barriers) and
// schedules a plan of every unit through jobs that return at once, once an
// iteration. It reports beside time and allocations:
//
//   - cpu-s/op: the process's CPU time, user and system, in the load and
//     the plan (testenv.CPUTime);
//   - load-peak-MB: the highest heap in use while loading the project
//     (testenv.WatchHeap);
//   - project-MB: the project alive after the load;
//   - peak-heap-MB: the highest heap in use from the load to the last job,
//     the project included;
//   - expanded-pairs: the edges the graph would hold with every stack rule
//     expanded to an edge between every pair of units, as it used to be.
//
// The collector runs at 200, as in the strata binary. dense-10000/expand
// measures Graph.Expand alone on the dense shape of 10,000 units.
func BenchmarkScalePlan(b *testing.B) {
	if os.Getenv("STRATA_BENCH_SCALE") != "1" {
		b.Skip("generates repositories of 50,000 units: set STRATA_BENCH_SCALE=1 (make bench does)")
	}
	// As in the strata binary.
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	for _, shape := range testenv.ScaleShapes {
		b.Run(shape.Name, func(b *testing.B) {
			root := scaleRepos.Repo(b, shape)
			b.Run("plan", func(b *testing.B) { benchScalePlan(b, root, shape.Units) })
			if shape.Name == "dense-10000" {
				b.Run("expand", func(b *testing.B) { benchScaleExpand(b, root) })
			}
		})
	}
}

func benchScalePlan(b *testing.B, root string, units int) {
	b.ReportAllocs()
	var loadPeak, project, peak uint64
	var cpu time.Duration
	var pairs int
	for b.Loop() {
		h := testenv.WatchHeap()
		before := h.Base()
		start := testenv.CPUTime()
		p, err := stacks.Load(root, filepath.Join(root, config.StrataConfigFile))
		if err != nil {
			b.Fatal(err)
		}
		cpu += testenv.CPUTime() - start
		loaded := h.Stop()
		b.StopTimer()
		h = testenv.WatchHeap()
		alive := max(h.Base(), before) - before
		b.StartTimer()
		start = testenv.CPUTime()
		r := newSchedulerRun(b, p, Options{Settings: Settings{Command: CmdPlan}}, (*runState).link)
		r.schedule(context.Background(), noChangeJobs())
		cpu += testenv.CPUTime() - start
		planned := h.Stop()
		b.StopTimer()
		loadPeak, project, peak = max(loadPeak, loaded), max(project, alive), max(peak, loaded, alive+planned)
		if len(r.units) != units {
			b.Fatalf("%d units in the run, want %d", len(r.units), units)
		}
		for _, ur := range r.units {
			if ur.status != report.StatusNoChanges {
				b.Fatalf("%s: %s (%s)", ur.Spec.Name(), ur.status, ur.reason)
			}
		}
		pairs = expandedPairs(r.g)
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(loadPeak)/1e6, "load-peak-MB")
	b.ReportMetric(float64(project)/1e6, "project-MB")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(pairs), "expanded-pairs")
}

// expandedPairs counts the edges of g.Expand() without making them.
func expandedPairs(g *stacks.Graph) int {
	n := len(g.Edges)
	for _, e := range g.StackEdges {
		n += len(g.UnitsOf(e.From)) * len(g.UnitsOf(e.To))
	}
	return n
}

// benchScaleExpand measures Graph.Expand: every stack rule as an edge
// between every pair of units, the graph strata used to build.
func benchScaleExpand(b *testing.B, root string) {
	p, err := stacks.Load(root, filepath.Join(root, config.StrataConfigFile))
	if err != nil {
		b.Fatal(err)
	}
	g, err := p.Graph(p.Units, stacks.GraphOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var peak uint64
	var n int
	for b.Loop() {
		h := testenv.WatchHeap()
		n = len(g.Expand())
		peak = max(peak, h.Stop())
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(n), "pairs")
}
