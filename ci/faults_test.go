package ci

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
)

// needS3 starts a versitygw server for a test that runs terraform.
func needS3(t *testing.T) *testenv.S3 {
	t.Helper()
	testenv.NeedTerraform(t)
	srv := testenv.StartS3(t)
	if srv == nil {
		t.Skip("versitygw is not installed (make tools)")
	}
	return srv
}

// s3Run applies a layered repo as a sharded run on a versitygw server it
// starts, and returns the server, the repo and the run.
func s3Run(t *testing.T, layers, width int) (*testenv.S3, string, *Manifest) {
	t.Helper()
	srv := needS3(t)
	root := layeredRepo(t, layers, width)
	st := openStore(t, srv.URL)
	m, _ := runReport(t, st, root, StartOptions{Shards: 2, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	return srv, root, m
}

// s3Copy copies an object of the bucket through the S3 API.
func s3Copy(t *testing.T, url, dst, src string) {
	t.Helper()
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Copy(ctx, dst, src, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLyingResult copies one unit's valid result over two other units'
// result objects: the report lists the first once and the other two as
// missing, naming what their objects hold, and the check fails for them.
func TestLyingResult(t *testing.T) {
	srv, _, m := s3Run(t, 1, 3)
	ctx := context.Background()
	st := openStore(t, srv.URL)
	src := resultKey(m.Run, manifestUnit(t, m, "l0/c0").key())
	for _, dir := range []string{"l0/c1", "l0/c2"} {
		s3Copy(t, srv.URL, resultKey(m.Run, manifestUnit(t, m, dir).key()), src)
	}
	rep, _, err := BuildReport(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	got := statusesOf(rep)
	if len(rep.Units) != 3 || got["l0/c0"] != "applied" || got["l0/c1"] != "missing" || got["l0/c2"] != "missing" {
		t.Fatalf("report: %d units %v", len(rep.Units), got)
	}
	for _, u := range rep.Units {
		if u.Status == report.StatusMissing && !strings.Contains(u.Reason, "holds the result of l0/c0@default") {
			t.Errorf("%s: reason %q", u.Name(), u.Reason)
		}
	}
	if rep.ExitCode != 1 {
		t.Errorf("exit %d", rep.ExitCode)
	}
	bad, err := Check(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || !strings.Contains(bad[0], "l0/c1") || !strings.Contains(bad[1], "l0/c2") {
		t.Errorf("check: %q", bad)
	}
}

// TestCorruptUnitState truncates a unit's record in the bucket through
// the S3 API: the next run moves it aside under a corrupt-<time> key,
// warns, starts the unit afresh and says so in its report; the run after
// that finds a good record and warns of nothing.
func TestCorruptUnitState(t *testing.T) {
	srv, root, m := s3Run(t, 1, 2)
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := runstate.StateKey(manifestUnit(t, m, "l0/c0").key())
	good, err := b.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, key, good[:len(good)/2], nil); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, srv.URL)
	plan := func() *report.Report {
		t.Helper()
		_, rep := runReport(t, st, root, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1})
		return rep
	}
	rep := plan()
	for _, u := range rep.Units {
		if u.Status != report.StatusNoChanges {
			t.Errorf("%s: %s (%s)", u.Name(), u.Status, u.Reason)
		}
		corrupt := u.Dir == "l0/c0"
		if warned := len(u.Warnings) == 1 && strings.Contains(u.Warnings[0], "was corrupt") && strings.Contains(u.Note(), key+".corrupt-"); warned != corrupt {
			t.Errorf("%s: warnings %q", u.Name(), u.Warnings)
		}
	}
	it := b.List(&blob.ListOptions{Prefix: key + ".corrupt-"})
	aside, err := it.Next(ctx)
	if err != nil {
		t.Fatalf("no record moved aside: %v", err)
	}
	if kept, _ := b.ReadAll(ctx, aside.Key); string(kept) != string(good[:len(good)/2]) {
		t.Errorf("the record moved aside holds %q", kept)
	}
	if _, _, _, bad, err := runstate.GetUnitState(ctx, st, manifestUnit(t, m, "l0/c0").key()); bad != nil || err != nil {
		t.Errorf("the record is still bad: %v %v", bad, err)
	}
	for _, u := range plan().Units {
		if len(u.Warnings) != 0 || u.Status != report.StatusNoChanges {
			t.Errorf("second run: %s %s %q", u.Name(), u.Status, u.Warnings)
		}
	}
}

// TestDuplicateJob runs one shard as two jobs at once, each on its own
// checkout of the same commit, the engine state shared as a remote
// backend shares it: the job that holds a unit's state lock records its
// outcome; the duplicate, which cannot take the lock, records nothing for
// it and says so; the run's report and check are those of one job, and a
// retry finds everything recorded.
func TestDuplicateJob(t *testing.T) {
	srv := needS3(t)
	ctx := context.Background()
	shared, marker := t.TempDir(), filepath.Join(t.TempDir(), "applying")
	files := map[string]string{
		"strata.yml": "dirs:\n  slow: {tags: [w]}\n  fast: {tags: [w]}\nstacks:\n  names:\n    w:\n      tag_query: w\n",
		"slow/main.tf": fmt.Sprintf(`terraform {
  backend "local" { path = %q }
}
resource "terraform_data" "x" {
  input = "slow"
  provisioner "local-exec" { command = "touch %s && sleep 6" }
}
`, filepath.Join(shared, "slow.tfstate"), marker),
		"fast/main.tf": fmt.Sprintf(`terraform {
  backend "local" { path = %q }
}
resource "terraform_data" "x" { input = "fast" }
`, filepath.Join(shared, "fast.tfstate")),
	}
	first, second := testenv.WriteRepo(t, files), testenv.WriteRepo(t, files)
	st := openStore(t, srv.URL)
	p := loadRepo(t, first)
	m, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Shards: 1, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true, Parallelism: 2}})
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Env(t)
	job := func(root, name string, log *bytes.Buffer) (*SliceResult, error) {
		return RunSlice(ctx, st, loadRepo(t, root), SliceOptions{Run: m.Run, Console: log, Environ: env, StateDir: t.TempDir(), Job: name})
	}
	var firstLog, secondLog bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := job(first, "first", &firstLog)
		done <- err
	}()
	// The duplicate starts once the first job holds slow's state lock and
	// has recorded fast: whether it would race the first for fast is
	// chance, and this test is about the unit it cannot take.
	for i := 0; ; i++ {
		_, err := os.Stat(marker)
		fast, _, _ := loadResult(ctx, st, m.Run, runstate.KeyOf("fast", "default", "w"))
		if err == nil && fast != nil {
			break
		}
		if i == 1200 {
			t.Fatalf("slow never started applying\n%s", firstLog.String())
		}
		sleep()
	}
	res, err := job(second, "second", &secondLog)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Held, "slow@default") {
		t.Errorf("the duplicate job held %q\n%s", res.Held, secondLog.String())
	}
	if err := <-done; err != nil {
		t.Fatalf("first job: %v\n%s", err, firstLog.String())
	}
	rep, _, err := BuildReport(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range rep.Units {
		if u.Status != report.StatusApplied {
			t.Errorf("%s: %s (%s)", u.Name(), u.Status, u.Reason)
		}
	}
	if r, _, _ := loadResult(ctx, st, m.Run, runstate.KeyOf("slow", "default", "w")); r == nil || r.Job != "first" {
		t.Errorf("slow's result: %+v", r)
	}
	checkRun(t, st, m.Run)
	retry, err := job(first, "retry", &bytes.Buffer{})
	if err != nil || retry.Ran != 0 || retry.Done != 2 {
		t.Errorf("retry: %+v, %v", retry, err)
	}
}

