package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// End-to-end tests: real terraform from PATH, repositories of root modules
// using only terraform_data, local-exec and the local backend. Each test
// has its own repository, cache dir and CLI config file.

func copyTree(t *testing.T, src string) string { return testenv.CopyTree(t, src) }

type e2e struct {
	t       *testing.T
	root    string
	env     []string
	console bytes.Buffer
}

func newE2E(t *testing.T, root string, extraEnv ...string) *e2e {
	needTerraform(t)
	return &e2e{t: t, root: root, env: e2eEnv(t, extraEnv...)}
}

// run runs a command over every unit of the repository (or the selection).
func (e *e2e) run(command string, opt Options, sel stacks.Selection) *Result {
	e.t.Helper()
	return e.runIn(e.project(), command, opt, sel)
}

// project loads the repository.
func (e *e2e) project() *stacks.Project {
	e.t.Helper()
	p, err := stacks.Load(e.root, configIn(e.root))
	if err != nil {
		e.t.Fatalf("load: %v", err)
	}
	return p
}

// runIn runs a command over the units of p (or the selection).
func (e *e2e) runIn(p *stacks.Project, command string, opt Options, sel stacks.Selection) *Result {
	e.t.Helper()
	if sel.Cwd == "" {
		sel.Cwd = "."
	}
	run, err := p.Select(sel)
	if err != nil {
		e.t.Fatal(err)
	}
	opt.Command = command
	opt.NoPropagate = opt.NoPropagate || sel.NoPropagate
	opt.Environ = e.env
	opt.Console = &e.console
	opt.RetryDelay = 10 * time.Millisecond
	if opt.Parallelism == 0 {
		opt.Parallelism = 2
	}
	res, err := Execute(context.Background(), p, run, opt)
	if err != nil {
		e.t.Fatalf("%s: %v\n%s", command, err, e.console.String())
	}
	return res
}

// applyAll applies every unit with -auto-approve and stops the test,
// saying what, unless the run exits 0.
func (e *e2e) applyAll(what string) {
	e.t.Helper()
	if res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{}); res.ExitCode != 0 {
		e.t.Fatalf("%s: %v\n%s", what, statuses(res.Report), e.console.String())
	}
}

func configIn(root string) string {
	for _, n := range []string{config.StrataConfigFile, config.TerrateamConfigFile} {
		if _, err := os.Stat(filepath.Join(root, n)); err == nil {
			return filepath.Join(root, n)
		}
	}
	return ""
}

func statuses(rep *report.Report) map[string]string {
	out := map[string]string{}
	for _, u := range rep.Units {
		s := string(u.Status)
		if u.Reason != "" {
			s += " (" + u.Reason + ")"
		}
		out[u.Name()] = s
	}
	return out
}

// wantStatuses reports each unit of want whose status in got is another.
func wantStatuses(t *testing.T, got, want map[string]string) {
	t.Helper()
	for name, st := range want {
		if got[name] != st {
			t.Errorf("%s: %s, want %s", name, got[name], st)
		}
	}
}

func unitByName(t *testing.T, rep *report.Report, name string) *report.UnitReport {
	t.Helper()
	for _, u := range rep.Units {
		if u.Name() == name {
			return u
		}
	}
	t.Fatalf("no unit %s in the report", name)
	return nil
}

func stepOf(u *report.UnitReport, name string) (report.StepReport, bool) {
	for _, s := range u.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return report.StepReport{}, false
}

func fixtureDir(name string) string { return filepath.Join("..", "fixtures", name) }

// planOf is the step that planned a unit: its plan, or, applied in one
// engine call (apply -auto-approve), its apply.
func planOf(u *report.UnitReport) (report.StepReport, bool) {
	if s, ok := stepOf(u, report.StepPlan); ok {
		return s, true
	}
	return stepOf(u, report.StepApply)
}

