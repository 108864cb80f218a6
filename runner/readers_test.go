package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// readersRepo: network feeds app (vpc_id) and db (zone); app feeds web.
// No rule orders them: their inputs alone do.
func readersRepo(t *testing.T) string {
	t.Helper()
	return writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  network: {tags: [network]}
  app: {tags: [app]}
  db: {tags: [db]}
  web: {tags: [web]}
stacks:
  names:
    network: {tag_query: network}
    app:
      tag_query: app
      inputs: {vpc_id: network.vpc_id}
    db:
      tag_query: db
      inputs: {zone: network.zone}
    web:
      tag_query: web
      inputs: {seen: app.seen_vpc}
`,
		"network/main.tf": `resource "terraform_data" "vpc" {
  input = "vpc-1"
}
output "vpc_id" {
  value = terraform_data.vpc.output
}
output "zone" {
  value = "zone-a"
}
`,
		"app/main.tf": testenv.ConsumerTF("vpc_id", "app", "seen_vpc"),
		"db/main.tf":  testenv.ConsumerTF("zone", "db", ""),
		"web/main.tf": testenv.ConsumerTF("seen", "web", "seen"),
	})
}

// readersApplied is readersRepo with every unit applied, and the path of
// network's main.tf.
func readersApplied(t *testing.T) (e *e2e, netTF string) {
	t.Helper()
	root := readersRepo(t)
	e = newE2E(t, root)
	e.applyAll("first apply")
	return e, filepath.Join(root, "network", "main.tf")
}

// TestReadersPulledIn: applying a producer whose apply changes an output
// pulls the consumers that read it into the run, after it, and theirs in
// turn; a consumer of an output that did not change never runs and is in
// no report; an apply that changes no output read pulls nobody.
func TestReadersPulledIn(t *testing.T) {
	e, netTF := readersApplied(t)
	replaceIn(t, netTF, "vpc-1", "vpc-2")
	e.console.Reset()
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"network"}})
	got := statuses(res.Report)
	want := map[string]string{"network@default": "applied", "app@default": "applied", "web@default": "applied"}
	if len(got) != len(want) || res.ExitCode != 0 {
		t.Fatalf("apply of network: %v (exit %d), want %v\n%s", got, res.ExitCode, want, e.console.String())
	}
	wantStatuses(t, got, want)
	if why := unitByName(t, res.Report, "app@default").Why; why != "reads: network@default (network.vpc_id)" {
		t.Errorf("app's why = %q", why)
	}
	if why := unitByName(t, res.Report, "web@default").Why; why != "reads: app@default (app.seen_vpc)" {
		t.Errorf("web's why = %q", why)
	}
	netApply, _ := stepOf(unitByName(t, res.Report, "network@default"), report.StepApply)
	appPlan, _ := planOf(unitByName(t, res.Report, "app@default"))
	if appPlan.StartedAt.Before(netApply.FinishedAt) {
		t.Error("app planned before network was applied")
	}
	if out := outputsOf(t, e, "web")["seen"]; out != `"vpc-2"` {
		t.Errorf("web saw %s", out)
	}
	if strings.Contains(e.console.String(), "[db@default]") {
		t.Errorf("db, whose input did not change, ran:\n%s", e.console.String())
	}

	// A change to network that leaves its outputs as they were pulls
	// nobody.
	writeFileT(t, netTF, readFile(t, netTF)+"resource \"terraform_data\" \"more\" {}\n")
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"network"}})
	if got := statuses(res.Report); len(got) != 1 || got["network@default"] != "applied" || res.ExitCode != 0 {
		t.Errorf("apply without an output change: %v (exit %d)", got, res.ExitCode)
	}

	// --no-propagate keeps the run as selected.
	replaceIn(t, netTF, "zone-a", "zone-b")
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"network"}, NoPropagate: true})
	if got := statuses(res.Report); len(got) != 1 || got["network@default"] != "applied" {
		t.Errorf("apply with --no-propagate: %v", got)
	}
	// The plan of db now shows the zone network changed.
	res = e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"db"}, NoPropagate: true})
	if got := statuses(res.Report); got["db@default"] != "planned" {
		t.Errorf("db after its input changed: %v", got)
	}
}

// TestReadersInPlan: in plan, an auto-applied producer whose apply changes
// an output pulls its reader in, which is planned.
func TestReadersInPlan(t *testing.T) {
	e, netTF := readersApplied(t)
	cfg := filepath.Join(e.root, "strata.yml")
	replaceIn(t, cfg, "network: {tag_query: network}", "network: {tag_query: network, auto_apply: true}")
	replaceIn(t, netTF, "zone-a", "zone-b")
	res := e.run(CmdPlan, Options{Settings: Settings{AutoApprove: true, DetailedExitCode: true}}, stacks.Selection{Stacks: []string{"network"}})
	got := statuses(res.Report)
	if len(got) != 2 || got["network@default"] != "applied" || got["db@default"] != "planned" || res.ExitCode != 2 {
		t.Fatalf("plan: %v (exit %d)\n%s", got, res.ExitCode, e.console.String())
	}
	if why := unitByName(t, res.Report, "db@default").Why; why != "reads: network@default (network.zone)" {
		t.Errorf("db's why = %q", why)
	}
	// The apply of the saved plan records the outputs it changed, for
	// the jobs of a sharded run (docs/ci.md#readers).
	sd, network := stateDirOf(t, e.root, "network")
	us, err := sd.ReadUnit(network)
	if err != nil || us.Apply == nil || !us.Apply.OutputsKnown || len(us.Apply.ChangedOutputs) != 1 || us.Apply.ChangedOutputs[0] != "zone" {
		t.Errorf("network's apply record: %+v, %v", us.Apply, err)
	}
}

// TestReadersUnknownOutputs: a reused saved plan whose record does not
// say which outputs it changes (an older strata's) pulls a reader in
// unless the reader's journal shows it applied with the values it would
// get now.
func TestReadersUnknownOutputs(t *testing.T) {
	e, netTF := readersApplied(t)
	replaceIn(t, netTF, "vpc-1", "vpc-2")
	e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"network"}, NoPropagate: true})
	sd, network := stateDirOf(t, e.root, "network")
	if err := sd.UpdateUnit(network, func(s *runstate.UnitState) {
		s.Plan.ChangedOutputs, s.Plan.OutputsKnown, s.Plan.Changes.Outputs = nil, false, 0
	}); err != nil {
		t.Fatal(err)
	}
	res := e.run(CmdApply, Options{Hooks: Hooks{Approve: func([]*report.UnitReport) (Answer, error) { return AnswerAll, nil }}}, stacks.Selection{Stacks: []string{"network"}})
	got := statuses(res.Report)
	if len(got) != 3 || got["network@default"] != "applied" || got["app@default"] != "applied" || got["web@default"] != "applied" {
		t.Fatalf("apply of the reused plan: %v\n%s", got, e.console.String())
	}
	if !strings.Contains(e.console.String(), "reusing the plan saved") {
		t.Errorf("the saved plan was not reused:\n%s", e.console.String())
	}
}
