package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

func openStore(t *testing.T, url string) *objstore.Store {
	t.Helper()
	st, err := objstore.Open(context.Background(), url, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// shardedRun runs every job of a run as CI would: the shards of a wave
// at once, the waves in turn, each job with a state dir of its own.
func shardedRun(t *testing.T, st *objstore.Store, root string, m *Manifest, env []string) {
	t.Helper()
	for _, w := range m.Waves {
		var wg sync.WaitGroup
		errs := make([]error, len(w.Shards))
		logs := make([]bytes.Buffer, len(w.Shards))
		for i, shard := range w.Shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each job loads the repository itself, as a CI job does.
				p, err := stacks.Load(root, filepath.Join(root, "strata.yml"))
				if err != nil {
					errs[i] = err
					return
				}
				_, errs[i] = RunSlice(context.Background(), st, p, SliceOptions{
					Run: m.Run, Wave: w.Wave, Shard: shard, Console: &logs[i], Environ: env,
					StateDir: filepath.Join(t.TempDir(), "job"), Job: fmt.Sprintf("test wave %d shard %d", w.Wave, shard),
				})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("wave %d shard %d: %v\n%s", w.Wave, w.Shards[i], err, logs[i].String())
			}
		}
	}
}

func statusesOf(rep *report.Report) map[string]string {
	out := map[string]string{}
	for _, u := range rep.Units {
		s := string(u.Status)
		if u.Cause != "" {
			s += " (" + u.Cause + ")"
		}
		out[u.Dir] = s
	}
	return out
}

func checkRun(t *testing.T, st *objstore.Store, run string) {
	t.Helper()
	bad, err := Check(context.Background(), st, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("invariant: " + b)
	}
}

// runReport starts a run of every unit of the repo at root, runs its
// jobs (shardedRun) and returns its manifest and report.
func runReport(t *testing.T, st *objstore.Store, root string, opt StartOptions) (*Manifest, *report.Report) {
	t.Helper()
	p := loadRepo(t, root)
	m, err := Start(context.Background(), st, p, selectAll(t, p), opt)
	if err != nil {
		t.Fatal(err)
	}
	shardedRun(t, st, root, m, testenv.Env(t))
	rep, _, err := BuildReport(context.Background(), st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	return m, rep
}

// TestShardedApply applies a 3-layer DAG of 9 units as 2 shards a wave,
// on a file:// bucket and on S3, GCS and Azure servers: every unit
// applied once, in order, the report and exit code those of one machine;
// a retried job finds its units recorded and applies nothing again.
func TestShardedApply(t *testing.T) {
	testenv.NeedTerraform(t)
	for name, url := range testenv.BucketURLs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			root := layeredRepo(t, 3, 3)
			env := testenv.Env(t)
			st := openStore(t, url)
			p := loadRepo(t, root)
			m, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Shards: 2, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true, Parallelism: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Waves) != 3 || len(m.Waves[0].Shards) != 2 {
				t.Fatalf("waves: %+v", m.Waves)
			}
			shardedRun(t, st, root, m, env)
			rep, _, err := BuildReport(ctx, st, m.Run)
			if err != nil {
				t.Fatal(err)
			}
			if rep.ExitCode != 0 || len(rep.Units) != 9 {
				t.Fatalf("exit %d, %d units: %v", rep.ExitCode, len(rep.Units), statusesOf(rep))
			}
			for dir, s := range statusesOf(rep) {
				if s != string(report.StatusApplied) {
					t.Errorf("%s: %s", dir, s)
				}
			}
			checkRun(t, st, m.Run)

			// A retried job: its units are recorded, nothing runs again.
			p = loadRepo(t, root)
			res, err := RunSlice(ctx, st, p, SliceOptions{Run: m.Run, Wave: 1, Shard: 0, Environ: env, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Ran != 0 || res.Done == 0 {
				t.Errorf("retried job ran %d units, found %d done", res.Ran, res.Done)
			}
			checkRun(t, st, m.Run)

			// A second run finds nothing to change, from the bucket's state.
			m2, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 3})
			if err != nil {
				t.Fatal(err)
			}
			shardedRun(t, st, root, m2, env)
			rep2, _, _ := BuildReport(ctx, st, m2.Run)
			for dir, s := range statusesOf(rep2) {
				if s != string(report.StatusNoChanges) {
					t.Errorf("second run: %s: %s", dir, s)
				}
			}
		})
	}
}