// TestNestedFixtureApply applies the nested-stacks fixture and checks, from
// the report's step times, that every edge of the graph was respected; a
// second plan finds nothing to do.
func TestNestedFixtureApply(t *testing.T) {
	e := newE2E(t, copyTree(t, fixtureDir("nested")))
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true, Parallelism: 3}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	for name, st := range statuses(res.Report) {
		if st != string(report.StatusApplied) {
			t.Errorf("%s: %s", name, st)
		}
	}
	p, _ := stacks.Load(e.root, configIn(e.root))
	g, err := p.Graph(p.Units, stacks.GraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Expand()) == 0 {
		t.Fatal("the fixture has no edges")
	}
	for _, edge := range g.Expand() {
		from := unitByName(t, res.Report, edge.From.Name())
		to := unitByName(t, res.Report, edge.To.Name())
		fromApply, ok1 := stepOf(from, report.StepApply)
		toStep := report.StepPlan
		if edge.Kind == stacks.ApplyEdge {
			toStep = report.StepApply
		}
		toS, ok2 := stepOf(to, toStep)
		if toStep == report.StepPlan {
			toS, ok2 = planOf(to)
		}
		if !ok1 || !ok2 {
			t.Fatalf("%s: missing steps in the report", edge)
		}
		if toS.StartedAt.Before(fromApply.FinishedAt) {
			t.Errorf("%s: %s %s started %s, before %s's apply finished %s", edge, to.Name(), toStep,
				toS.StartedAt.Format(time.StampMicro), from.Name(), fromApply.FinishedAt.Format(time.StampMicro))
		}
	}
	e.console.Reset()
	res = e.run(CmdPlan, Options{Settings: Settings{DetailedExitCode: true}}, stacks.Selection{})
	for name, st := range statuses(res.Report) {
		if st != string(report.StatusNoChanges) {
			t.Errorf("second plan: %s: %s", name, st)
		}
	}
	if res.ExitCode != 0 {
		t.Errorf("second plan with -detailed-exitcode: exit %d", res.ExitCode)
	}
}

const layerTF = `resource "terraform_data" "this" {
  input = "%s"
}
`

// devAfterBase are three stacks of layerRepo: dev plans after base is
// applied, prod on its own.
const devAfterBase = `stacks:
  names:
    base: {tag_query: base}
    dev:
      tag_query: dev
      rules: {plan_after: [base]}
    prod: {tag_query: prod}
`

func layerRepo(t *testing.T, stacksYAML string) string {
	t.Helper()
	files := map[string]string{"strata.yml": "dirs:\n  base: {tags: [base]}\n  dev: {tags: [dev]}\n  prod: {tags: [prod]}\n" + stacksYAML}
	for _, d := range []string{"base", "dev", "prod"} {
		files[d+"/main.tf"] = strings.Replace(layerTF, "%s", d, 1)
	}
	return writeRepo(t, files)
}

// TestPlanAfterAcrossInvocations: plan leaves the later stack blocked;
// after base is applied, plan plans it.
func TestPlanAfterAcrossInvocations(t *testing.T) {
	e := newE2E(t, layerRepo(t, `stacks:
  names:
    base: {tag_query: base}
    dev:
      tag_query: dev
      rules: {plan_after: [base]}
    prod: {tag_query: prod}
`))
	res := e.run(CmdPlan, Options{Settings: Settings{DetailedExitCode: true}}, stacks.Selection{})
	want := map[string]string{
		"base@default": string(report.StatusPlanned),
		"dev@default":  string(report.StatusBlocked) + " (waits for base@default to be applied)",
		"prod@default": string(report.StatusPlanned),
	}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Errorf("first plan: %v, want %v", got, want)
	}
	if res.ExitCode != 2 {
		t.Errorf("-detailed-exitcode with planned and blocked units: exit %d, want 2", res.ExitCode)
	}
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"base"}})
	if got := statuses(res.Report); got["base@default"] != string(report.StatusApplied) || len(got) != 1 {
		t.Fatalf("apply --stack base: %v", got)
	}
	// The saved plan was applied as it was: no second plan step.
	if _, planned := stepOf(res.Report.Units[0], report.StepPlan); planned {
		t.Errorf("apply re-planned base although its saved plan was current")
	}
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	want = map[string]string{"base@default": string(report.StatusNoChanges), "dev@default": string(report.StatusPlanned), "prod@default": string(report.StatusPlanned)}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Errorf("plan after applying base: %v, want %v", got, want)
	}
}

