package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

const chainConfig = `dirs:
  network: {tags: [network]}
  app: {tags: [app]}
  db: {tags: [db]}
stacks:
  names:
    network:
      tag_query: network
    app:
      tag_query: app
      rules: {plan_after: [network]}
      inputs:
        vpc_id: network.vpc_id
        subnets: network.subnets
        tags: {dir: network, output: tags}
    db:
      tag_query: db
      rules: {plan_after: [network]}
      auto_inputs: true
`

func chainRepo(t *testing.T, vpc string) string {
	t.Helper()
	return writeRepo(t, map[string]string{
		"strata.yml": chainConfig,
		"network/main.tf": `resource "terraform_data" "vpc" {
  input = "` + vpc + `"
}
output "vpc_id" {
  value = terraform_data.vpc.output
}
output "subnets" {
  value = ["a", "b", 3]
}
output "tags" {
  value = {env = "prod", tier = 1}
}
output "secret" {
  value     = "hunter2-from-network"
  sensitive = true
}
`,
		"app/main.tf": `variable "vpc_id" {
  type = string
}
variable "subnets" {
  type = any
}
variable "tags" {
  type = any
}
resource "terraform_data" "app" {
  input = var.vpc_id
}
output "seen_vpc" {
  value = var.vpc_id
}
output "seen_subnets" {
  value = var.subnets
}
output "seen_tags" {
  value = var.tags
}
`,
		"db/main.tf": `variable "vpc_id" {
  type = string
}
variable "secret" {
  type      = string
  sensitive = true
}
resource "terraform_data" "db" {
  input = var.vpc_id
}
output "seen_vpc" {
  value = var.vpc_id
}
`,
	})
}

func outputsOf(t *testing.T, e *e2e, dir string) map[string]string {
	t.Helper()
	res := e.run(CmdOutput, Options{}, stacks.Selection{Dirs: []string{dir}, NoPropagate: true})
	out := map[string]string{}
	for name, o := range res.Report.Units[0].Outputs {
		v, _ := json.Marshal(o.(map[string]any)["value"])
		out[name] = string(v)
	}
	return out
}

// TestInputsChain: network's string, list and map outputs feed app by
// explicit inputs and db by auto_inputs, typed; a changed output re-applies
// its consumers; a sensitive output never shows.
func TestInputsChain(t *testing.T) {
	root := chainRepo(t, "vpc-1")
	e := newE2E(t, root)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply: %v\n%s", statuses(res.Report), e.console.String())
	}
	app := outputsOf(t, e, "app")
	want := map[string]string{"seen_vpc": `"vpc-1"`, "seen_subnets": `["a","b",3]`, "seen_tags": `{"env":"prod","tier":1}`}
	for k, v := range want {
		if app[k] != v {
			t.Errorf("app %s = %s, want %s", k, app[k], v)
		}
	}
	if db := outputsOf(t, e, "db"); db["seen_vpc"] != `"vpc-1"` {
		t.Errorf("db (auto_inputs) seen_vpc = %s", db["seen_vpc"])
	}
	appReport := unitByName(t, res.Report, "app@default")
	if in := appReport.Inputs["vpc_id"]; in.From != "network.vpc_id" || in.Value != "vpc-1" {
		t.Errorf("report inputs of app: %+v", appReport.Inputs)
	}
	dbReport := unitByName(t, res.Report, "db@default")
	if in := dbReport.Inputs["secret"]; in.From != "network.secret" || in.Value != "***" {
		t.Errorf("report inputs of db: %+v", dbReport.Inputs)
	}
	reportJSON, _ := json.Marshal(res.Report)
	for what, text := range map[string]string{"console": e.console.String(), "report": string(reportJSON), "summary": res.Report.Markdown()} {
		if strings.Contains(text, "hunter2-from-network") {
			t.Errorf("the sensitive output appears in the %s", what)
		}
	}
	// network's output changes: the next apply re-applies app and db with
	// the new value.
	writeFileT(t, filepath.Join(root, "network", "main.tf"), strings.Replace(readFile(t, filepath.Join(root, "network", "main.tf")), "vpc-1", "vpc-2", 1))
	e.console.Reset()
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	got := statuses(res.Report)
	if got["app@default"] != string(report.StatusApplied) || got["db@default"] != string(report.StatusApplied) {
		t.Fatalf("second apply: %v", got)
	}
	if app := outputsOf(t, e, "app"); app["seen_vpc"] != `"vpc-2"` {
		t.Errorf("app after the change: %s", app["seen_vpc"])
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProducerOutsideTheRun: a consumer's producer not in the run is read
// as it stands; never applied, the consumer is blocked saying so.
func TestProducerOutsideTheRun(t *testing.T) {
	e := newE2E(t, chainRepo(t, "vpc-1"))
	res := e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"app"}, NoPropagate: true})
	if got := statuses(res.Report); got["app@default"] != string(report.StatusBlocked)+" (network.subnets has no value (network@default never applied))" {
		t.Errorf("before network is applied: %v", got)
	}
	// Without propagation: network's new outputs would pull app in.
	e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"network"}, NoPropagate: true})
	res = e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"app"}, NoPropagate: true})
	if got := statuses(res.Report); got["app@default"] != string(report.StatusPlanned) {
		t.Errorf("after network is applied: %v\n%s", got, e.console.String())
	}
	if !strings.Contains(e.console.String(), `+ input  = "vpc-1"`) {
		t.Errorf("the plan does not use the producer's value:\n%s", e.console.String())
	}
}

