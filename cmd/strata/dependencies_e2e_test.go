package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// dependenciesRepo: app reads net's region by inputs, net applies after
// base, and app modifies web (a dependent, never a dependency); dns
// applies after base too.
func dependenciesRepo(t *testing.T) string {
	return writeRepo(t, map[string]string{
		"strata.yml": `stacks:
  names:
    base: {tag_query: 'dir:base'}
    net: {tag_query: 'dir:net', rules: {apply_after: [base]}}
    app: {tag_query: 'dir:app', inputs: {region: net.region}}
    web: {tag_query: 'dir:web', rules: {modified_by: [app]}}
    dns: {tag_query: 'dir:dns', rules: {apply_after: [base]}}
`,
		"base/main.tf": "resource \"terraform_data\" \"b\" {\n  input = \"b\"\n}\n",
		"net/main.tf":  "resource \"terraform_data\" \"n\" {\n  input = \"n\"\n}\noutput \"region\" {\n  value = \"eu-west-1\"\n}\n",
		"app/main.tf":  testenv.ConsumerTF("region", "app", "seen_region"),
		"web/main.tf":  "resource \"terraform_data\" \"w\" {\n  input = \"w\"\n}\n",
		"dns/main.tf":  "resource \"terraform_data\" \"d\" {\n  input = \"d\"\n}\n",
	})
}

// appWithDependencies is the why of each unit --with-dependencies puts in
// the run with app selected.
var appWithDependencies = []string{
	"app@default: selected",
	"base@default: dependency_of: net@default (apply_after)",
	"net@default: dependency_of: app@default (inputs)",
}

// TestWithDependenciesListed: ls and graph --format json list what app
// waits for, each with the unit it was added for; web, which waits for
// app, joins only with --propagate (docs/behaviour.md#dependencies).
func TestWithDependenciesListed(t *testing.T) {
	root := dependenciesRepo(t)
	for _, tc := range []struct {
		dir  string
		args []string
		want []string
	}{
		{".", []string{"--stack", "app"}, []string{"app@default: selected"}},
		{".", []string{"--stack", "app", "--with-dependencies"}, appWithDependencies},
		{".", []string{"--dir", "app", "--with-dependencies"}, appWithDependencies},
		{".", []string{"--query", "stack_name:app", "--with-dependencies"}, appWithDependencies},
		{".", []string{"--dir", "app", "--workspace", "default", "--with-dependencies"}, appWithDependencies},
		{"app", []string{"--with-dependencies"}, appWithDependencies},
		{".", []string{"--stack", "app", "--with-dependencies", "--propagate"},
			append(append([]string(nil), appWithDependencies...), "web@default: modified_by: app")},
		{".", []string{"--stack", "net", "--with-dependencies", "--no-propagate"},
			[]string{"base@default: dependency_of: net@default (apply_after)", "net@default: selected"}},
	} {
		args := append([]string{"-C", filepath.Join(root, tc.dir), "ls", "--json"}, tc.args...)
		code, out, errOut := strata(t, args...)
		if code != 0 {
			t.Errorf("ls %v: exit %d\n%s", tc.args, code, errOut)
			continue
		}
		var rows []struct{ Dir, Workspace, Why string }
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("ls %v: not JSON: %v\n%s", tc.args, err, out)
		}
		got := []string{}
		for _, r := range rows {
			got = append(got, r.Dir+"@"+r.Workspace+": "+r.Why)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ls in %s %v:\n got %q\nwant %q", tc.dir, tc.args, got, tc.want)
		}
	}

	code, out, errOut := strata(t, "-C", root, "graph", "--format", "json", "--stack", "app", "--with-dependencies")
	var g struct {
		Units      []struct{ ID, Why string }
		Edges      []struct{ From, To, Via string }
		StackEdges []struct{ From, To, Via string } `json:"stack_edges"`
	}
	if err := json.Unmarshal([]byte(out), &g); code != 0 || err != nil {
		t.Fatalf("graph: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	var units, edges []string
	for _, u := range g.Units {
		units = append(units, u.ID+": "+u.Why)
	}
	for _, e := range g.Edges {
		edges = append(edges, e.From+" -> "+e.To+" ("+e.Via+")")
	}
	for _, e := range g.StackEdges {
		edges = append(edges, "stack "+e.From+" -> stack "+e.To+" ("+e.Via+")")
	}
	wantUnits := []string{"app@default#app: selected", "base@default#base: dependency_of: net@default (apply_after)", "net@default#net: dependency_of: app@default (inputs)"}
	wantEdges := []string{"net@default#net -> app@default#app (inputs)", "stack base -> stack net (apply_after)"}
	if !reflect.DeepEqual(units, wantUnits) || !reflect.DeepEqual(edges, wantEdges) {
		t.Errorf("graph --with-dependencies:\n units %q\n want  %q\n edges %q\n want  %q", units, wantUnits, edges, wantEdges)
	}
}

// TestWithDependenciesRefused: --resume refuses --with-dependencies with
// one line saying why (docs/behaviour.md#dependencies).
func TestWithDependenciesRefused(t *testing.T) {
	root := dependenciesRepo(t)
	code, out, errOut := strata(t, "-C", root, "plan", "--resume", filepath.Join(root, "none.json"), "--with-dependencies")
	if code != 1 || !strings.Contains(errOut, "--with-dependencies does not go with --resume: the report names the units") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("--resume: exit %d\n%s%s", code, out, errOut)
	}
}