// TestApplyAfterPlansBoth: apply_after holds only the apply.
func TestApplyAfterPlansBoth(t *testing.T) {
	e := newE2E(t, layerRepo(t, `stacks:
  names:
    base: {tag_query: base}
    dev: {tag_query: dev}
    prod:
      tag_query: prod
      rules: {apply_after: [dev]}
`))
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	want := map[string]string{"base@default": string(report.StatusPlanned), "dev@default": string(report.StatusPlanned), "prod@default": string(report.StatusPlanned)}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Errorf("plan: %v, want %v", got, want)
	}
}

// TestAutoApplyInPlan: plan applies an auto_apply stack, then plans its
// dependents in the same command.
func TestAutoApplyInPlan(t *testing.T) {
	e := newE2E(t, layerRepo(t, `stacks:
  names:
    base:
      tag_query: base
      auto_apply: true
    dev:
      tag_query: dev
      rules: {modified_by: [base]}
    prod:
      tag_query: prod
      rules: {apply_after: [dev], auto_apply: true}
`))
	res := e.run(CmdPlan, Options{Settings: Settings{DetailedExitCode: true}}, stacks.Selection{})
	want := map[string]string{
		"base@default": string(report.StatusApplied),
		"dev@default":  string(report.StatusPlanned),
		"prod@default": string(report.StatusPlanned) + " (auto_apply waits for dev@default)",
	}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Errorf("plan: %v, want %v\n%s", got, want, e.console.String())
	}
	if res.ExitCode != 2 {
		t.Errorf("exit %d, want 2 (auto-applied and planned units)", res.ExitCode)
	}
	// --no-auto-apply keeps plan a plan.
	res = e.run(CmdPlan, Options{Settings: Settings{NoAutoApply: true}}, stacks.Selection{Stacks: []string{"prod"}})
	if got := statuses(res.Report); got["prod@default"] != string(report.StatusPlanned) {
		t.Errorf("--no-auto-apply: %v", got)
	}
}

