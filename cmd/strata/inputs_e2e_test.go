package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// siblingConfig is two top-level stacks, no rule between them: app takes
// region from net by auto_inputs alone.
const siblingConfig = `dirs:
  net: {tags: [net]}
  app: {tags: [app]}
stacks:
  names:
    net: {tag_query: net}
    app: {tag_query: app, auto_inputs: true}
`

// cousinConfig is the nested-stacks design's bubbling: app, under
// applications, takes region from net, under infrastructure, a sibling of
// its parent, by its own auto_inputs alone.
const cousinConfig = `dirs:
  net: {tags: [net]}
  app: {tags: [app]}
stacks:
  names:
    root: {stacks: [infrastructure, applications]}
    infrastructure: {stacks: [networking]}
    applications: {stacks: [moneymaker]}
    networking: {tag_query: net}
    moneymaker: {tag_query: app, auto_inputs: true}
`

// siblingRepo is siblingConfig's repository.
func siblingRepo(t *testing.T) string { return autoInputsRepo(t, siblingConfig) }

// autoInputsRepo is a repository of config where app reads region, an
// output of net.
func autoInputsRepo(t *testing.T, config string) string {
	return writeRepo(t, map[string]string{
		"strata.yml": config,
		"net/main.tf": `resource "terraform_data" "region" {
  input = "eu-west-1"
}
output "region" {
  value = terraform_data.region.output
}
`,
		"app/main.tf": testenv.ConsumerTF("region", "app", "seen_region"),
	})
}

// stepTimes returns when a unit's named step started and finished.
func stepTimes(rep *report.Report, dir, step string) (started, finished time.Time, ok bool) {
	for _, u := range rep.Units {
		if u.Dir != dir {
			continue
		}
		for _, s := range u.Steps {
			if s.Name == step {
				return s.StartedAt, s.FinishedAt, true
			}
		}
	}
	return time.Time{}, time.Time{}, false
}

// TestAutoInputsSiblingOrders: a consumer with only auto_inputs (no
// plan_after) plans after its sibling producer is applied, with the
// producer's value, and graph shows the data edge; so does one whose
// producer is a cousin (docs/behaviour.md#inputs-between-stacks).
func TestAutoInputsSiblingOrders(t *testing.T) {
	needTerraform(t)
	t.Run("sibling", func(t *testing.T) { autoInputsOrder(t, siblingConfig, "net", "app") })
	t.Run("cousin", func(t *testing.T) { autoInputsOrder(t, cousinConfig, "networking", "moneymaker") })
}

