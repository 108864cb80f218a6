package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// s3Env is the environment of a strata process that talks to srv.
func s3Env(t *testing.T) []string {
	return append(testenv.Env(t), "AWS_ACCESS_KEY_ID="+os.Getenv("AWS_ACCESS_KEY_ID"),
		"AWS_SECRET_ACCESS_KEY="+os.Getenv("AWS_SECRET_ACCESS_KEY"), "AWS_REGION="+os.Getenv("AWS_REGION"))
}

// TestStalledBucket stalls the S3 server of a run between its start and
// its job (SIGSTOP: connections are accepted, nothing answers): the job
// exits 1 naming the object and the bucket instead of hanging, ci finish
// writes a report saying why; once the server goes on, a retry of the job
// completes the run and every invariant holds.
func TestStalledBucket(t *testing.T) {
	testenv.NeedTerraform(t)
	srv := testenv.StartS3(t)
	if srv == nil {
		t.Skip("versitygw is not installed (make tools)")
	}
	root := writeRepo(t, testenv.Layered(1, 2))
	env := s3Env(t)
	m, _ := startRun(t, root, env, "apply", "--auto-approve", "--state", srv.URL, "--json")
	job := []string{"ci", "run", "--state", srv.URL, "--state-timeout", "500ms", "--run", m.Run, "--wave", "0", "--shard", "0"}
	reportFile := filepath.Join(t.TempDir(), "report.json")
	finish := []string{"ci", "finish", "--state", srv.URL, "--state-timeout", "500ms", "--run", m.Run, "--report", reportFile}

	srv.Stop()
	r := runBin(t, root, env, job...)
	// One operation waited for the bucket; nothing after it asked again.
	if r.code != 1 || strings.Count(r.stderr, "no answer in 3 attempts of 500ms") != 1 || !strings.Contains(r.stderr, "runs/"+m.Run+"/") || !strings.Contains(r.stderr, srv.URL) {
		t.Fatalf("job on a stalled bucket: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, root, env, finish...)
	if r.code != 1 {
		t.Fatalf("finish on a stalled bucket: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rep := readReport(t, reportFile); rep.OK || !strings.Contains(rep.Error, "no answer") || len(rep.Units) != 0 {
		t.Errorf("finish's report on a stalled bucket: ok %t, error %q, %d units", rep.OK, rep.Error, len(rep.Units))
	}

	srv.Cont()
	if r := runBin(t, root, env, job...); r.code != 0 {
		t.Fatalf("retried job: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, finish...); r.code != 0 {
		t.Fatalf("finish: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, u := range readReport(t, reportFile).Units {
		if u.Status != report.StatusApplied {
			t.Errorf("%s: %s (%s)", u.Name(), u.Status, u.Reason)
		}
	}
	if r := runBin(t, root, env, "ci", "check", "--state", srv.URL, "--run", m.Run); r.code != 0 {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