// TestVariablesAndSensitive: stack variables reach a local-exec under their
// own names and as STACK_VAR_; a sensitive one never appears in the
// console, the report or the summary.
func TestVariablesAndSensitive(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `stacks:
  names:
    app:
      tag_query: 'dir:app'
      sensitive: [db_password]
      variables:
        environment: staging
        db_password: hunter2-very-secret
`,
		"app/main.tf": `resource "terraform_data" "env" {
  provisioner "local-exec" {
    command = "printf '%s|%s|%s' \"$environment\" \"$STACK_VAR_ENVIRONMENT\" \"$STRATA_STACK\" > vars.out; echo password is $db_password"
  }
}
`,
	})
	e := newE2E(t, root)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	got, err := os.ReadFile(filepath.Join(root, "app", "vars.out"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "staging|staging|app" {
		t.Errorf("variables seen by local-exec: %q", got)
	}
	if !strings.Contains(e.console.String(), "password is ***") {
		t.Errorf("the masked line is not in the console:\n%s", e.console.String())
	}
	reportJSON, _ := json.Marshal(res.Report)
	for what, text := range map[string]string{"console": e.console.String(), "report": string(reportJSON), "summary": res.Report.Markdown()} {
		if strings.Contains(text, "hunter2-very-secret") {
			t.Errorf("the sensitive value appears in the %s", what)
		}
	}
}

// TestFailureSkipsDependents: a failing unit's dependents are skipped with
// it as the root cause; an independent unit is still applied; exit 1.
func TestFailureSkipsDependents(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  broken: {tags: [broken]}
  after: {tags: [after]}
  later: {tags: [later]}
  free: {tags: [free]}
stacks:
  names:
    broken: {tag_query: broken}
    after:
      tag_query: after
      rules: {plan_after: [broken]}
    later:
      tag_query: later
      rules: {apply_after: [after]}
    free: {tag_query: free}
`,
		"broken/main.tf": `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "echo failing on purpose; exit 3"
  }
}
`,
		"after/main.tf": strings.Replace(layerTF, "%s", "after", 1),
		"later/main.tf": strings.Replace(layerTF, "%s", "later", 1),
		"free/main.tf":  strings.Replace(layerTF, "%s", "free", 1),
	})
	e := newE2E(t, root)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	got := statuses(res.Report)
	if !strings.HasPrefix(got["broken@default"], string(report.StatusFailed)+" (apply failed") {
		t.Errorf("broken: %s", got["broken@default"])
	}
	for _, u := range []string{"after@default", "later@default"} {
		if got[u] != string(report.StatusSkipped)+" (broken@default failed)" {
			t.Errorf("%s: %s", u, got[u])
		}
	}
	if got["free@default"] != string(report.StatusApplied) {
		t.Errorf("free: %s", got["free@default"])
	}
	if res.ExitCode != 1 || res.Report.OK {
		t.Errorf("exit %d ok %t, want 1 false", res.ExitCode, res.Report.OK)
	}
	// The summary groups by stack and says what failed.
	md := res.Report.Markdown()
	if !strings.Contains(md, "### broken — failed") || !strings.Contains(md, "failing on purpose") {
		t.Errorf("summary:\n%s", md)
	}
}

// TestWorkspacesAndSharedDir: two units of one stack in two workspaces of
// one dir, and a dirspace in two stacks with their own data dirs, all run.
func TestWorkspacesAndSharedDir(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  multi:
    tags: [multi]
    workspaces: {blue: {}, green: {}}
  shared:
    tags: [shared]
    shared_state: true
stacks:
  allow_workspace_in_multiple_stacks: true
  names:
    multi: {tag_query: multi}
    one:
      tag_query: shared
      variables: {flavour: one}
    two:
      tag_query: shared
      variables: {flavour: two}
`,
		"multi/main.tf": `resource "terraform_data" "ws" {
  input = terraform.workspace
}
output "ws" {
  value = terraform_data.ws.output
}
`,
		"shared/m/main.tf": "output \"x\" {\n  value = 1\n}\n",
		"shared/main.tf": `module "m" {
  source = "./m"
}
resource "terraform_data" "s" {
  provisioner "local-exec" {
    command = "echo $flavour > flavour-$flavour.out"
  }
}
`,
	})
	e := newE2E(t, root)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true, Parallelism: 4}}, stacks.Selection{})
	got := statuses(res.Report)
	if got["multi@blue"] != string(report.StatusApplied) || got["multi@green"] != string(report.StatusApplied) {
		t.Fatalf("apply: %v\n%s", got, e.console.String())
	}
	// shared_state: the two units share one state, one after the other:
	// whichever runs first applies, the other finds nothing to do.
	one, two := got["shared@default#one"], got["shared@default#two"]
	if !(one == string(report.StatusApplied) && two == string(report.StatusNoChanges)) && !(one == string(report.StatusNoChanges) && two == string(report.StatusApplied)) {
		t.Errorf("shared units: one %s, two %s", one, two)
	}
	flavours, _ := filepath.Glob(filepath.Join(root, "shared", "flavour-*.out"))
	if len(flavours) != 1 {
		t.Errorf("local-exec ran for %d stacks, want the one that applied", len(flavours))
	}
	for _, d := range []string{"shared/.terraform/strata/one/default", "shared/.terraform/strata/two/default"} {
		if _, err := os.Stat(filepath.Join(root, d)); err != nil {
			t.Errorf("own data dir %s: %v", d, err)
		}
	}
	res = e.run(CmdOutput, Options{}, stacks.Selection{Stacks: []string{"multi"}})
	for _, ws := range []string{"blue", "green"} {
		u := unitByName(t, res.Report, "multi@"+ws)
		out, _ := json.Marshal(u.Outputs["ws"])
		if !strings.Contains(string(out), `"value":"`+ws+`"`) {
			t.Errorf("output of multi@%s: %s", ws, out)
		}
	}
}

func needTerraform(t *testing.T)                             { testenv.NeedTerraform(t) }
func e2eEnv(t *testing.T, extra ...string) []string          { return testenv.Env(t, extra...) }
func writeRepo(t *testing.T, files map[string]string) string { return testenv.WriteRepo(t, files) }
func writeFileT(t *testing.T, p, content string)             { testenv.WriteFile(t, p, content) }

// replaceIn replaces the first old in the file at p with new.
func replaceIn(t *testing.T, p, old, new string) {
	t.Helper()
	writeFileT(t, p, strings.Replace(readFile(t, p), old, new, 1))
}