const prereqConfig = `dirs:
  creds: {tags: [creds]}
  app: {tags: [app]}
stacks:
  names:
    rotate-credentials:
      tag_query: creds
    app:
      tag_query: app
      rules:
        prerequisites:
          - stack: rotate-credentials
            succeeded_within: 1h
`

// TestPrerequisites: an out-of-date prerequisite is applied first by apply
// (even with no changes); within its window it is not touched; under plan
// without auto_apply the consumer is blocked with the age.
func TestPrerequisites(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": prereqConfig,
		"creds/main.tf": `resource "terraform_data" "token" {
  provisioner "local-exec" {
    command = "date +%s%N >> rotations.log"
  }
}
`,
		"app/main.tf": `resource "terraform_data" "app" {}
`,
	})
	e := newE2E(t, root)
	rotations := func() int {
		b, _ := os.ReadFile(filepath.Join(root, "creds", "rotations.log"))
		return strings.Count(string(b), "\n")
	}
	res := e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"app"}, NoPropagate: true})
	if got := statuses(res.Report); got["app@default"] != string(report.StatusBlocked)+" (rotate-credentials never succeeded (limit 1h))" {
		t.Errorf("plan with a never-applied prerequisite: %v", got)
	}
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"app"}, NoPropagate: true})
	got := statuses(res.Report)
	if got["creds@default"] != string(report.StatusApplied) || got["app@default"] != string(report.StatusApplied) {
		t.Fatalf("apply: %v\n%s", got, e.console.String())
	}
	if why := unitByName(t, res.Report, "creds@default").Why; why != "prerequisite_of: app" {
		t.Errorf("why = %q", why)
	}
	creds, app := unitByName(t, res.Report, "creds@default"), unitByName(t, res.Report, "app@default")
	ca, _ := stepOf(creds, report.StepApply)
	ap, _ := planOf(app)
	if ap.StartedAt.Before(ca.FinishedAt) {
		t.Error("app planned before its prerequisite was applied")
	}
	if rotations() != 1 {
		t.Fatalf("rotations = %d", rotations())
	}
	// Within the window: not touched.
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"app"}, NoPropagate: true})
	if got := statuses(res.Report); len(got) != 1 || got["app@default"] != string(report.StatusNoChanges) {
		t.Errorf("within the window: %v", got)
	}
	// Two hours later: applied again although nothing changed, so the
	// refresh reaches the state.
	later := time.Now().Add(2 * time.Hour)
	res = e.run(CmdPlan, Options{Extra: Extra{Now: func() time.Time { return later }}}, stacks.Selection{Stacks: []string{"app"}, NoPropagate: true})
	if got := statuses(res.Report); got["app@default"] != string(report.StatusBlocked)+" (rotate-credentials last succeeded 2h ago (limit 1h))" {
		t.Errorf("plan two hours later: %v", got)
	}
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}, Extra: Extra{Now: func() time.Time { return later }}}, stacks.Selection{Stacks: []string{"app"}, NoPropagate: true})
	if got := statuses(res.Report); got["creds@default"] != string(report.StatusApplied) {
		t.Errorf("apply two hours later: %v", got)
	}
}