// TestBucketKilledMidJob kills the S3 server while a job applies a
// unit: the job cannot record what it did and fails, naming it. Once the
// server is back, the retried job finds nothing left to apply and reports
// the unit applied by the earlier attempt, not no_changes; the run's
// record holds one apply of it, and every invariant holds.
func TestBucketKilledMidJob(t *testing.T) {
	srv := needS3(t)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "applying")
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": "dirs:\n  slow: {tags: [w]}\nstacks:\n  names:\n    w:\n      tag_query: w\n",
		"slow/main.tf": fmt.Sprintf(`resource "terraform_data" "x" {
  input = "slow"
  provisioner "local-exec" { command = "touch %s && sleep 3" }
}
`, marker),
	})
	st := openStore(t, srv.URL+"&timeout=1s")
	p := loadRepo(t, root)
	m, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Shards: 1, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Env(t)
	var log bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := RunSlice(ctx, st, loadRepo(t, root), SliceOptions{Run: m.Run, Console: &log, Environ: env, StateDir: t.TempDir(), Job: "first"})
		done <- err
	}()
	uk := manifestUnit(t, m, "slow").key()
	for i := 0; ; i++ {
		_, statErr := os.Stat(marker)
		_, _, getErr := st.Get(ctx, applyingKey(m.Run, uk))
		if statErr == nil && getErr == nil {
			break
		}
		if i == 1200 {
			t.Fatalf("slow never started applying: %v %v\n%s", statErr, getErr, log.String())
		}
		sleep()
	}
	srv.Kill()
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "slow") {
		t.Fatalf("the job whose bucket died: %v\n%s", err, log.String())
	}
	srv.Start()
	if _, err := RunSlice(ctx, st, loadRepo(t, root), SliceOptions{Run: m.Run, Environ: env, StateDir: t.TempDir(), Job: "retry"}); err != nil {
		t.Fatal(err)
	}
	rep, _, err := BuildReport(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Units) != 1 || rep.Units[0].Status != report.StatusApplied || !strings.Contains(rep.Units[0].Reason, "applied by an earlier attempt (first") || rep.ExitCode != 0 {
		t.Fatalf("report: %+v", rep.Units[0])
	}
	if applies, _ := st.List(ctx, appliesPrefix(m.Run)); len(applies) != 1 {
		t.Errorf("applies recorded: %q", applies)
	}
	checkRun(t, st, m.Run)
}

