package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// End-to-end runs with real terraform: the run state across commands
// (init reuse, resume, gates outside the run, saved plan JSON, the apply
// lock and the plugin cache).

// TestInitSkippedWhenCurrent: a second plan does not init again; a changed
// module source does.
func TestInitSkippedWhenCurrent(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"app/main.tf": strings.Replace(layerTF, "%s", "app", 1),
	})
	e := newE2E(t, root)
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	if _, ok := stepOf(res.Report.Units[0], report.StepInit); !ok {
		t.Fatalf("first plan did not init: %+v", res.Report.Units[0].Steps)
	}
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	if _, ok := stepOf(res.Report.Units[0], report.StepInit); ok {
		t.Errorf("second plan ran init although nothing init depends on changed")
	}
	if err := os.WriteFile(filepath.Join(root, "app", "mod.tf"), []byte("module \"m\" {\n  source = \"./m\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(root, "app", "m", "main.tf"), "output \"x\" {\n  value = 1\n}\n")
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	if _, ok := stepOf(res.Report.Units[0], report.StepInit); !ok || res.Report.Units[0].Status != report.StatusPlanned {
		t.Errorf("a new module call must init again: %+v", res.Report.Units[0])
	}
}

// TestTFVarFromEnvironment: a TF_VAR_ of strata's environment reaches a
// declared variable through the var file, typed.
func TestTFVarFromEnvironment(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"app/main.tf": `variable "names" {
  type = list(string)
}
variable "greeting" {
  type = string
}
output "joined" {
  value = "${var.greeting} ${join(",", var.names)}"
}
`,
	})
	e := newE2E(t, root, `TF_VAR_names=["a","b"]`, "TF_VAR_greeting=hello", "TF_VAR_undeclared=1")
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	res = e.run(CmdOutput, Options{}, stacks.Selection{})
	out, _ := json.Marshal(res.Report.Units[0].Outputs["joined"])
	if !strings.Contains(string(out), `"value":"hello a,b"`) {
		t.Errorf("joined = %s", out)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// TestResume: --resume re-runs what the report left failed or skipped;
// what it applied is not touched again.
func TestResume(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  flaky: {tags: [flaky]}
  after: {tags: [after]}
  free: {tags: [free]}
stacks:
  names:
    flaky: {tag_query: flaky}
    after:
      tag_query: after
      rules: {plan_after: [flaky]}
    free: {tag_query: free}
`,
		"flaky/main.tf": `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "test -f ok"
  }
}
`,
		"after/main.tf": strings.Replace(layerTF, "%s", "after", 1),
		"free/main.tf":  strings.Replace(layerTF, "%s", "free", 1),
	})
	e := newE2E(t, root)
	first := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	want := map[string]string{
		"flaky@default": string(report.StatusFailed), "after@default": string(report.StatusSkipped), "free@default": string(report.StatusApplied),
	}
	got := map[string]string{}
	for _, u := range first.Report.Units {
		got[u.Name()] = string(u.Status)
	}
	if !equalMaps(got, want) {
		t.Fatalf("first apply: %v", got)
	}
	writeFileT(t, filepath.Join(root, "flaky", "ok"), "")
	p, _ := stacks.Load(root, configIn(root))
	run, external, gone := ResumeRun(p, first.Report)
	if len(external) != 0 || len(gone) != 0 {
		t.Errorf("resume: gates %v, gone %v", external, gone)
	}
	res, err := Execute(context.Background(), p, run, Options{Settings: Settings{Command: CmdApply, AutoApprove: true, Parallelism: 2}, Extra: Extra{Environ: e.env}, Output: Output{Console: &e.console}})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res.Report); !equalMaps(got, map[string]string{"flaky@default": string(report.StatusApplied), "after@default": string(report.StatusApplied)}) {
		t.Errorf("resume: %v", got)
	}
}

// TestExternalGate: a unit outside the run opens its dependents' gate only
// when the run state shows it applied at its current digest.
func TestExternalGate(t *testing.T) {
	e := newE2E(t, layerRepo(t, devAfterBase))
	p, _ := stacks.Load(e.root, configIn(e.root))
	base, dev := p.UnitsIn("base")[0], p.UnitsIn("dev")[0]
	runDev := func() *report.Report {
		res, err := Execute(context.Background(), p, &stacks.Run{Units: []stacks.RunUnit{{Unit: dev, Why: "selected"}}},
			Options{Settings: Settings{Command: CmdPlan}, Extra: Extra{Environ: e.env, External: []*stacks.Unit{base}}, Output: Output{Console: &e.console}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Report
	}
	if got := statuses(runDev()); got["dev@default"] != string(report.StatusBlocked)+" (waits for base@default to be applied)" || len(got) != 1 {
		t.Errorf("before base is applied: %v", got)
	}
	e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"base"}})
	if got := statuses(runDev()); got["dev@default"] != string(report.StatusPlanned) {
		t.Errorf("after base is applied: %v", got)
	}
	// A change to base makes its apply stale: the gate closes again.
	writeFileT(t, filepath.Join(e.root, "base", "more.tf"), "output \"o\" {\n  value = 1\n}\n")
	if got := statuses(runDev()); !strings.HasPrefix(got["dev@default"], string(report.StatusBlocked)) {
		t.Errorf("after base changed: %v", got)
	}
}

// TestPlanJSONAndApplyLock: --plan-json writes show -json per unit; a second
// apply while one holds the repository lock fails at once naming the holder.
func TestPlanJSONAndApplyLock(t *testing.T) {
	e := newE2E(t, layerRepo(t, ""))
	dir := t.TempDir()
	e.run(CmdPlan, Options{Settings: Settings{PlanJSON: dir}}, stacks.Selection{})
	b, err := os.ReadFile(filepath.Join(dir, "base", "default.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		ResourceChanges []struct{ Address string } `json:"resource_changes"`
	}
	if err := json.Unmarshal(b, &plan); err != nil || len(plan.ResourceChanges) != 1 || plan.ResourceChanges[0].Address != "terraform_data.this" {
		t.Errorf("plan JSON: %v %s", err, b)
	}
	sd, err := runstate.OpenStateDir(filepath.Join(e.root, ".strata"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := filelock.TryAcquire(sd.LockPath("apply"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	held.SetNote("pid 4242, strata apply, started 2026-11-22T02:00:00Z")
	p, _ := stacks.Load(e.root, configIn(e.root))
	run, _ := p.Select(stacks.Selection{Cwd: "."})
	_, err = Execute(context.Background(), p, run, Options{Settings: Settings{Command: CmdApply, AutoApprove: true}, Extra: Extra{Environ: e.env}, Output: Output{Console: &e.console}})
	if err == nil || !strings.Contains(err.Error(), "pid 4242, strata apply, started 2026-11-22T02:00:00Z") {
		t.Errorf("second apply: %v", err)
	}
}

// TestExternalGateUninspectable: a gate whose module terraform-config-
// inspect cannot read (it panics on a top-level required_providers block)
// stays closed, and the command goes on: the var file asks the project's
// reading of the module, which survived that, and never reads it again.
func TestExternalGateUninspectable(t *testing.T) {
	e := newE2E(t, layerRepo(t, `stacks:
  names:
    base: {tag_query: base}
    dev:
      tag_query: dev
      rules: {plan_after: [base]}
`))
	writeFileT(t, filepath.Join(e.root, "base", "odd.tf"), "required_providers {\n}\n")
	p, _ := stacks.Load(e.root, configIn(e.root))
	base, dev := p.UnitsIn("base")[0], p.UnitsIn("dev")[0]
	res, err := Execute(context.Background(), p, &stacks.Run{Units: []stacks.RunUnit{{Unit: dev, Why: "selected"}}},
		Options{Settings: Settings{Command: CmdPlan}, Extra: Extra{Environ: append(e.env, "TF_VAR_x=1"), External: []*stacks.Unit{base}}, Output: Output{Console: &e.console}})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res.Report); got["dev@default"] != string(report.StatusBlocked)+" (waits for base@default to be applied)" {
		t.Errorf("dev: %v", got)
	}
}
