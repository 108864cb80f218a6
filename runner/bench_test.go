package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// Benchmarks of the runner's performance targets (issue 4), with real
// terraform from PATH in the hermetic environment of the e2e tests:
//
//   - BenchmarkWrapperOverhead: strata's plan of one initialised unit
//     against terraform's plan run directly in the same dir (target: within
//     10%);
//   - BenchmarkMakespan: `apply -auto-approve` of a generated DAG of 40 units
//     at parallelism 4 against the lower bound max(critical path, work / 4)
//     (target: within 10%).
//
// They report what they measure with b.ReportMetric and assert nothing
// about time.

// benchTerraform returns the terraform on PATH, or skips.
func benchTerraform(b *testing.B) string {
	b.Helper()
	if testing.Short() {
		b.Skip("runs terraform")
	}
	tf, err := exec.LookPath("terraform")
	if err != nil {
		b.Skip("terraform is not on PATH")
	}
	return tf
}

// benchEnv is the hermetic environment of both terraform and strata: an
// empty CLI config, no update checks, automation mode and a cache dir of
// the benchmark's own. STRATA_CACHE_DIR is also set in the process, since
// the runner finds its plugin cache and engine installer there.
func benchEnv(b *testing.B) []string {
	b.Helper()
	return testenv.Env(b, "TF_IN_AUTOMATION=1")
}

func benchWriteFiles(b *testing.B, root string, files map[string]string) {
	b.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCopyRepo copies a prepared repository whole, .terraform and .strata
// included, so that the copy is initialised as the original is.
func benchCopyRepo(b *testing.B, src, dst string) {
	b.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		b.Fatal(err)
	}
}

// benchCommand runs one strata command the way the CLI does: find the
// root from dir, load the project, select, execute. A nil project is
// loaded; a given one is reused.
func benchCommand(b *testing.B, p *stacks.Project, dir string, env []string, opt Options) *report.Report {
	b.Helper()
	if p == nil {
		root, cfg, err := config.FindRoot(dir)
		if err != nil {
			b.Fatal(err)
		}
		if p, err = stacks.Load(root, cfg); err != nil {
			b.Fatalf("load: %v", err)
		}
	}
	rel, err := filepath.Rel(p.Root, dir)
	if err != nil {
		b.Fatal(err)
	}
	run, err := p.Select(stacks.Selection{Cwd: filepath.ToSlash(rel)})
	if err != nil {
		b.Fatal(err)
	}
	var console bytes.Buffer
	opt.Environ, opt.Console, opt.ErrConsole = env, &console, &console
	opt.DropIn = run.DropIn && len(run.Units) == 1
	res, err := Execute(context.Background(), p, run, opt)
	if err != nil {
		b.Fatalf("%s: %v\n%s", opt.Command, err, console.String())
	}
	if res.ExitCode != 0 {
		b.Fatalf("%s: exit %d\n%s", opt.Command, res.ExitCode, console.String())
	}
	return res.Report
}

// benchStatus fails the benchmark unless every unit of the report ends
// with status.
func benchStatus(b *testing.B, rep *report.Report, status report.Status) {
	b.Helper()
	for _, u := range rep.Units {
		if u.Status != status {
			b.Fatalf("%s: %s (%s), want %s", u.Name(), u.Status, u.Reason, status)
		}
	}
}

// benchNoInit fails the benchmark when a unit of the report ran init: the
// benchmarks measure initialised units.
func benchNoInit(b *testing.B, rep *report.Report) {
	b.Helper()
	for _, u := range rep.Units {
		for _, st := range u.Steps {
			if st.Name == report.StepInit {
				b.Fatalf("%s ran init although it was initialised", u.Name())
			}
		}
	}
}

const overheadTF = `resource "terraform_data" "network" {
  input = "10.0.0.0/16"
}

resource "terraform_data" "database" {
  input = terraform_data.network.output
}

resource "terraform_data" "service" {
  input = {
    network  = terraform_data.network.output
    database = terraform_data.database.id
  }
}

output "service" {
  value = terraform_data.service.id
}
`