// autoInputsOrder applies config's repository, whose stack app reads
// net's region by auto_inputs alone.
func autoInputsOrder(t *testing.T, config, net, app string) {
	root := autoInputsRepo(t, config)
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "check"); r.code != 0 || strings.Contains(r.stdout+r.stderr, "auto_inputs") {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runBin(t, root, env, "graph", "--format", "json")
	var g struct {
		Edges []struct{ From, To, Kind, Via string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &g); r.code != 0 || err != nil {
		t.Fatalf("graph: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(g.Edges) != 1 || g.Edges[0].From != "net@default#"+net || g.Edges[0].To != "app@default#"+app || g.Edges[0].Kind != "plan" || g.Edges[0].Via != "inputs" {
		t.Errorf("graph edges: %+v", g.Edges)
	}
	reportFile := filepath.Join(t.TempDir(), "r.json")
	r = runBin(t, root, env, "apply", "-auto-approve", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep := readReport(t, reportFile)
	for _, u := range rep.Units {
		if u.Status != report.StatusApplied {
			t.Errorf("%s is %s (%s)", u.Name(), u.Status, u.Reason)
		}
		if u.Dir == "app" {
			if in := u.Inputs["region"]; in.From != net+".region" || in.Value != "eu-west-1" {
				t.Errorf("app's input region: %+v", in)
			}
		}
	}
	_, netApplied, ok1 := stepTimes(rep, "net", report.StepApply)
	// Under -auto-approve app plans and applies in one apply call.
	appStarted, _, ok2 := stepTimes(rep, "app", report.StepApply)
	if !ok1 || !ok2 || appStarted.Before(netApplied) {
		t.Errorf("app started before net was applied (net applied %v %t, app started %v %t)", netApplied, ok1, appStarted, ok2)
	}
	r = runBin(t, root, env, "output", "--dir", "app", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("output: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep = readReport(t, reportFile)
	if len(rep.Units) != 1 {
		t.Fatalf("output: %d units", len(rep.Units))
	}
	if v, _ := rep.Units[0].Outputs["seen_region"].(map[string]any); v["value"] != "eu-west-1" {
		t.Errorf("app saw region %v", rep.Units[0].Outputs)
	}
}

// TestReadingCommandsNeedNoInputs: with a producer never applied, init,
// validate and output still run its consumer, at the root and with the
// consumer alone selected, and in its dir, and exit 0; console in the
// consumer's dir runs and names the input it leaves unset; show reads
// state and needs none.
func TestReadingCommandsNeedNoInputs(t *testing.T) {
	needTerraform(t)
	root := siblingRepo(t)
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "r.json")
	for _, args := range [][]string{
		{"init"}, {"validate"}, {"output"},
		{"validate", "--dir", "app"}, {"output", "--stack", "app"},
	} {
		r := runBin(t, root, env, append(args, "--report", reportFile)...)
		if r.code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
			continue
		}
		rep := readReport(t, reportFile)
		ran := map[string]bool{}
		for _, u := range rep.Units {
			ran[u.Dir] = true
			if u.Status != report.StatusSucceeded {
				t.Errorf("%v: %s is %s (%s)", args, u.Name(), u.Status, u.Reason)
			}
		}
		if !ran["app"] {
			t.Errorf("%v: app did not run: %+v", args, rep.Units)
		}
	}
	app := filepath.Join(root, "app")
	cmd := runBinIn(t, app, env, "var.region\n", "console")
	if cmd.code != 0 || !strings.Contains(cmd.stderr, "input region of app@default is unset: net.region has no value (net@default never applied)") {
		t.Errorf("console: exit %d\n%s%s", cmd.code, cmd.stdout, cmd.stderr)
	}
	if r := runBin(t, app, env, "show"); r.code != 0 || !strings.Contains(r.stdout, "No state.") || strings.Contains(r.stderr, "net") {
		t.Errorf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"output"}, {"validate"}, {"init"}} {
		if r := runBin(t, app, env, args...); r.code != 0 || strings.Contains(r.stderr, "net") {
			t.Errorf("%v in app's dir: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestOutputAfterApplyingAChain: after a producer and its consumer (an
// explicit input) are applied, output -json at the root reads each unit's
// outputs from its own state: no unit is blocked for want of its
// producer's value, the command exits 0, and the JSON holds both units'
// outputs.
func TestOutputAfterApplyingAChain(t *testing.T) {
	needTerraform(t)
	root := inputsRepo(t)
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reportFile := filepath.Join(t.TempDir(), "r.json")
	r := runBin(t, root, env, "output", "-json", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("output -json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, u := range readReport(t, reportFile).Units {
		if u.Status != report.StatusSucceeded {
			t.Errorf("%s is %s (%s)", u.Name(), u.Status, u.Reason)
		}
	}
	// stdout is the JSON document alone.
	var outs map[string]map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &outs); err != nil {
		t.Fatalf("output -json: %v\n%s", err, r.stdout)
	}
	if got := outs["network@default#network"]["vpc_id"].Value; got != "vpc-1" {
		t.Errorf("network's vpc_id = %v", got)
	}
	if got := outs["app@default#app"]["seen_vpc"].Value; got != "vpc-1" {
		t.Errorf("app's seen_vpc = %v (app's outputs: %v)", got, outs["app@default#app"])
	}
}
