package job

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestLockInvocation: providers lock with the platforms and mirror given.
func TestLockInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{}, "", nil)
	inv := in.lockInvocation(engineargs.LockArgs{Platforms: []string{"linux_amd64", "darwin_arm64"}, Providers: []string{"hashicorp/null"}}, map[string]string{"M": "1"})
	if got := inv.String(); got != "terraform providers lock -platform=linux_amd64 -platform=darwin_arm64 hashicorp/null" {
		t.Errorf("lock = %q", got)
	}
	if inv.Env["M"] != "1" || inv.Step != report.StepLock || inv.Call.checksVersion() {
		t.Errorf("lock invocation: %+v", inv)
	}
}

// TestLockFilesClaim: the first to claim a key produces its lock file;
// the others wait for it and read it; a producer that fails publishes
// nothing, and the next claim produces again.
func TestLockFilesClaim(t *testing.T) {
	var l lockFiles
	ctx := context.Background()
	r, mine, err := l.claim(ctx, "k")
	if err != nil || !mine {
		t.Fatalf("first claim: mine %t %v", mine, err)
	}
	got := make(chan *lockResult)
	go func() {
		r2, mine2, err := l.claim(ctx, "k")
		if err != nil || mine2 {
			t.Errorf("second claim: mine %t %v", mine2, err)
		}
		got <- r2
	}()
	l.finish("k", r, []byte("lock"), "net", true)
	r2 := <-got
	if string(r2.data) != "lock" || r2.from != "net" || !r2.ok {
		t.Errorf("the waiting claim read %+v", r2)
	}

	r3, mine, _ := l.claim(ctx, "failing")
	if !mine {
		t.Fatal("a new key is not the claimer's")
	}
	l.finish("failing", r3, nil, "a", false)
	if _, mine, _ := l.claim(ctx, "failing"); !mine {
		t.Error("after a failed producer, the next claim does not produce")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := l.claim(cancelled, "failing"); !errors.Is(err, context.Canceled) {
		t.Errorf("a claim waiting when interrupted: %v", err)
	}
}

// TestLockCopy: a lock file another unit's command wrote is written as a
// step of its own, unless it is the same already.
func TestLockCopy(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	path := filepath.Join(j.ur.Dir, lockFileName)
	r := &lockResult{data: []byte("# lock\n"), from: "app", ok: true}
	if err := j.in.lockCopy(path, nil, r); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "# lock\n" {
		t.Errorf("lock file = %q", b)
	}
	if len(j.res.Steps) != 1 || j.res.Steps[0].Name != report.StepLockShared || !j.res.Steps[0].OK {
		t.Errorf("steps = %+v", j.res.Steps)
	}
	if !strings.Contains(out.String(), "lock file as the engine wrote it for app") {
		t.Errorf("notes: %q", out.String())
	}
}

// TestTakeLock: a unit with no lock file takes the one another unit's
// init wrote; one that has a lock file keeps it.
func TestTakeLock(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	path := filepath.Join(j.ur.Dir, lockFileName)
	j.in.takeLock(path, &lockResult{data: []byte("seeded"), from: "app"})
	if b, _ := os.ReadFile(path); string(b) != "seeded" || len(j.res.Steps) != 1 {
		t.Errorf("lock file %q, steps %+v", b, j.res.Steps)
	}
	j.in.takeLock(path, &lockResult{data: []byte("other"), from: "db"})
	if b, _ := os.ReadFile(path); string(b) != "seeded" || len(j.res.Steps) != 1 {
		t.Errorf("a lock file there was replaced: %q", b)
	}
}