// TestShardedFailure: a unit that fails in wave 1 skips exactly the
// units of later waves that wait for it, each naming it as the root
// cause; the others apply; the run exits 1.
func TestShardedFailure(t *testing.T) {
	testenv.NeedTerraform(t)
	root := layeredRepo(t, 3, 3, "l1/c0")
	st := openStore(t, "file://"+t.TempDir())
	m, rep := runReport(t, st, root, StartOptions{Shards: 3, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	got := statusesOf(rep)
	want := map[string]string{
		"l0/c0": "applied", "l0/c1": "applied", "l0/c2": "applied",
		"l1/c0": "failed", "l1/c1": "applied", "l1/c2": "applied",
		// l2/c<j> waits for l1/c<j> and l1/c<j+1>.
		"l2/c0": "skipped (l1/c0@default)", "l2/c1": "applied", "l2/c2": "skipped (l1/c0@default)",
	}
	for dir, w := range want {
		if got[dir] != w {
			t.Errorf("%s: %s, want %s", dir, got[dir], w)
		}
	}
	if rep.ExitCode != 1 || rep.OK {
		t.Errorf("exit %d ok %v", rep.ExitCode, rep.OK)
	}
	checkRun(t, st, m.Run)
}

// TestPullRequestFlow: a PR's plan locks its dirspaces, another PR is
// told who holds them, the apply after merge applies exactly the plans
// the PR reviewed (same digests), and unlock frees the dirspaces.
func TestPullRequestFlow(t *testing.T) {
	testenv.NeedTerraform(t)
	ctx := context.Background()
	root := layeredRepo(t, 2, 2)
	env := testenv.Env(t)
	st := openStore(t, "file://"+t.TempDir())
	p := loadRepo(t, root)

	plan, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 2, PR: 11, Link: "https://ci.example/11"})
	if err != nil {
		t.Fatal(err)
	}
	shardedRun(t, st, root, plan, env)
	planRep, _, _ := BuildReport(ctx, st, plan.Run)
	planned := map[string]string{}
	for _, u := range planRep.Units {
		planned[u.Dir] = u.Digest
	}
	// Layer 1 plans after layer 0 is applied: on the PR only layer 0 plans.
	if got := statusesOf(planRep); got["l0/c0"] != "planned" || got["l1/c0"] != "blocked" {
		t.Fatalf("plan: %v", got)
	}

	_, err = Start(ctx, st, p, selectAll(t, p), StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, PR: 12})
	var locked *LockedError
	if !errors.As(err, &locked) || len(locked.Held) != 4 || locked.Held[0].PR != 11 || locked.Held[0].Link != "https://ci.example/11" {
		t.Fatalf("second PR: %v", err)
	}

	apply, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Shards: 2, PR: 11, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	if err != nil {
		t.Fatal(err)
	}
	shardedRun(t, st, root, apply, env)
	_, results, _, err := loadRun(ctx, st, apply.Run)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"l0/c0", "l0/c1"} {
		r := results[dir+"@default#l0c"+dir[len(dir)-1:]]
		if r == nil || r.Unit.Status != report.StatusApplied || r.Applied != planned[dir] {
			t.Errorf("%s: applied %+v, the PR planned %s", dir, r, planned[dir])
		}
	}
	checkRun(t, st, apply.Run)

	freed, err := Unlock(ctx, st, 11)
	if err != nil || len(freed) != 4 {
		t.Fatalf("unlock: %d, %v", len(freed), err)
	}
	if _, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, PR: 12}); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
}

