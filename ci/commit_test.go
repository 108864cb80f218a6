package ci

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-iac/strata/runner"
)

// TestJobOnAnotherCommit: a job whose checkout is not the commit the run
// started on is refused before it runs or records anything.
func TestJobOnAnotherCommit(t *testing.T) {
	ctx := context.Background()
	p := loadRepo(t, layeredRepo(t, 2, 2))
	st, m := startInMemory(t, p, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, Commit: "aaaa111"})
	_, err := RunSlice(ctx, st, p, SliceOptions{Run: m.Run, Commit: "bbbb222", StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "started on commit aaaa111; this job has bbbb222 checked out") {
		t.Fatalf("job on another commit: %v", err)
	}
	results, err := st.List(ctx, "runs/"+m.Run+"/results/")
	if err != nil || len(results) != 0 {
		t.Errorf("results recorded: %v, %v", results, err)
	}
}
