package ci

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
)

// TestHooksInASpreadRun: each job runs the hooks around its own units;
// ci finish's report holds every job's hook steps, named after the job,
// and a post hook's failure fails the run, as on one machine.
func TestHooksInASpreadRun(t *testing.T) {
	testenv.NeedTerraform(t)
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": `dirs:
  a: {tags: [a]}
  b: {tags: [b]}
hooks:
  all:
    pre:
      - {type: run, cmd: ['sh', '-c', 'echo ready']}
    post:
      - {type: run, cmd: ['sh', '-c', 'test ! -d b || exit 3']}
`,
		"a/main.tf": "output \"x\" { value = 1 }\n",
		"b/main.tf": "output \"x\" { value = 2 }\n",
	})
	st := openStore(t, "file://"+t.TempDir())
	_, rep := runReport(t, st, root, StartOptions{Shards: 2, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
	if rep.Hooks == nil {
		t.Fatal("the run's report has no hooks")
	}
	var names []string
	for _, s := range rep.Hooks.Steps {
		names = append(names, s.Name)
	}
	got := strings.Join(names, "\n")
	for _, want := range []string{"wave 0 shard 0: hooks.all.pre[0]", "wave 0 shard 1: hooks.all.post[0]"} {
		if !strings.Contains(got, want) {
			t.Errorf("no step %q among:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(rep.Hooks.Error, "wave 0 shard ") || !strings.Contains(rep.Hooks.Error, "hooks.all.post[0]") || rep.ExitCode != 1 || rep.OK {
		t.Errorf("hooks error %q, exit %d, ok %v", rep.Hooks.Error, rep.ExitCode, rep.OK)
	}
	for dir, s := range statusesOf(rep) {
		if s != string(report.StatusApplied) && s != string(report.StatusNoChanges) {
			t.Errorf("%s: %s: a post hook's failure leaves the units as they ended", dir, s)
		}
	}
}
