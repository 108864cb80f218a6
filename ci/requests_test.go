package ci

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
)

// requests are the operations a store was asked, in order.
type requests struct {
	mu  sync.Mutex
	ops []string // "op key"
}

func (r *requests) observe(op, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op+" "+key)
}

// take returns the operations so far and forgets them.
func (r *requests) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ops
	r.ops = nil
	return out
}

// TestJobBucketRequests counts what one job asks of the bucket
// (docs/ci.md#a-job): a first attempt reads each of its units' records
// once and each unit it waits for once, writes at most four objects a
// unit (its record, the apply it begins, the apply it made, its result),
// and reads no result of its own units and lists nothing; the rest does
// not grow with its units. A retry reads its units' results and lists the
// applies begun, and runs nothing.
func TestJobBucketRequests(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	const width = 4
	ctx := context.Background()
	root := layeredRepo(t, 2, width)
	env := testenv.Env(t)
	st := openStore(t, "file://"+t.TempDir())
	var reqs requests
	st.Observe(reqs.observe)
	p := loadRepo(t, root)
	m, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Shards: 1, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true, Parallelism: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunSlice(ctx, st, loadRepo(t, root), SliceOptions{Run: m.Run, Wave: 0, Environ: env, StateDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	reqs.take()

	res, err := RunSlice(ctx, st, loadRepo(t, root), SliceOptions{Run: m.Run, Wave: 1, Environ: env, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != width {
		t.Fatalf("wave 1 ran %d units, want %d", res.Ran, width)
	}
	own, waited := map[string]bool{}, map[string]bool{}
	for i := range width {
		own[runstate.KeyOf(fmt.Sprintf("l1/c%d", i), "default", fmt.Sprintf("l1c%d", i))] = true
		waited[runstate.KeyOf(fmt.Sprintf("l0/c%d", i), "default", fmt.Sprintf("l0c%d", i))] = true
	}
	first := reqs.take()
	perUnit := map[string][]string{}
	var others []string
	for _, op := range first {
		verb, key, _ := strings.Cut(op, " ")
		if verb == "listing" {
			t.Errorf("the first attempt lists %s", key)
		}
		uk := unitOf(key, own, waited)
		switch {
		case uk == "":
			others = append(others, op)
		case waited[uk]:
			if verb != "reading" || !strings.HasPrefix(key, resultsPrefix(m.Run)) {
				t.Errorf("a unit waited for: %s", op)
			}
			perUnit[uk] = append(perUnit[uk], op)
		default:
			if verb == "reading" && strings.HasPrefix(key, resultsPrefix(m.Run)) {
				t.Errorf("the first attempt reads its own unit's result: %s", key)
			}
			perUnit[uk] = append(perUnit[uk], op)
		}
	}
	for uk := range own {
		ops, reads := perUnit[uk], 0
		for _, op := range ops {
			if strings.HasPrefix(op, "reading ") {
				reads++
			}
		}
		if reads != 1 || len(ops)-reads > 4 {
			t.Errorf("%s: %d reads and %d writes, want 1 and at most 4: %q", uk, reads, len(ops)-reads, ops)
		}
	}
	for uk := range waited {
		if len(perUnit[uk]) != 1 {
			t.Errorf("%s, waited for: %q, want one read of its result", uk, perUnit[uk])
		}
	}
	// The job's own: its mark, its wave's part of the manifest, the tree.
	if len(others) > 3 {
		t.Errorf("%d requests not for a unit, want at most 3: %q", len(others), others)
	}

	res, err = RunSlice(ctx, st, loadRepo(t, root), SliceOptions{Run: m.Run, Wave: 1, Environ: env, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran != 0 || res.Done != width {
		t.Errorf("the retry ran %d units and found %d done, want 0 and %d", res.Ran, res.Done, width)
	}
	retry := strings.Join(reqs.take(), "\n")
	for uk := range own {
		if !strings.Contains(retry, "reading "+resultKey(m.Run, uk)) {
			t.Errorf("the retry does not read the result of %s:\n%s", uk, retry)
		}
	}
	if !strings.Contains(retry, "listing "+applyingPrefix(m.Run)) {
		t.Errorf("the retry does not list the applies begun:\n%s", retry)
	}
	checkRun(t, st, m.Run)
}

// unitOf is the unit key of own or waited that a key names, or "".
func unitOf(key string, own, waited map[string]bool) string {
	for uk := range own {
		if strings.Contains(key, "/"+uk+".") || strings.Contains(key, "/"+uk+"/") || strings.HasSuffix(key, "/"+uk) {
			return uk
		}
	}
	for uk := range waited {
		if strings.Contains(key, "/"+uk+".") {
			return uk
		}
	}
	return ""
}