// TestDestroyWithDependencies: with everything applied, destroy --stack
// app --with-dependencies destroys app and net, which only app needs;
// base stays, as dns still applies after it, and strata says so. A plan
// -destroy and graph --destroy select the same units.
func TestDestroyWithDependencies(t *testing.T) {
	needTerraform(t)
	root := dependenciesRepo(t)
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	const kept = "strata: base@default is not destroyed: needed by dns@default (apply_after)"
	code, out, errOut := strata(t, "-C", root, "graph", "--format", "json", "--destroy", "--stack", "app", "--with-dependencies")
	if code != 0 || !strings.Contains(errOut, kept) || strings.Contains(out, "base@default") || !strings.Contains(out, "net@default#net") {
		t.Errorf("graph --destroy: exit %d\n%s%s", code, out, errOut)
	}
	reportFile := filepath.Join(t.TempDir(), "r.json")
	r := runBin(t, root, env, "destroy", "--stack", "app", "--with-dependencies", "-auto-approve", "--report", reportFile)
	if r.code != 0 || !strings.Contains(r.stderr, kept) {
		t.Fatalf("destroy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]report.Status{}
	for _, u := range readReport(t, reportFile).Units {
		got[u.Dir] = u.Status
	}
	if want := map[string]report.Status{"app": report.StatusDestroyed, "net": report.StatusDestroyed}; !reflect.DeepEqual(got, want) {
		t.Errorf("destroyed %v, want %v", got, want)
	}
	for dir, deployed := range map[string]bool{"app": false, "net": false, "base": true, "dns": true, "web": true} {
		state := readFileT(t, filepath.Join(root, dir, "terraform.tfstate"))
		if has := strings.Contains(state, "terraform_data"); has != deployed {
			t.Errorf("%s: deployed %t, want %t", dir, has, deployed)
		}
	}
}

// TestPlanWithDependencies: plan --stack app --with-dependencies plans
// net, app's producer, and app after it with the region net's plan gives;
// without the flag app is blocked, net never applied
// (docs/behaviour.md#dependencies).
func TestPlanWithDependencies(t *testing.T) {
	needTerraform(t)
	root := dependenciesRepo(t)
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "r.json")
	runBin(t, root, env, "plan", "--stack", "app", "--report", reportFile)
	rep := readReport(t, reportFile)
	if len(rep.Units) != 1 || rep.Units[0].Status != report.StatusBlocked || !strings.Contains(rep.Units[0].Reason, "net.region has no value") {
		t.Fatalf("plan --stack app: %+v", rep.Units)
	}

	r := runBin(t, root, env, "plan", "--stack", "app", "--with-dependencies", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("plan --stack app --with-dependencies: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]*report.UnitReport{}
	for _, u := range readReport(t, reportFile).Units {
		got[u.Dir] = u
	}
	for dir, why := range map[string]string{"app": "selected", "net": "dependency_of: app@default (inputs)", "base": "dependency_of: net@default (apply_after)"} {
		if u := got[dir]; u == nil || u.Status != report.StatusPlanned || u.Why != why {
			t.Errorf("%s: %+v, want planned, why %q", dir, u, why)
		}
	}
	if len(got) != 3 {
		t.Errorf("units: %v", got)
	}
	app := got["app"]
	if app == nil {
		t.FailNow()
	}
	if in := app.Inputs["region"]; in.From != "net.region" || in.Value != "eu-west-1" {
		t.Errorf("app's input region: %+v", in)
	}
	if !strings.Contains(app.Reason, "planned against net@default's plan") || !reflect.DeepEqual(app.After, []string{"net@default#net"}) {
		t.Errorf("app: reason %q, after %v", app.Reason, app.After)
	}
}

// TestCIStartWithDependencies: ci start plan --with-dependencies writes
// the units app waits for into the run's manifest, each with its why, in
// waves before app's (docs/behaviour.md#dependencies).
func TestCIStartWithDependencies(t *testing.T) {
	root := dependenciesRepo(t)
	env := hermeticEnv(t)
	dir := t.TempDir()
	bucket := "file://" + dir
	manifest := func(args ...string) []string {
		t.Helper()
		plan, started := startRun(t, root, env, append([]string{"plan", "--state", bucket, "--json", "--stack", "app"}, args...)...)
		st, err := objstore.Open(context.Background(), bucket, objstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		m, err := ci.LoadManifest(context.Background(), st, plan.Run)
		if err != nil {
			t.Fatalf("%v: %s", err, started)
		}
		var units []string
		for _, u := range m.Units {
			units = append(units, u.ID+": "+u.Why+" (wave "+itoa(u.Wave)+")")
		}
		return units
	}
	if got, want := manifest(), []string{"app@default#app: selected (wave 0)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ci start plan --stack app:\n got %q\nwant %q", got, want)
	}
	want := []string{
		"app@default#app: selected (wave 2)",
		"base@default#base: dependency_of: net@default (apply_after) (wave 0)",
		"net@default#net: dependency_of: app@default (inputs) (wave 1)",
	}
	if got := manifest("--with-dependencies"); !reflect.DeepEqual(got, want) {
		t.Errorf("ci start plan --stack app --with-dependencies:\n got %q\nwant %q", got, want)
	}
}