// TestInterruptedJobIsRetried: a job interrupted while a unit applies
// records the units it finished and none for the one it cancelled; the
// retried job runs only that one.
func TestInterruptedJobIsRetried(t *testing.T) {
	testenv.NeedTerraform(t)
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml":   "dirs:\n  fast: {tags: [w]}\n  slow: {tags: [w]}\nstacks:\n  names:\n    w: {tag_query: w}\n",
		"fast/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"slow/main.tf": "resource \"terraform_data\" \"x\" {\n  provisioner \"local-exec\" {\n    command = \"sleep 3\"\n  }\n}\n",
	})
	env := testenv.Env(t)
	st := openStore(t, "file://"+t.TempDir())
	p := loadRepo(t, root)
	m, err := Start(context.Background(), st, p, selectAll(t, p), StartOptions{Shards: 1, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true, Parallelism: 2}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log bytes.Buffer
	go func() {
		_, err := RunSlice(ctx, st, p, SliceOptions{Run: m.Run, Console: &log, Environ: env, StateDir: t.TempDir()})
		done <- err
	}()
	// Interrupt once fast is recorded and slow's provisioner runs.
	for i := 0; ; i++ {
		r, _, err := loadResult(context.Background(), st, m.Run, runstate.KeyOf("fast", "default", "w"))
		if err != nil {
			t.Fatal(err)
		}
		if r != nil {
			break
		}
		if i == 600 {
			t.Fatal("fast never recorded")
		}
		sleep()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("interrupted job: %v\n%s", err, log.String())
	}
	if r, _, _ := loadResult(context.Background(), st, m.Run, runstate.KeyOf("slow", "default", "w")); r != nil {
		t.Fatalf("the cancelled unit has a result: %s %s", r.Unit.Status, r.Unit.Reason)
	}
	res, err := RunSlice(context.Background(), st, loadRepo(t, root), SliceOptions{Run: m.Run, Environ: env, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 1 || res.Done != 1 {
		t.Errorf("retry ran %d, found %d done", res.Ran, res.Done)
	}
	rep, _, _ := BuildReport(context.Background(), st, m.Run)
	if got := statusesOf(rep); got["slow"] != "applied" || got["fast"] != "applied" {
		t.Errorf("after the retry: %v", got)
	}
	checkRun(t, st, m.Run)
}

func sleep() { time.Sleep(50 * time.Millisecond) }

// TestEngineArgsReachEveryJob: the engine arguments given to ci start
// are in the manifest as typed, and every job plans with them: a -target
// that names nothing leaves each unit with no changes, where the same run
// without it applies them all.
func TestEngineArgsReachEveryJob(t *testing.T) {
	testenv.NeedTerraform(t)
	root := layeredRepo(t, 2, 2)
	st := openStore(t, "file://"+t.TempDir())
	given := []string{"-target=terraform_data.none"}
	ea, err := runner.ParseEngineArgs(runner.CmdApply, given, root)
	if err != nil {
		t.Fatal(err)
	}
	m, rep := runReport(t, st, root, StartOptions{Shards: 2, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true, EngineArgs: ea}})
	raw, err := json.Marshal(m.Options)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"engine_args":["-target=terraform_data.none"]`; !strings.Contains(string(raw), want) {
		t.Errorf("manifest options %s, want them to hold %s", raw, want)
	}
	for dir, s := range statusesOf(rep) {
		if s != string(report.StatusNoChanges) {
			t.Errorf("%s: %s, want no_changes under -target", dir, s)
		}
	}
	_, rep = runReport(t, st, root, StartOptions{Shards: 2, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	for dir, s := range statusesOf(rep) {
		if s != string(report.StatusApplied) {
			t.Errorf("%s: %s without -target, want applied", dir, s)
		}
	}
}

// TestShardedDenied: a unit the controls refuse at start ends denied in
// its job, which runs nothing of it; the units of later waves that wait
// for it, directly or not, are skipped saying it was denied; the run
// exits 1, and its record passes the invariant check.
func TestShardedDenied(t *testing.T) {
	testenv.NeedTerraform(t)
	root := layeredRepo(t, 3, 3)
	st := openStore(t, "file://"+t.TempDir())
	asked := 0
	controls := func(units, _ []*stacks.Unit) (map[*stacks.Unit]string, map[*stacks.Unit]string, map[*stacks.Unit][]string) {
		asked++
		for _, u := range units {
			if u.Dir == "l0/c1" {
				return map[*stacks.Unit]string{u: "bob may not apply l0/c1@default"}, nil, nil
			}
		}
		t.Error("l0/c1 is not among the units asked about")
		return nil, nil, nil
	}
	m, rep := runReport(t, st, root, StartOptions{Shards: 2, Controls: controls, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	want := map[string]string{
		"l0/c0": "applied", "l0/c1": "denied", "l0/c2": "applied",
		// l<i>/c<j> waits for l<i-1>/c<j> and l<i-1>/c<j+1 mod 3>.
		"l1/c0": "skipped (l0/c1@default)", "l1/c1": "skipped (l0/c1@default)", "l1/c2": "applied",
		"l2/c0": "skipped (l0/c1@default)", "l2/c1": "skipped (l0/c1@default)", "l2/c2": "skipped (l0/c1@default)",
	}
	got := statusesOf(rep)
	for dir, w := range want {
		if got[dir] != w {
			t.Errorf("%s: %s, want %s", dir, got[dir], w)
		}
	}
	for _, u := range rep.Units {
		switch {
		case u.Status == report.StatusSkipped && u.Reason != "l0/c1@default was denied":
			t.Errorf("%s: reason %q, want the denied unit named", u.Dir, u.Reason)
		case u.Status == report.StatusDenied && (u.Reason != "bob may not apply l0/c1@default" || len(u.Steps) != 0):
			t.Errorf("%s: reason %q, steps %+v", u.Dir, u.Reason, u.Steps)
		}
	}
	if asked != 1 || rep.ExitCode != 1 || rep.OK {
		t.Errorf("controls asked %d times; exit %d ok %v; want once, 1, false", asked, rep.ExitCode, rep.OK)
	}
	checkRun(t, st, m.Run)
}
