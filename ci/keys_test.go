package ci

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// TestUnitKey: the names runstate's TestKeyOfStaysInFolder does not try.
func TestUnitKey(t *testing.T) {
	tests := []struct {
		dir, ws, stack, want string
	}{
		{"dir with space", "ws", "s", "dir=20with=20space/ws#s"},
		{"x", "", "s", "x/=#s"},
		{"a=b", "w", "s", "a=3Db/w#s"},
	}
	for _, tt := range tests {
		got := runstate.KeyOf(tt.dir, tt.ws, tt.stack)
		if got != tt.want {
			t.Errorf("runstate.KeyOf(%q, %q, %q) = %q, want %q", tt.dir, tt.ws, tt.stack, got, tt.want)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "." || seg == ".." || seg == "" {
				t.Errorf("runstate.KeyOf(%q) has segment %q", tt.dir, seg)
			}
		}
	}
	// Different units never share a key.
	if runstate.KeyOf("a/b", "w", "s") == runstate.KeyOf("a=2Fb", "w", "s") {
		t.Error("escaping is ambiguous")
	}
}

// TestJobFindsUnitsByKey: a job finds its predecessors' results and its
// gates' records under the keys they were written at, for a workspace
// name holding '@' too: a unit's ID is dir@workspace#stack, and a dir and
// a workspace may both hold '@', so an ID is never split to find a key.
func TestJobFindsUnitsByKey(t *testing.T) {
	ctx := context.Background()
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": `dirs:
  net:
    workspaces:
      team@eu: {tags: [net]}
  app: {tags: [app]}
  gate: {tags: [gate]}
stacks:
  names:
    net: {tag_query: net}
    app:
      tag_query: app
      rules: {plan_after: [net]}
    gate: {tag_query: gate}
`,
		"net/main.tf":  "",
		"app/main.tf":  "",
		"gate/main.tf": "",
	})
	p := loadRepo(t, root)
	var net, gate *stacks.Unit
	var run stacks.Run
	for _, u := range p.Units {
		switch u.Dir {
		case "net":
			net = u
		case "gate":
			gate = u
			continue
		}
		run.Units = append(run.Units, stacks.RunUnit{Unit: u, Why: "selected"})
	}
	if net.ID() != "net@team@eu#net" {
		t.Fatalf("net's ID is %q", net.ID())
	}
	st, err := objstore.Open(ctx, "mem://", objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(ctx, st, p, &run, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, Gates: []*stacks.Unit{gate}})
	if err != nil {
		t.Fatal(err)
	}
	// What the jobs of wave 0 and of the gate's own runs left behind.
	res := &Result{Unit: &report.UnitReport{Dir: net.Dir, Workspace: net.Workspace, Stack: net.Stack.Name, Status: report.StatusPlanned}}
	if err := putJSON(ctx, st, resultKey(m.Run, runstate.UnitKey(net)), res, true); err != nil {
		t.Fatal(err)
	}
	applied := &runstate.UnitState{Apply: &runstate.ApplyRecord{Digest: "sha256:gate"}}
	if err := putJSON(ctx, st, runstate.StateKey(runstate.UnitKey(gate)), applied, true); err != nil {
		t.Fatal(err)
	}
	j, err := FetchJob(ctx, st, SliceOptions{Run: m.Run, Wave: 1, Shard: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.slice) != 1 || j.slice[0].Dir != "app" {
		t.Fatalf("wave 1 holds %v; expected app", j.slice)
	}
	if r := j.results[net.ID()]; r == nil || r.Unit.Status != report.StatusPlanned {
		t.Errorf("the job does not see %s's result: %v", net.ID(), r)
	}
	if r := j.units[runstate.UnitKey(gate)]; r == nil || r.State.Apply == nil || r.State.Apply.Digest != "sha256:gate" {
		t.Errorf("the job does not see the gate's record: %+v", r)
	}
}