// TestAppliedEarlierWords checks the result an earlier attempt's unrecorded
// apply becomes: applied in an apply run, destroyed in a destroy run, with
// one apply recorded under the run either way.
func TestAppliedEarlierWords(t *testing.T) {
	ctx := context.Background()
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [w]}\nstacks:\n  names:\n    w:\n      tag_query: w\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	u := loadRepo(t, root).UnitsIn("a")[0]
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		destroy bool
		status  report.Status
		reason  string
	}{
		{false, report.StatusApplied, "applied by an earlier attempt (first, at 2026-01-02T03:04:05Z), which could not record it: a plan now finds nothing left to apply"},
		{true, report.StatusDestroyed, "destroyed by an earlier attempt (first, at 2026-01-02T03:04:05Z), which could not record it: a plan now finds nothing left to destroy"},
	} {
		st := openStore(t, "mem://")
		r := &Result{Unit: &report.UnitReport{Status: report.StatusNoChanges}}
		a := &Applying{Digest: "sha256:a", At: at, Job: "first"}
		if err := appliedEarlier(ctx, st, "1", u, r, a, tt.destroy); err != nil {
			t.Fatal(err)
		}
		if r.Unit.Status != tt.status || r.Unit.Reason != tt.reason || r.Applied != "sha256:a" {
			t.Errorf("destroy=%v: %s (%s), applied %q", tt.destroy, r.Unit.Status, r.Unit.Reason, r.Applied)
		}
		if applies, _ := st.List(ctx, appliesPrefix("1")); len(applies) != 1 {
			t.Errorf("destroy=%v: applies recorded: %q", tt.destroy, applies)
		}
	}
}