// BenchmarkWrapperOverhead compares `terraform plan` run directly in an
// initialised dir whose plan has no changes with strata's drop-in plan of
// that one unit (init skipped as current).
//
//   - terraform: the engine alone, with the flags and environment strata
//     gives it;
//   - strata: what `strata plan` does in the dir: find the root, load the
//     project, select, Execute;
//   - strata-loaded: Execute with the project loaded once.
//
// Each strata sub-benchmark also runs terraform's plan, untimed, before
// each of its own, and reports its time against those as strata/terraform
// and overhead-ms: interleaving keeps the ratio honest when the machine's
// speed drifts between sub-benchmarks.
func BenchmarkWrapperOverhead(b *testing.B) {
	tf := benchTerraform(b)
	env := benchEnv(b)
	root := b.TempDir()
	benchWriteFiles(b, root, map[string]string{
		"strata.yml":  "version: \"1\"\n",
		"app/main.tf": overheadTF,
	})
	app := filepath.Join(root, "app")
	direct := func(args ...string) {
		cmd := exec.Command(tf, args...)
		cmd.Dir, cmd.Env, cmd.Stdout = app, env, io.Discard
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
	}
	direct("init", "-input=false", "-no-color")
	direct("apply", "-auto-approve", "-input=false", "-no-color")
	planOut := filepath.Join(b.TempDir(), "direct.tfplan")
	terraformPlan := func() {
		direct("plan", "-input=false", "-no-color", "-lock-timeout=0s", "-out="+planOut)
	}
	// The first strata plan records the init (terraform's own init above
	// left no record); from then on init is current and skipped.
	benchCommand(b, nil, app, env, Options{Settings: Settings{Command: CmdPlan}})
	rep := benchCommand(b, nil, app, env, Options{Settings: Settings{Command: CmdPlan}})
	benchStatus(b, rep, report.StatusNoChanges)
	benchNoInit(b, rep)

	b.Run("terraform", func(b *testing.B) {
		for b.Loop() {
			terraformPlan()
		}
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/1e6, "ms/plan")
	})
	strata := func(loaded bool) func(*testing.B) {
		return func(b *testing.B) {
			var p *stacks.Project
			if loaded {
				var err error
				if p, err = stacks.Load(root, filepath.Join(root, config.StrataConfigFile)); err != nil {
					b.Fatal(err)
				}
			}
			var engine time.Duration
			for b.Loop() {
				b.StopTimer()
				start := time.Now()
				terraformPlan()
				engine += time.Since(start)
				b.StartTimer()
				rep := benchCommand(b, p, app, env, Options{Settings: Settings{Command: CmdPlan}})
				if rep.Units[0].Status != report.StatusNoChanges {
					b.Fatalf("strata plan: %s", rep.Units[0].Status)
				}
			}
			own := b.Elapsed()
			b.ReportMetric(float64(own)/float64(b.N)/1e6, "ms/plan")
			b.ReportMetric(float64(engine)/float64(b.N)/1e6, "terraform-ms/plan")
			b.ReportMetric(float64(own-engine)/float64(b.N)/1e6, "overhead-ms/plan")
			b.ReportMetric(float64(own)/float64(engine), "strata/terraform")
		}
	}
	b.Run("strata", strata(false))
	b.Run("strata-loaded", strata(true))
}

// makespanUnit is one unit of the generated repository.
type makespanUnit struct {
	dir       string
	stack     string
	dependsOn string // dir of the unit it depends on in its stack, or ""
	sleep     time.Duration
}

// makespanUnits draws the generated DAG: 40 units in four stacks.
//
//   - base: 8 independent units, a wide first layer;
//   - chain: 10 units, each depending on the one before: the long chain,
//     which can start at once;
//   - mid: 12 units planned after base, in pairs (odd ones depend on the
//     even one before);
//   - top: 10 units planned after mid, the first three a chain.
//
// Sleeps are drawn from a fixed seed between 0.1 s and 1.0 s, in steps of
// 10 ms, so every run builds the same repository.
func makespanUnits() []makespanUnit {
	rng := rand.New(rand.NewPCG(4, 40))
	sleep := func() time.Duration { return time.Duration(10+rng.IntN(91)) * 10 * time.Millisecond }
	var units []makespanUnit
	for i := range 8 {
		units = append(units, makespanUnit{dir: fmt.Sprintf("base/b%02d", i), stack: "base", sleep: sleep()})
	}
	for i := range 10 {
		u := makespanUnit{dir: fmt.Sprintf("chain/c%02d", i), stack: "chain", sleep: sleep()}
		if i > 0 {
			u.dependsOn = fmt.Sprintf("chain/c%02d", i-1)
		}
		units = append(units, u)
	}
	for i := range 12 {
		u := makespanUnit{dir: fmt.Sprintf("mid/m%02d", i), stack: "mid", sleep: sleep()}
		if i%2 == 1 {
			u.dependsOn = fmt.Sprintf("mid/m%02d", i-1)
		}
		units = append(units, u)
	}
	for i := range 10 {
		u := makespanUnit{dir: fmt.Sprintf("top/t%02d", i), stack: "top", sleep: sleep()}
		if i > 0 && i < 3 {
			u.dependsOn = fmt.Sprintf("top/t%02d", i-1)
		}
		units = append(units, u)
	}
	return units
}