// TestStaleCredentialsRecipe: the Pulumi operator's recipe: a dir in two
// stacks (shared_state), one stack targeting the credential resource, the
// main stack requiring it fresh. apply refreshes the credential first, then
// applies the rest, and the credential is rotated exactly once.
func TestStaleCredentialsRecipe(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  cluster:
    tags: [cluster]
    shared_state: true
stacks:
  allow_workspace_in_multiple_stacks: true
  names:
    credentials:
      tag_query: cluster
      targets: [terraform_data.credential]
    cluster:
      tag_query: cluster
      rules:
        prerequisites:
          - stack: credentials
            succeeded_within: 30m
`,
		"cluster/main.tf": `resource "terraform_data" "credential" {
  provisioner "local-exec" {
    command = "echo rotated >> credential.log"
  }
}
resource "terraform_data" "workload" {
  input = terraform_data.credential.id
  provisioner "local-exec" {
    command = "echo deployed >> workload.log"
  }
}
`,
	})
	e := newE2E(t, root)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"cluster"}, NoPropagate: true})
	got := statuses(res.Report)
	if got["cluster@default#credentials"] != string(report.StatusApplied) || got["cluster@default#cluster"] != string(report.StatusApplied) {
		t.Fatalf("apply: %v\n%s", got, e.console.String())
	}
	cred := unitByName(t, res.Report, "cluster@default#credentials")
	if cred.Changes.Add != 1 {
		t.Errorf("the credentials stack's plan targets one resource: %+v", cred.Changes)
	}
	if n := strings.Count(readFile(t, filepath.Join(root, "cluster", "credential.log")), "rotated"); n != 1 {
		t.Errorf("credential rotated %d times", n)
	}
	if n := strings.Count(readFile(t, filepath.Join(root, "cluster", "workload.log")), "deployed"); n != 1 {
		t.Errorf("workload deployed %d times", n)
	}
}

// TestInputErrors: ambiguous and missing producers are config errors, at
// the reference, before anything runs.
func TestInputErrors(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  net/a: {tags: [net]}
  net/b: {tags: [net]}
  app: {tags: [app]}
stacks:
  names:
    net: {tag_query: net}
    app:
      tag_query: app
      rules: {plan_after: [net]}
      auto_inputs: true
      inputs:
        vpc_id: net.vpc_id
        missing: net.nope
`,
		"net/a/main.tf": "output \"vpc_id\" {\n  value = \"a\"\n}\noutput \"zone\" {\n  value = \"a\"\n}\n",
		"net/b/main.tf": "output \"vpc_id\" {\n  value = \"b\"\n}\noutput \"zone\" {\n  value = \"b\"\n}\n",
		"app/main.tf":   "variable \"vpc_id\" {}\nvariable \"missing\" {}\nvariable \"zone\" {}\n",
	})
	_, err := stacks.Load(root, filepath.Join(root, "strata.yml"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`strata.yml:13:17: stacks.names.app.inputs.vpc_id: net.vpc_id: 2 units declare output "vpc_id": net/a@default, net/b@default; name one with {dir, workspace, output}`,
		`strata.yml:14:18: stacks.names.app.inputs.missing: net.nope: no unit declares output "nope" (looked in net/a@default, net/b@default)`,
		`stacks.names.app.auto_inputs: variable "zone" of app@default: 2 upstream units declare output "zone": net/a@default (stack net), net/b@default (stack net); expected exactly one producer: settle it with an inputs entry`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing error %q in:\n%v", want, err)
		}
	}
}

