package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// Stack instances end to end (docs/behaviour.md#stack-instances), on
// fixtures/regions with real terraform: one network and one app, each
// deployed to two regions from one definition.

// regionsRepo is a pushed copy of fixtures/regions.
func regionsRepo(t *testing.T) string {
	t.Helper()
	files := map[string]string{".gitignore": "terraform.tfstate.d/\n.terraform/\n.strata/\n"}
	fixture := filepath.Join("..", "..", "fixtures", "regions")
	err := filepath.WalkDir(fixture, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixture, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pushedRepo(t, files)
}

// instanceState is the input of a resource in the state of dir's
// workspace ws, "" when the state holds none.
func instanceState(t *testing.T, root, dir, ws, resource string) string {
	t.Helper()
	return testenv.StateFileInputs(t, filepath.Join(root, dir, "terraform.tfstate.d", ws, "terraform.tfstate"))[resource]
}

// statuses renders a report as "stack unit status", sorted.
func statuses(rep *report.Report) []string {
	var out []string
	for _, u := range rep.Units {
		out = append(out, u.Stack+" "+u.Name()+" "+string(u.Status))
	}
	sort.Strings(out)
	return out
}

func TestStackInstancesEndToEnd(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := regionsRepo(t)
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "report.json")
	run := func(want int, args ...string) *report.Report {
		t.Helper()
		r := runBin(t, root, env, append(args, "--report", reportFile)...)
		if r.code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, r.code, want, r.stdout, r.stderr)
		}
		return readReport(t, reportFile)
	}

	// Two instances of each stack applied, each in a state of its own, and
	// app[k] reading network[k].
	rep := run(0, "apply", "-auto-approve")
	want := []string{
		"app[eu] app@eu applied", "app[us] app@us applied", "dns dns@default applied",
		"network[eu] network@eu applied", "network[us] network@us applied",
	}
	if got := statuses(rep); !reflect.DeepEqual(got, want) {
		t.Fatalf("apply:\n got %q\nwant %q", got, want)
	}
	for _, u := range rep.Units {
		if strings.HasPrefix(u.Stack, "app[") && u.StackInstance != strings.TrimSuffix(strings.TrimPrefix(u.Stack, "app["), "]") {
			t.Errorf("%s: stack_instance %q", u.Stack, u.StackInstance)
		}
	}
	states := map[string]string{
		"network us": instanceState(t, root, "network", "us", "vpc"),
		"network eu": instanceState(t, root, "network", "eu", "vpc"),
		"app us":     instanceState(t, root, "app", "us", "app"),
		"app eu":     instanceState(t, root, "app", "eu", "app"),
	}
	wantStates := map[string]string{
		"network us": "vpc-us-east-1/16", "network eu": "vpc-eu-west-1/16",
		"app us": "app in vpc-us-east-1/16 (us-east-1)", "app eu": "app in vpc-eu-west-1/16 (eu-west-1)",
	}
	if !reflect.DeepEqual(states, wantStates) {
		t.Errorf("states:\n got %v\nwant %v", states, wantStates)
	}
	if _, err := os.Stat(filepath.Join(root, "network", "terraform.tfstate")); err == nil {
		t.Error("an instance wrote the default workspace's state")
	}

	// A second plan has nothing to change.
	rep = run(0, "plan", "-detailed-exitcode")
	for _, u := range rep.Units {
		if u.Status != report.StatusNoChanges {
			t.Errorf("second plan: %s %s", u.Name(), u.Status)
		}
	}

	// Each instance keeps its workspace selected in its own data dir:
	// the second plan started the engine once a unit, no workspace step.
	// (A producer's outputs are read from the run state, no engine start.)
	for _, u := range rep.Units {
		var names []string
		for _, s := range u.Steps {
			if s.Name != report.StepOutputRecord {
				names = append(names, s.Name)
			}
		}
		if !reflect.DeepEqual(names, []string{report.StepPlan}) {
			t.Errorf("second plan of %s: engine steps %q, want one plan", u.Name(), names)
		}
	}

	// Drop-in in an instanced dir: the workspace asked for picks the
	// instance.
	netDir := filepath.Join(root, "network")
	for _, args := range [][]string{{"plan", "--workspace", "eu"}, {"plan"}} {
		e := env
		if len(args) == 1 {
			e = append(slices.Clone(env), "TF_WORKSPACE=eu")
		}
		if r := runBin(t, netDir, e, append(args, "--report", reportFile)...); r.code != 0 || !strings.Contains(r.stdout, "No changes.") {
			t.Fatalf("drop-in %v: %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if got := statuses(readReport(t, reportFile)); !reflect.DeepEqual(got, []string{"network[eu] network@eu no_changes"}) {
			t.Errorf("drop-in %v for eu: %q", args, got)
		}
	}

	// One instance alone, and every instance of a stack.
	rep = run(0, "plan", "--stack", "app[eu]")
	if got := statuses(rep); !reflect.DeepEqual(got, []string{"app[eu] app@eu no_changes"}) {
		t.Errorf("--stack app[eu]: %q", got)
	}
	rep = run(0, "plan", "--stack", "network")
	if got := statuses(rep); !reflect.DeepEqual(got, []string{"network[eu] network@eu no_changes", "network[us] network@us no_changes"}) {
		t.Errorf("--stack network: %q", got)
	}

	// eu removed from both stacks: its units are deleted units, their
	// destroy planned from the config they were applied with, then
	// destroyed, the consumer first.
	cfg := readFileT(t, filepath.Join(root, "strata.yml"))
	cfg = strings.Replace(cfg, "        eu:\n          variables: {TF_VAR_region: eu-west-1}\n", "", 1)
	cfg = strings.Replace(cfg, "for_each: [us, eu]", "for_each: [us]", 1)
	testenvWrite(t, filepath.Join(root, "strata.yml"), cfg)
	gitIn(t, root, "commit", "-q", "-am", "leave eu")
	rep = run(0, "plan")
	byName := map[string]*report.UnitReport{}
	for _, u := range rep.Units {
		byName[u.Name()] = u
	}
	if u := byName["app@eu"]; u == nil || u.Status != report.StatusPlanned || u.Changes.Destroy != 1 || !strings.Contains(u.Reason, "its key was removed from for_each; its state holds 1 resource") {
		t.Fatalf("app@eu after its key went: %+v", u)
	}
	if u := byName["network@eu"]; u == nil || u.Why != "deleted" {
		t.Fatalf("network@eu after its key went: %+v", u)
	}
	if got := instanceState(t, root, "app", "eu", "app"); got == "" {
		t.Fatal("a plan destroyed app@eu")
	}
	rep = run(0, "apply", "-auto-approve", "--destroy-deleted")
	var order []string
	for _, u := range rep.Units {
		if u.Why == "deleted" {
			if u.Status != report.StatusDestroyed {
				t.Errorf("%s: %s (%s)", u.Name(), u.Status, u.Reason)
			}
			order = append(order, u.Name())
		}
	}
	if got := []string{instanceState(t, root, "app", "eu", "app"), instanceState(t, root, "network", "eu", "vpc")}; !reflect.DeepEqual(got, []string{"", ""}) {
		t.Errorf("eu's states after --destroy-deleted: %q", got)
	}
	if got := instanceState(t, root, "network", "us", "vpc"); got != "vpc-us-east-1/16" {
		t.Errorf("network@us after eu left: %q", got)
	}
	sort.Strings(order)
	if !reflect.DeepEqual(order, []string{"app@eu", "network@eu"}) {
		t.Errorf("destroyed: %q", order)
	}
	// Destroyed, they are not looked at again.
	rep = run(0, "plan")
	for _, u := range rep.Units {
		if u.Why == "deleted" {
			t.Errorf("after the destroy: %s still %s", u.Name(), u.Why)
		}
	}
}

