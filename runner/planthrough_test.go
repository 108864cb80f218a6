package runner

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// throughRepo: net feeds app (vpc_id, known when net plans), db (zone, a
// constant), web (id, unknown until net is applied) and ruled (zone, but
// ruled also plans after net by a rule).
func throughRepo(t *testing.T) string {
	t.Helper()
	consumer := func(v string) string { return testenv.ConsumerTF(v, "r", "seen") }
	return writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  net: {tags: [net]}
  app: {tags: [app]}
  db: {tags: [db]}
  web: {tags: [web]}
  ruled: {tags: [ruled]}
stacks:
  names:
    net: {tag_query: net}
    app:
      tag_query: app
      inputs: {vpc_id: net.vpc_id}
    db:
      tag_query: db
      inputs: {zone: net.zone}
    web:
      tag_query: web
      inputs: {id: net.id}
    ruled:
      tag_query: ruled
      rules: {plan_after: [net]}
      inputs: {zone: net.zone}
`,
		"net/main.tf": `resource "terraform_data" "vpc" {
  input = "vpc-1"
}
output "vpc_id" {
  value = terraform_data.vpc.input
}
output "id" {
  value = terraform_data.vpc.id
}
output "zone" {
  value = "zone-a"
}
`,
		"app/main.tf":   consumer("vpc_id"),
		"db/main.tf":    consumer("zone"),
		"web/main.tf":   consumer("id"),
		"ruled/main.tf": consumer("zone"),
	})
}

// TestPlanThrough: a consumer that waits for its producer only for data
// plans in the same run against the producer's plan when every value it
// reads is known; an unknown value blocks it, naming the output; a rule
// between the stacks keeps the wait. The values are in the consumer's
// digest: an apply whose producer values differ plans it again.
func TestPlanThrough(t *testing.T) {
	root := throughRepo(t)
	e := newE2E(t, root)
	res := e.run(CmdPlan, Options{Settings: Settings{DetailedExitCode: true}}, stacks.Selection{})
	want := map[string]string{
		"net@default":   "planned",
		"app@default":   "planned (planned against net@default's plan)",
		"db@default":    "planned (planned against net@default's plan)",
		"web@default":   "deferred (net.id is unknown until net@default is applied)",
		"ruled@default": "blocked (waits for net@default to be applied)",
	}
	wantStatuses(t, statuses(res.Report), want)
	if t.Failed() {
		t.Fatalf("plan:\n%s", e.console.String())
	}
	if in := unitByName(t, res.Report, "app@default").Inputs["vpc_id"]; in.Value != "vpc-1" {
		t.Errorf("app's input in the report: %+v", in)
	}
	if web := unitByName(t, res.Report, "web@default"); !reflect.DeepEqual(web.DeferredOn, []string{"net.id"}) {
		t.Errorf("web is deferred on %v, want [net.id]", web.DeferredOn)
	}
	if res.ExitCode != 2 {
		t.Errorf("plan -detailed-exitcode exit %d, want 2", res.ExitCode)
	}
	if !strings.Contains(e.console.String(), `+ input = "vpc-1"`) && !strings.Contains(e.console.String(), `+ input  = "vpc-1"`) {
		t.Errorf("app's plan does not use net's planned value:\n%s", e.console.String())
	}

	// Everything applies; then net's zone is planned as zone-b, and changed
	// to zone-c before the apply: db's saved plan (zone-b) is not reused.
	e.applyAll("apply")
	netTF := filepath.Join(root, "net", "main.tf")
	replaceIn(t, netTF, "zone-a", "zone-b")
	res = e.run(CmdPlan, Options{}, stacks.Selection{Dirs: []string{"net", "db"}})
	if got := statuses(res.Report); got["db@default"] != "planned (planned against net@default's plan)" {
		t.Fatalf("plan with zone-b: %v\n%s", got, e.console.String())
	}
	replaceIn(t, netTF, "zone-b", "zone-c")
	e.console.Reset()
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Dirs: []string{"net", "db"}})
	net, db := unitByName(t, res.Report, "net@default"), unitByName(t, res.Report, "db@default")
	if net.Status != report.StatusApplied || db.Status != report.StatusApplied {
		t.Fatalf("apply with zone-c: %v\n%s", statuses(res.Report), e.console.String())
	}
	if strings.Contains(e.console.String(), "[db@default] reusing the plan") {
		t.Error("db's plan against zone-b was reused")
	}
	// What was planned (zone-b) is not what was applied (zone-c).
	if db.Replanned == nil || db.Replanned.Same || !strings.HasPrefix(db.Reason, "re-planned: differs from the reviewed plan") {
		t.Errorf("db: %q, replanned %+v", db.Reason, db.Replanned)
	}
	if out := outputsOf(t, e, "db")["seen"]; out != `"zone-c"` {
		t.Errorf("db applied with %s", out)
	}
}

// TestPlanThroughInApply: in apply, a consumer planned against its
// producer's plan is asked about in the same wave, and applies after the
// producer.
func TestPlanThroughInApply(t *testing.T) {
	root := throughRepo(t)
	e := newE2E(t, root)
	e.applyAll("apply")
	netTF := filepath.Join(root, "net", "main.tf")
	replaceIn(t, netTF, "zone-a", "zone-d")
	var waves [][]string
	approve := answerYes(&waves)
	res := e.run(CmdApply, Options{Hooks: Hooks{Approve: approve}}, stacks.Selection{Dirs: []string{"net", "db"}})
	if got := statuses(res.Report); got["net@default"] != "applied" || got["db@default"] != "applied" || res.ExitCode != 0 {
		t.Fatalf("apply: %v\n%s", got, e.console.String())
	}
	// ruled, which plans after net by a rule, joins once net's apply
	// changed the zone it reads, and is asked about in a later wave.
	if len(waves) != 2 || strings.Join(waves[0], " ") != "db@default net@default" || strings.Join(waves[1], " ") != "ruled@default" {
		t.Errorf("waves = %v, want db and net in the first", waves)
	}
	netApply, _ := stepOf(unitByName(t, res.Report, "net@default"), report.StepApply)
	dbApply, _ := stepOf(unitByName(t, res.Report, "db@default"), report.StepApply)
	if dbApply.StartedAt.Before(netApply.FinishedAt) {
		t.Error("db applied before net")
	}
	if out := outputsOf(t, e, "db")["seen"]; out != `"zone-d"` {
		t.Errorf("db applied with %s", out)
	}
}

// TestDeferredContinued: a consumer deferred by plan (its producer's plan
// leaves a value it reads unknown) is planned and applied by the apply
// that applies its producer, in the same run, after it, and says so when
// that apply saw the producer's plan (docs/behaviour.md#deferred-units);
// the report names what it waited for.
func TestDeferredContinued(t *testing.T) {
	root := throughRepo(t)
	e := newE2E(t, root)
	sel := stacks.Selection{Dirs: []string{"net", "web"}}
	res := e.run(CmdPlan, Options{}, sel)
	if got := statuses(res.Report); got["web@default"] != "deferred (net.id is unknown until net@default is applied)" || res.ExitCode != 0 {
		t.Fatalf("plan: exit %d, %v\n%s", res.ExitCode, got, e.console.String())
	}
	if v := res.Report.Verdict(); v != "1 to change, 1 deferred" {
		t.Errorf("verdict %q", v)
	}
	// The apply after that plan, as a merge's: net's saved plan is
	// reused, web plans once it is applied, with its id, and says so.
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true, NoPropagate: true}}, sel)
	if got := statuses(res.Report); got["net@default"] != "applied" || got["web@default"] != "applied (planned after net@default was applied: net.id was unknown until then)" {
		t.Errorf("apply reusing net's plan: %v\n%s", got, e.console.String())
	}
	if !strings.Contains(e.console.String(), "[net@default] reusing the plan") {
		t.Errorf("net's saved plan was not reused:\n%s", e.console.String())
	}

	// An apply that plans net (no saved plan to reuse), asking: web
	// waits for net's apply, then plans with net's id.
	e = newE2E(t, throughRepo(t))
	var waves [][]string
	approve := answerYes(&waves)
	res = e.run(CmdApply, Options{Hooks: Hooks{Approve: approve}, Settings: Settings{NoPropagate: true}}, sel)
	want := map[string]string{
		"net@default": "applied",
		"web@default": "applied (planned after net@default was applied: net.id was unknown until then)",
	}
	if !reflect.DeepEqual(waves, [][]string{{"net@default"}, {"web@default"}}) {
		t.Errorf("asked about %v, want net, then web", waves)
	}
	wantStatuses(t, statuses(res.Report), want)
	web := unitByName(t, res.Report, "web@default")
	if !reflect.DeepEqual(web.DeferredOn, []string{"net.id"}) {
		t.Errorf("web's deferred_on %v", web.DeferredOn)
	}
	netDone, _ := stepOf(unitByName(t, res.Report, "net@default"), report.StepApply)
	webPlan, ok := planOf(web)
	if !ok || webPlan.StartedAt.Before(netDone.FinishedAt) {
		t.Errorf("web planned before net was applied")
	}
	if out := outputsOf(t, e, "web")["seen"]; out == "" || strings.Contains(out, "unknown") {
		t.Errorf("web applied with %q", out)
	}
	if res.ExitCode != 0 {
		t.Errorf("apply exit %d\n%s", res.ExitCode, e.console.String())
	}
}

// answerYes approves every wave asked about, noting in waves the units of
// each, in the order asked.
func answerYes(waves *[][]string) func([]*report.UnitReport) (Answer, error) {
	return func(units []*report.UnitReport) (Answer, error) {
		var names []string
		for _, u := range units {
			names = append(names, u.Name())
		}
		*waves = append(*waves, names)
		return AnswerYes, nil
	}
}