const makespanTF = `resource "terraform_data" "work" {
  input = %q

  provisioner "local-exec" {
    command = "sleep %s"
  }
}
`

// makespanFiles renders the repository of units: one root module each,
// whose apply sleeps, tagged with its stack, wired by stack rules and
// depends_on.
func makespanFiles(units []makespanUnit) map[string]string {
	files := map[string]string{}
	var dirs strings.Builder
	for _, u := range units {
		files[u.dir+"/main.tf"] = fmt.Sprintf(makespanTF, u.dir, fmt.Sprintf("%.2f", u.sleep.Seconds()))
		fmt.Fprintf(&dirs, "  %s:\n    tags: [%s]\n", u.dir, u.stack)
		if u.dependsOn != "" {
			fmt.Fprintf(&dirs, "    when_modified:\n      depends_on: 'dir:%s'\n", u.dependsOn)
		}
	}
	files["strata.yml"] = `version: "1"
dirs:
` + dirs.String() + `stacks:
  names:
    base: {tag_query: base}
    chain: {tag_query: chain}
    mid:
      tag_query: mid
      rules: {plan_after: [base]}
    top:
      tag_query: top
      rules: {plan_after: [mid]}
`
	return files
}

// makespanRepo is a generated repository, initialised once by strata so
// that every copy of it starts with init current and no state.
type makespanRepo struct {
	template string
	env      []string
}

func newMakespanRepo(b *testing.B, env []string, units []makespanUnit) *makespanRepo {
	b.Helper()
	template := b.TempDir()
	benchWriteFiles(b, template, makespanFiles(units))
	rep := benchCommand(b, nil, template, env, Options{Settings: Settings{Command: CmdInit, Parallelism: 4}})
	benchStatus(b, rep, report.StatusSucceeded)
	return &makespanRepo{template: template, env: env}
}

// recordTook writes in the template's run state what each unit took, its
// sleep and a fixed part, as an earlier run's jobs record it.
func (m *makespanRepo) recordTook(b *testing.B, sleeps map[string]time.Duration) {
	b.Helper()
	p, err := stacks.Load(m.template, filepath.Join(m.template, "strata.yml"))
	if err != nil {
		b.Fatal(err)
	}
	sd, err := runstate.OpenStateDir(filepath.Join(m.template, ".strata"))
	if err != nil {
		b.Fatal(err)
	}
	for _, u := range p.Units {
		ms := (sleeps[u.Dir] + 100*time.Millisecond).Milliseconds()
		if err := sd.UpdateUnit(u, func(s *runstate.UnitState) { s.Took = &runstate.TookRecord{PlanMS: ms / 2, ApplyMS: ms / 2} }); err != nil {
			b.Fatal(err)
		}
	}
}

// apply copies the repository and applies the copy; it returns the time of
// the command (load, select, Execute) and its report. The copy is made
// with the timer stopped, and the command is timed only when timed is
// set; the timer is running when apply returns.
func (m *makespanRepo) apply(b *testing.B, timed bool) (time.Duration, *report.Report) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	root := filepath.Join(b.TempDir(), "repo")
	benchCopyRepo(b, m.template, root)
	if timed {
		b.StartTimer()
	}
	start := time.Now()
	rep := benchCommand(b, nil, root, m.env, Options{Settings: Settings{Command: CmdApply, AutoApprove: true, Parallelism: 4}})
	took := time.Since(start)
	benchStatus(b, rep, report.StatusApplied)
	benchNoInit(b, rep)
	return took, rep
}