// A sharded CI run of instances: every instance is a unit of the
// manifest, applied by the jobs of its wave, app[k] after network[k]; a
// consumer deferred in the pull request's plan is continued by the
// merge's apply, and says so.
func TestStackInstancesShardedCI(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := regionsRepo(t)
	env := hermeticEnv(t)
	bucket := "file://" + t.TempDir()
	// The pull request's plan: app[k] is deferred on network[k].id, which
	// network[k]'s plan, by a job of the first wave, leaves unknown.
	rep, _ := ciBuild(t, root, env, bucket, "plan", "--shards", "2")
	for _, u := range rep.Units {
		if !strings.HasPrefix(u.Stack, "app[") {
			continue
		}
		want := "network.id is unknown until network@" + u.StackInstance + " is applied"
		if u.Status != report.StatusDeferred || u.Reason != want || !reflect.DeepEqual(u.DeferredOn, []string{"network.id"}) {
			t.Errorf("plan: %s: %s %q deferred_on %q, want deferred %q", u.Name(), u.Status, u.Reason, u.DeferredOn, want)
		}
	}
	// The merge's apply applies network[k] in the first wave, then plans
	// and applies app[k], which says it was deferred.
	rep, started := ciBuild(t, root, env, bucket, "apply", "--auto-approve", "--shards", "2")
	want := []string{
		"app[eu] app@eu applied", "app[us] app@us applied", "dns dns@default applied",
		"network[eu] network@eu applied", "network[us] network@us applied",
	}
	if got := statuses(rep); !reflect.DeepEqual(got, want) {
		t.Fatalf("sharded apply:\n got %q\nwant %q\n%s", got, want, started)
	}
	for _, u := range rep.Units {
		if _, key, _ := strings.Cut(strings.TrimSuffix(u.Stack, "]"), "["); u.StackInstance != key {
			t.Errorf("%s: stack_instance %q, want %q", u.Name(), u.StackInstance, key)
		}
	}
	// The second wave's job says app[k] planned once network[k]'s apply
	// made network.id known.
	for _, u := range rep.Units {
		if !strings.HasPrefix(u.Stack, "app[") {
			continue
		}
		want := "planned after network@" + u.StackInstance + " was applied: network.id was unknown until then"
		if u.Reason != want || !reflect.DeepEqual(u.DeferredOn, []string{"network.id"}) {
			t.Errorf("%s: reason %q deferred_on %q, want %q [network.id]", u.Name(), u.Reason, u.DeferredOn, want)
		}
	}
	if got := instanceState(t, root, "app", "eu", "app"); got != "app in vpc-eu-west-1/16 (eu-west-1)" {
		t.Errorf("app@eu: %q", got)
	}
	rep, _ = ciBuild(t, root, env, bucket, "plan")
	for _, u := range rep.Units {
		if u.Status != report.StatusNoChanges {
			t.Errorf("plan after the sharded apply: %s %s", u.Name(), u.Status)
		}
	}
}