// TestDriftBehindPrerequisites: drift honours prerequisites as plan does
// (docs/behaviour.md#prerequisites). A stale prerequisite that is not
// auto_apply leaves the requiring unit's drift check blocked, naming it,
// never "no changes"; one that is auto_apply is applied first, then the
// requiring unit is checked; units that require nothing start at once.
func TestDriftBehindPrerequisites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		autoApply bool
	}{
		{"not auto_apply", false},
		{"auto_apply", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			config := `dirs:
  creds: {tags: [creds]}
  app: {tags: [app]}
  other: {tags: [other]}
stacks:
  names:
    rotate-credentials:
      tag_query: creds
` + map[bool]string{true: "      rules: {auto_apply: true}\n"}[tc.autoApply] + `    other: {tag_query: other}
    app:
      tag_query: app
      rules:
        prerequisites:
          - stack: rotate-credentials
            succeeded_within: 1h
`
			root := writeRepo(t, map[string]string{
				"strata.yml": config,
				"creds/main.tf": `resource "terraform_data" "token" {
  provisioner "local-exec" {
    command = "date +%s%N >> rotations.log"
  }
}
`,
				"app/main.tf":   "resource \"terraform_data\" \"app\" {}\n",
				"other/main.tf": "resource \"terraform_data\" \"other\" {}\n",
			})
			e := newE2E(t, root)
			apps := stacks.Selection{Stacks: []string{"app", "other"}, NoPropagate: true}
			// Deploy app and other, so that their drift check has
			// nothing to find; the prerequisite is then an hour and a
			// half stale.
			res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, apps)
			if got := statuses(res.Report); got["app@default"] != string(report.StatusApplied) {
				t.Fatalf("apply: %v\n%s", got, e.console.String())
			}
			later := time.Now().Add(90 * time.Minute)
			res = e.run(CmdDrift, Options{Extra: Extra{Now: func() time.Time { return later }}}, apps)
			got := statuses(res.Report)
			if got["other@default"] != string(report.StatusNoChanges) {
				t.Errorf("other: %v", got)
			}
			if !tc.autoApply {
				want := string(report.StatusBlocked) + " (rotate-credentials last succeeded 1h30m ago (limit 1h))"
				if got["app@default"] != want || got["creds@default"] != "" {
					t.Errorf("drift: %v\nwant app %s and creds left alone", got, want)
				}
				if res.ExitCode == 0 {
					t.Errorf("drift with a blocked unit exits 0")
				}
				return
			}
			if got["creds@default"] != string(report.StatusApplied) || got["app@default"] != string(report.StatusNoChanges) {
				t.Fatalf("drift: %v\n%s", got, e.console.String())
			}
			creds, app := unitByName(t, res.Report, "creds@default"), unitByName(t, res.Report, "app@default")
			if creds.Why != "prerequisite_of: app" {
				t.Errorf("why = %q", creds.Why)
			}
			ca, _ := stepOf(creds, report.StepApply)
			ap, _ := planOf(app)
			if ap.StartedAt.Before(ca.FinishedAt) {
				t.Error("app's drift check began before its prerequisite was applied")
			}
		})
	}
}

// TestFormatDuration: windows and ages read as people write them, a
// window under a minute in seconds.
func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{400 * time.Millisecond, "0s"},
		{45 * time.Second, "45s"},
		{59*time.Second + 400*time.Millisecond, "59s"},
		{59*time.Second + 600*time.Millisecond, "1m"},
		{90 * time.Second, "2m"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{49 * time.Hour, "2d1h"},
	} {
		if got := formatDuration(tc.d); got != tc.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
