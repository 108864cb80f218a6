package ci

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// readersFiles: app reads net's output out; web plans after app and reads
// nothing.
func readersFiles() map[string]string {
	return map[string]string{
		"strata.yml": `dirs:
  net: {tags: [net]}
  app: {tags: [app]}
  web: {tags: [web]}
stacks:
  names:
    net: {tag_query: net}
    app:
      tag_query: app
      inputs: {x: net.out}
    web:
      tag_query: web
      rules: {plan_after: [app]}
`,
		"net/main.tf": netTF("a", "v1"),
		"app/main.tf": testenv.ConsumerTF("x", "a", ""),
		"web/main.tf": "resource \"terraform_data\" \"w\" {\n  input = \"w\"\n}\n",
	}
}

func netTF(input, out string) string {
	return fmt.Sprintf("resource \"terraform_data\" \"n\" {\n  input = %q\n}\noutput \"out\" {\n  value = %q\n}\n", input, out)
}

func selectStacks(t testing.TB, p *stacks.Project, names ...string) *stacks.Run {
	t.Helper()
	run, err := p.Select(stacks.Selection{Cwd: ".", Stacks: names})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func manifestUnit(t testing.TB, m *Manifest, dir string) ManifestUnit {
	t.Helper()
	for _, u := range m.Units {
		if u.Dir == dir {
			return u
		}
	}
	t.Fatalf("%s is not in the manifest", dir)
	return ManifestUnit{}
}

// TestStartListsReaders: the consumers, transitively, of the units a run
// may apply are in the manifest as readers, in a wave after their
// producers; a unit of the run that waits for a reader comes after it.
// plan without auto_apply, --no-propagate and destroy list none, and a
// gate keeps its role.
func TestStartListsReaders(t *testing.T) {
	p := loadRepo(t, testenv.WriteRepo(t, readersFiles()))
	ctx := context.Background()
	st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
	m, err := Start(ctx, st, p, selectStacks(t, p, "net", "web"), StartOptions{Options: runner.Settings{Command: runner.CmdApply}, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != ManifestVersion || ManifestVersion < 3 {
		t.Errorf("manifest version %d", m.Version)
	}
	net, app, web := manifestUnit(t, m, "net"), manifestUnit(t, m, "app"), manifestUnit(t, m, "web")
	if len(m.Units) != 3 || net.Reader || !app.Reader || web.Reader {
		t.Fatalf("units: %+v", m.Units)
	}
	if net.Wave != 0 || app.Wave != 1 || web.Wave != 2 || len(m.Waves) != 3 {
		t.Errorf("waves: net %d, app %d, web %d; %+v", net.Wave, app.Wave, web.Wave, m.Waves)
	}
	// app reads net (a unit edge); web's stack waits for app's (a rule,
	// kept once in the manifest's stacks).
	stackAt := m.stackIndex()
	if !slices.Equal(app.After, []string{net.ID}) || !slices.Equal(predecessors([]ManifestUnit{web}, stackAt), []string{app.ID}) || len(web.After) != 0 {
		t.Errorf("after: app %v, web %v (its stack: %+v)", app.After, web.After, stackAt[web.Stack])
	}
	// A job reads its wave's part: the reader is marked there too.
	wm, err := loadWave(ctx, st, m.Run, 1)
	if err != nil || len(wm.Units) != 1 || !wm.Units[0].Reader {
		t.Errorf("wave 1: %+v, %v", wm, err)
	}

	for name, opt := range map[string]StartOptions{
		"plan":           {Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1},
		"--no-propagate": {Options: runner.Settings{Command: runner.CmdApply, NoPropagate: true}, Shards: 1},
		"destroy":        {Options: runner.Settings{Command: runner.CmdDestroy}, Shards: 1, Destroy: true},
		"gate":           {Options: runner.Settings{Command: runner.CmdApply}, Shards: 1, Gates: p.UnitsIn("app")},
	} {
		st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
		m, err := Start(ctx, st, p, selectStacks(t, p, "net"), opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Units) != 1 || m.Units[0].Dir != "net" {
			t.Errorf("%s: units %+v", name, m.Units)
		}
	}
}

// putResult stores a result as a job would.
func putResult(t *testing.T, st *objstore.Store, m *Manifest, dir string, r *Result) {
	t.Helper()
	if err := putJSON(context.Background(), st, resultKey(m.Run, manifestUnit(t, m, dir).key()), r, true); err != nil {
		t.Fatal(err)
	}
}

func unitResult(dir, stack string, status report.Status, why string, steps ...report.StepReport) *report.UnitReport {
	return &report.UnitReport{Dir: dir, Workspace: "default", Stack: stack, StackPath: []string{stack}, Why: why, Status: status,
		Inputs: map[string]report.InputReport{}, Steps: append([]report.StepReport{}, steps...)}
}

// TestReaderResults: a reader recorded as not needed is in no report and
// no exit code and breaks no invariant; one with no result is cancelled
// and missing; one that joined is reported with its why; a unit that is
// no reader cannot be recorded as not needed.
func TestReaderResults(t *testing.T) {
	p := loadRepo(t, testenv.WriteRepo(t, readersFiles()))
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	step := func(n int) report.StepReport {
		return report.StepReport{Name: report.StepPlan, StartedAt: at.Add(time.Duration(n) * time.Minute), FinishedAt: at.Add(time.Duration(n)*time.Minute + time.Second), OK: true}
	}
	start := func() (*objstore.Store, *Manifest) {
		st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
		m, err := Start(ctx, st, p, selectStacks(t, p, "net", "web"), StartOptions{Options: runner.Settings{Command: runner.CmdApply}, Shards: 1, Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		return st, m
	}

	st, m := start()
	putResult(t, st, m, "net", &Result{Unit: unitResult("net", "net", report.StatusApplied, "selected", step(1))})
	putResult(t, st, m, "app", &Result{Unit: unitResult("app", "app", report.StatusNoChanges, ""), NotNeeded: true})
	putResult(t, st, m, "web", &Result{Unit: unitResult("web", "web", report.StatusNoChanges, "selected", step(3))})
	rep, _, err := BuildReport(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	if got := statusesOf(rep); len(got) != 2 || got["net"] != "applied" || got["web"] != "no_changes" || rep.ExitCode != 0 {
		t.Errorf("stayed out: %v, exit %d", got, rep.ExitCode)
	}
	checkRun(t, st, m.Run)

	// The reader's job died: the run is incomplete.
	st, m = start()
	putResult(t, st, m, "net", &Result{Unit: unitResult("net", "net", report.StatusApplied, "selected", step(1))})
	rep, _, err = BuildReport(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	if got := statusesOf(rep); got["app"] != "missing" || rep.ExitCode == 0 {
		t.Errorf("no result: %v, exit %d", got, rep.ExitCode)
	}
	if bad, _ := Check(ctx, st, m.Run); !slices.Contains(bad, manifestUnit(t, m, "app").ID+": no result") {
		t.Errorf("check without the reader's result: %q", bad)
	}

	// Joined: reported like any unit.
	st, m = start()
	putResult(t, st, m, "net", &Result{Unit: unitResult("net", "net", report.StatusApplied, "selected", step(1)), ChangedOutputs: []string{"out"}, OutputsKnown: true})
	putResult(t, st, m, "app", &Result{Unit: unitResult("app", "app", report.StatusApplied, "reads: net@default (net.out)", step(2))})
	putResult(t, st, m, "web", &Result{Unit: unitResult("web", "web", report.StatusNoChanges, "selected", step(3))})
	rep, _, _ = BuildReport(ctx, st, m.Run)
	if got := statusesOf(rep); len(got) != 3 || got["app"] != "applied" {
		t.Errorf("joined: %v", got)
	}
	checkRun(t, st, m.Run)

	// What check refuses: a member recorded as not needed, a reader
	// recorded as not needed that ran, a reader that joined without
	// saying what it reads.
	st, m = start()
	putResult(t, st, m, "net", &Result{Unit: unitResult("net", "net", report.StatusNoChanges, "selected"), NotNeeded: true})
	putResult(t, st, m, "app", &Result{Unit: unitResult("app", "app", report.StatusNoChanges, "", step(2)), NotNeeded: true})
	putResult(t, st, m, "web", &Result{Unit: unitResult("web", "web", report.StatusNoChanges, "selected", step(3))})
	bad, err := Check(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || !slices.Contains(bad, "net@default#net is recorded as not needed, but it is no reader") ||
		!slices.Contains(bad, "app@default#app is recorded as not needed, but it ran") {
		t.Errorf("violations: %q", bad)
	}
	st, m = start()
	putResult(t, st, m, "net", &Result{Unit: unitResult("net", "net", report.StatusApplied, "selected", step(1))})
	putResult(t, st, m, "app", &Result{Unit: unitResult("app", "app", report.StatusApplied, "selected", step(2))})
	putResult(t, st, m, "web", &Result{Unit: unitResult("web", "web", report.StatusNoChanges, "selected", step(3))})
	if bad, _ := Check(ctx, st, m.Run); len(bad) != 1 || !strings.Contains(bad[0], "joined the run as a reader") {
		t.Errorf("violations: %q", bad)
	}
}

// runWave runs every shard of one wave, each job with a state dir of its
// own, and returns the jobs' consoles.
func runWave(t *testing.T, st *objstore.Store, root string, m *Manifest, env []string, wave int) string {
	t.Helper()
	var log bytes.Buffer
	for _, shard := range m.Waves[wave].Shards {
		p := loadRepo(t, root)
		if _, err := RunSlice(context.Background(), st, p, SliceOptions{
			Run: m.Run, Wave: wave, Shard: shard, Console: &log, Environ: env,
			StateDir: filepath.Join(t.TempDir(), "job"), Job: fmt.Sprintf("test wave %d shard %d", wave, shard),
		}); err != nil {
			t.Fatalf("wave %d shard %d: %v\n%s", wave, shard, err, log.String())
		}
	}
	return log.String()
}

// TestShardedReaders: a sharded apply of net and web pulls app, which
// reads net's output, into the run when net's apply changes that output,
// in its own wave, and web (which waits for app) goes on either way. A
// change to net that leaves the output as it was leaves app out: not in
// the report, recorded as not needed, every invariant holding. When net's
// result does not say which outputs it changed, app joins unless its
// journal shows it applied with the value net has now. When net fails,
// app stays out, skipped, and so is web.
func TestShardedReaders(t *testing.T) {
	testenv.NeedTerraform(t)
	root := testenv.WriteRepo(t, readersFiles())
	e := &readersRun{
		ctx: context.Background(), root: root, env: testenv.Env(t),
		st: openStore(t, "file://"+t.TempDir()), netFile: filepath.Join(root, "net", "main.tf"),
	}
	m := e.apply(t, "net", "app", "web")
	if rep, _ := e.jobs(t, m); rep.ExitCode != 0 || len(rep.Units) != 3 {
		t.Fatalf("first apply: %v", statusesOf(rep))
	}
	readersOutputChanged(t, e)
	readersOutputUnchanged(t, e)
	readersOutputsUnknown(t, e)
	readersProducerFails(t, e)
}

// readersRun is the repository and bucket TestShardedReaders applies
// in turn.
type readersRun struct {
	ctx     context.Context
	root    string
	env     []string
	st      *objstore.Store
	netFile string
}

// apply starts a sharded apply of the stacks names.
func (e *readersRun) apply(t *testing.T, names ...string) *Manifest {
	t.Helper()
	p := loadRepo(t, e.root)
	m, err := Start(e.ctx, e.st, p, selectStacks(t, p, names...), StartOptions{Shards: 2, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// jobs runs every job of m and returns the run's report and its
// units' results.
func (e *readersRun) jobs(t *testing.T, m *Manifest) (*report.Report, map[string]*Result) {
	t.Helper()
	shardedRun(t, e.st, e.root, m, e.env)
	rep, _, err := BuildReport(e.ctx, e.st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	_, results, _, err := loadRun(e.ctx, e.st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	return rep, results
}

// unknown makes net's result say nothing of what its apply changed.
func (e *readersRun) unknown(t *testing.T, m *Manifest) {
	t.Helper()
	key := resultKey(m.Run, manifestUnit(t, m, "net").key())
	r := &Result{}
	if _, err := getJSON(e.ctx, e.st, key, r); err != nil {
		t.Fatal(err)
	}
	r.ChangedOutputs, r.OutputsKnown = nil, false
	if err := putJSON(e.ctx, e.st, key, r, false); err != nil {
		t.Fatal(err)
	}
}

// readersOutputChanged: net's output changes: app joins.
func readersOutputChanged(t *testing.T, e *readersRun) {
	testenv.WriteFile(t, e.netFile, netTF("a", "v2"))
	m := e.apply(t, "net", "web")
	if !manifestUnit(t, m, "app").Reader || len(m.Waves) != 3 {
		t.Fatalf("manifest: %+v", m.Units)
	}
	rep, results := e.jobs(t, m)
	want := map[string]string{"net": "applied", "app": "applied", "web": "no_changes"}
	if got := statusesOf(rep); len(got) != 3 || got["net"] != want["net"] || got["app"] != want["app"] || got["web"] != want["web"] || rep.ExitCode != 0 {
		t.Fatalf("output changed: %v, exit %d", got, rep.ExitCode)
	}
	for _, u := range rep.Units {
		if u.Dir == "app" && u.Why != "reads: net@default (net.out)" {
			t.Errorf("app's why: %q", u.Why)
		}
	}
	if v := testenv.StateInput(t, filepath.Join(e.root, "app")); v != "v2" {
		t.Errorf("app holds %q, want v2", v)
	}
	if r := results[manifestUnit(t, m, "net").ID]; r == nil || !r.OutputsKnown || !slices.Equal(r.ChangedOutputs, []string{"out"}) {
		t.Errorf("net's result: %+v", r)
	}
	checkRun(t, e.st, m.Run)
}

// readersOutputUnchanged: net changes, its output does not: app stays out.
func readersOutputUnchanged(t *testing.T, e *readersRun) {
	testenv.WriteFile(t, e.netFile, netTF("b", "v2"))
	m := e.apply(t, "net", "web")
	rep, results := e.jobs(t, m)
	if got := statusesOf(rep); len(got) != 2 || got["net"] != "applied" || got["web"] != "no_changes" || rep.ExitCode != 0 {
		t.Fatalf("output unchanged: %v, exit %d", got, rep.ExitCode)
	}
	if r := results[manifestUnit(t, m, "app").ID]; r == nil || !r.NotNeeded || r.Unit.Status != report.StatusNoChanges {
		t.Errorf("app's result: %+v", r)
	}
	checkRun(t, e.st, m.Run)
}

// readersOutputsUnknown: net's result does not say what its apply
// changed: app's journal decides. First with the value app applied, then
// with another.
func readersOutputsUnknown(t *testing.T, e *readersRun) {
	for _, tc := range []struct {
		input, out string
		joins      bool
	}{{"c", "v2", false}, {"c", "v3", true}} {
		testenv.WriteFile(t, e.netFile, netTF(tc.input, tc.out))
		m := e.apply(t, "net", "web")
		runWave(t, e.st, e.root, m, e.env, 0)
		e.unknown(t, m)
		log := runWave(t, e.st, e.root, m, e.env, 1) + runWave(t, e.st, e.root, m, e.env, 2)
		rep, _, _ := BuildReport(e.ctx, e.st, m.Run)
		got := statusesOf(rep)
		if _, in := got["app"]; in != tc.joins || got["web"] != "no_changes" || rep.ExitCode != 0 {
			t.Errorf("unknown outputs, net output %s: %v, exit %d\n%s", tc.out, got, rep.ExitCode, log)
		}
		checkRun(t, e.st, m.Run)
	}
	if v := testenv.StateInput(t, filepath.Join(e.root, "app")); v != "v3" {
		t.Errorf("app holds %q, want v3", v)
	}
}

// readersProducerFails: net fails: app stays out, skipped, and web, which
// waits for app, is skipped naming net, as on one machine.
func readersProducerFails(t *testing.T, e *readersRun) {
	testenv.WriteFile(t, e.netFile, netTF("c", "v4")+"resource \"terraform_data\" \"boom\" {\n  provisioner \"local-exec\" {\n    command = \"false\"\n  }\n}\n")
	m := e.apply(t, "net", "web")
	rep, results := e.jobs(t, m)
	if got := statusesOf(rep); len(got) != 2 || got["net"] != "failed" || got["web"] != "skipped (net@default)" || rep.ExitCode != 1 {
		t.Errorf("net failed: %v, exit %d", got, rep.ExitCode)
	}
	if r := results[manifestUnit(t, m, "app").ID]; r == nil || !r.NotNeeded || r.Unit.Status != report.StatusSkipped || r.Unit.Cause != "net@default" {
		t.Errorf("app's result: %+v", r)
	}
	checkRun(t, e.st, m.Run)
}