// A workflow whose init names ${STRATA_STACK_INSTANCE} in its backend
// config keeps each instance in the dirspace's workspace, with a state of
// its own in that backend and a data dir of its own.
func TestStackInstancesOwnBackend(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	initStep := "      - type: init\n        extra_args: ['-backend-config=path=${STRATA_STACK_INSTANCE}.tfstate']\n"
	root := writeRepo(t, map[string]string{
		"strata.yml": `stacks:
  names:
    net:
      tag_query: dir:net
      for_each:
        us: {variables: {TF_VAR_region: us-east-1}}
        eu: {variables: {TF_VAR_region: eu-west-1}}
workflows:
  - tag_query: stack_name:net
    plan:
` + initStep + "      - type: plan\n    apply:\n" + initStep + "      - type: apply\n",
		"net/main.tf": "terraform {\n  backend \"local\" {}\n}\nvariable \"region\" {}\nresource \"terraform_data\" \"vpc\" {\n  input = var.region\n}\n",
	})
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "report.json")
	for _, args := range [][]string{{"apply", "-auto-approve"}, {"plan", "-detailed-exitcode"}} {
		if r := runBin(t, root, env, append(args, "--report", reportFile)...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if got := statuses(readReport(t, reportFile)); !reflect.DeepEqual(got, []string{"net[eu] net@default no_changes", "net[us] net@default no_changes"}) {
		t.Errorf("second plan: %q", got)
	}
	for key, region := range map[string]string{"us": "us-east-1", "eu": "eu-west-1"} {
		st := readFileT(t, filepath.Join(root, "net", key+".tfstate"))
		if !strings.Contains(st, `"value": "`+region+`"`) {
			t.Errorf("%s.tfstate holds no %s:\n%s", key, region, st)
		}
		if _, err := os.Stat(filepath.Join(root, "net", ".terraform", "strata", "net["+key+"]", "default")); err != nil {
			t.Errorf("instance %s has no data dir of its own: %v", key, err)
		}
	}
}