// fixedSample applies a fresh copy of a one-unit repository with the
// timer stopped and returns the time of the command and the span of the
// unit's own steps (first start to last finish).
func (m *makespanRepo) fixedSample(b *testing.B) (command, unit time.Duration) {
	b.Helper()
	took, rep := m.apply(b, false)
	steps := rep.Units[0].Steps
	return took, steps[len(steps)-1].FinishedAt.Sub(steps[0].StartedAt)
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// makespanLowerBound returns the critical path and the total work per
// worker of the repository's unit graph, a unit's work being its sleep
// plus fixed; the bound is the larger of the two.
func makespanLowerBound(b *testing.B, root string, sleeps map[string]time.Duration, fixed time.Duration, workers int) (critical, perWorker time.Duration) {
	b.Helper()
	p, err := stacks.Load(root, filepath.Join(root, config.StrataConfigFile))
	if err != nil {
		b.Fatal(err)
	}
	g, err := p.Graph(p.Units, stacks.GraphOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if len(g.Units) != len(sleeps) {
		b.Fatalf("the graph has %d units, the generator made %d", len(g.Units), len(sleeps))
	}
	finish := map[*stacks.Unit]time.Duration{}
	preds := map[*stacks.Unit][]*stacks.Unit{}
	for _, e := range g.Expand() {
		preds[e.To] = append(preds[e.To], e.From)
	}
	var total time.Duration
	for _, u := range g.Order() {
		work := sleeps[u.Dir] + fixed
		total += work
		var start time.Duration
		for _, p := range preds[u] {
			start = max(start, finish[p])
		}
		finish[u] = start + work
		critical = max(critical, finish[u])
	}
	return critical, total / time.Duration(workers)
}

// BenchmarkMakespan applies a generated DAG of 40 units whose applies sleep
// unevenly, at parallelism 4, each iteration on a fresh copy of the
// repository (init current, no state), and reports the makespan against the
// lower bound max(critical path, total work / 4).
//
// A unit's work is its sleep plus a fixed cost: the median time of the
// same command on a repository of one unit that sleeps 0 s (fixed-ms),
// measured untimed once per iteration so that the bound follows the
// machine's speed as the makespan does. That time also holds what strata
// does once per command (load, engine lookup, state dir), so counting it
// for every unit makes the bound generous. The tight bound splits it:
// unit-ms, the span of that unit's own steps, is every unit's fixed cost,
// and the rest, command-ms, is added once; makespan/tight is measured
// against that.
func BenchmarkMakespan(b *testing.B) {
	benchTerraform(b)
	// counts: no run state history, the ready queue counts units; history:
	// the run state holds what each unit took last time, as a run before
	// would have left it.
	b.Run("counts", func(b *testing.B) { benchMakespan(b, false) })
	b.Run("history", func(b *testing.B) { benchMakespan(b, true) })
}

func benchMakespan(b *testing.B, history bool) {
	env := benchEnv(b)
	const workers = 4

	units := makespanUnits()
	sleeps := map[string]time.Duration{}
	for _, u := range units {
		sleeps[u.dir] = u.sleep
	}
	repo := newMakespanRepo(b, env, units)
	if history {
		repo.recordTook(b, sleeps)
	}
	one := newMakespanRepo(b, env, []makespanUnit{{dir: "solo", stack: "base"}})
	one.fixedSample(b) // the first command of a process pays for warming up

	var makespan time.Duration
	var commands, spans []time.Duration
	for b.Loop() {
		command, span := one.fixedSample(b)
		commands, spans = append(commands, command), append(spans, span)
		took, _ := repo.apply(b, true)
		makespan += took
	}
	mean := makespan / time.Duration(b.N)
	fixed, perUnit := medianDuration(commands), medianDuration(spans)
	perCommand := max(fixed-perUnit, 0)
	critical, perWorker := makespanLowerBound(b, repo.template, sleeps, fixed, workers)
	bound := max(critical, perWorker)
	tightCritical, tightPerWorker := makespanLowerBound(b, repo.template, sleeps, perUnit, workers)
	tight := perCommand + max(tightCritical, tightPerWorker)

	b.ReportMetric(mean.Seconds(), "makespan-s")
	b.ReportMetric(bound.Seconds(), "lowerbound-s")
	b.ReportMetric(float64(mean)/float64(bound), "makespan/lowerbound")
	b.ReportMetric(critical.Seconds(), "critpath-s")
	b.ReportMetric(perWorker.Seconds(), "work/4-s")
	b.ReportMetric(tight.Seconds(), "tight-s")
	b.ReportMetric(float64(mean)/float64(tight), "makespan/tight")
	b.ReportMetric(float64(fixed.Milliseconds()), "fixed-ms")
	b.ReportMetric(float64(perUnit.Milliseconds()), "unit-ms")
	b.ReportMetric(float64(perCommand.Milliseconds()), "command-ms")
}
