package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// A push build compares each unit with the commit of its own last
// successful apply (docs/behaviour.md#changed-units): pushes whose CI runs
// never ran are applied by the next one.

const deployedConfig = `stacks:
  names:
    net: {tag_query: 'dir:net'}
    db:
      tag_query: 'dir:db'
      rules: {plan_after: [net]}
    app:
      tag_query: 'dir:app'
      rules: {plan_after: [db]}
`

func deployedTF(value string) string {
	return "resource \"terraform_data\" \"x\" {\n  input = \"" + value + "\"\n}\n"
}

// deployedRepo is a 3-unit chain committed on main and pushed to a bare
// origin, checked out on main as a push build has it.
func deployedRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	return pushedRepo(t, map[string]string{
		"strata.yml":  deployedConfig,
		"net/main.tf": deployedTF("net-1"), "db/main.tf": deployedTF("db-1"), "app/main.tf": deployedTF("app-1"),
	})
}

// merge commits a new content of one file and pushes it: a merged pull
// request.
func merge(t *testing.T, root, file, content string) {
	t.Helper()
	testenvWrite(t, filepath.Join(root, file), content)
	gitIn(t, root, "commit", "-q", "-am", "change "+file)
	gitIn(t, root, "push", "-q", "origin", "main")
}

func testenvWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// unitWhys are the units of a report, each as "id status why".
func unitWhys(t *testing.T, reportFile string) []string {
	t.Helper()
	var out []string
	for _, u := range readReport(t, reportFile).Units {
		out = append(out, u.Dir+" "+string(u.Status)+" "+u.Why)
	}
	sort.Strings(out)
	return out
}

// deployedInput is the input the local state of a unit's dir holds.
func deployedInput(t *testing.T, root, dir string) string {
	t.Helper()
	return testenv.StateInput(t, filepath.Join(root, dir))
}

// TestPushBuildAppliesSkippedRuns: three merges on a 3-unit chain, the
// middle one's CI run cancelled; the next push build applies both
// changes, each unit compared with its own last applied commit.
func TestPushBuildAppliesSkippedRuns(t *testing.T) {
	needTerraform(t)
	root := deployedRepo(t)
	env := append(hermeticEnv(t), "CI=true")
	reportFile := filepath.Join(t.TempDir(), "report.json")
	apply := func() binRun {
		t.Helper()
		r := runBin(t, root, env, "apply", "--changed", "-auto-approve", "--report", reportFile)
		if r.code != 0 {
			t.Fatalf("apply --changed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		return r
	}

	// The first push build: no unit has a recorded apply, so HEAD^1 (here
	// the empty tree) is the base, with a warning.
	r := apply()
	if !strings.Contains(r.stderr, "the run state records no unit's last applied commit, so this run compares with HEAD^1 only") ||
		!strings.Contains(r.stderr, "--state URL") {
		t.Errorf("first run's warning:\n%s", r.stderr)
	}
	want := []string{"app applied modified: app/main.tf", "db applied modified: db/main.tf", "net applied modified: net/main.tf"}
	if got := unitWhys(t, reportFile); !reflect.DeepEqual(got, want) {
		t.Fatalf("first run: %q, want %q", got, want)
	}

	merge(t, root, "net/main.tf", deployedTF("net-2")) // its CI run is cancelled
	merge(t, root, "app/main.tf", deployedTF("app-2"))
	r = apply()
	if strings.Contains(r.stderr, "HEAD^1") {
		t.Errorf("a run with recorded applies warns:\n%s", r.stderr)
	}
	want = []string{"app applied modified: app/main.tf", "net applied modified: net/main.tf"}
	if got := unitWhys(t, reportFile); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a cancelled run: %q, want %q", got, want)
	}
	for dir, v := range map[string]string{"net": "net-2", "db": "db-1", "app": "app-2"} {
		if got := deployedInput(t, root, dir); got != v {
			t.Errorf("%s deployed %q, want %q", dir, got, v)
		}
	}

	// A change with nothing to apply is deployed all the same: the next
	// run does not take it again.
	merge(t, root, "db/main.tf", "# comment\n"+deployedTF("db-1"))
	apply()
	if got, want := unitWhys(t, reportFile), []string{"db no_changes modified: db/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("a change with nothing to apply: %q, want %q", got, want)
	}
	// Nothing merged since: nothing runs.
	if r := runBin(t, root, env, "apply", "--changed", "-auto-approve"); r.code != 0 || !strings.Contains(r.stdout, "no units selected") {
		t.Errorf("nothing new: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// --base applied works anywhere: a new unit was never applied, and an
	// uncommitted change counts.
	env = env[:len(env)-1]
	if err := os.Mkdir(filepath.Join(root, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenvWrite(t, filepath.Join(root, "cache", "main.tf"), deployedTF("cache-1"))
	testenvWrite(t, filepath.Join(root, "db", "main.tf"), deployedTF("db-2"))

	r = runBin(t, root, env, "ls", "--changed", "--base", "applied", "--json")
	var rows []lsRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); r.code != 0 || err != nil {
		t.Fatalf("ls: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if got, want := whys(rows), []string{"cache@default: never applied", "db@default: modified: db/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--base applied: %q, want %q", got, want)
	}
}

// TestPushBuildWithBucket: the same with a sharded CI run and the run
// state in a bucket; the job's local state dir is thrown away after each
// run, as a CI machine's is.
func TestPushBuildWithBucket(t *testing.T) {
	needTerraform(t)
	root := deployedRepo(t)
	env := append(hermeticEnv(t), "CI=true")
	bucket := "file://" + t.TempDir()
	run := func() []string {
		t.Helper()
		defer os.RemoveAll(filepath.Join(root, ".strata"))
		rep, _ := ciBuild(t, root, env, bucket, "apply", "--changed", "--auto-approve")
		var out []string
		for _, u := range rep.Units {
			out = append(out, u.Dir+" "+string(u.Status)+" "+u.Why)
		}
		sort.Strings(out)
		return out
	}
	if got := run(); len(got) != 3 {
		t.Fatalf("first run: %q", got)
	}
	merge(t, root, "net/main.tf", deployedTF("net-2"))
	merge(t, root, "app/main.tf", deployedTF("app-2"))
	want := []string{"app applied modified: app/main.tf", "net applied modified: net/main.tf"}
	if got := run(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a cancelled run: %q, want %q", got, want)
	}
	if got := deployedInput(t, root, "net"); got != "net-2" {
		t.Errorf("net deployed %q", got)
	}
}

// TestDeletedUnitHoldingResources: a deployed root module deleted by a
// merge is reported with what its state holds, never forgotten; apply
// --destroy-deleted destroys it from its config at the commit it was
// applied at, and the next run finds nothing left.
func TestDeletedUnitHoldingResources(t *testing.T) {
	needTerraform(t)
	root := deployedRepo(t)
	testenvWrite(t, filepath.Join(root, "strata.yml"), deployedConfig+"    legacy: {tag_query: 'dir:legacy'}\n")
	if err := os.Mkdir(filepath.Join(root, "legacy"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenvWrite(t, filepath.Join(root, "legacy", "main.tf"), deployedTF("legacy-1")+"resource \"terraform_data\" \"y\" {}\n")
	gitIn(t, root, "add", "strata.yml", "legacy/main.tf")
	gitIn(t, root, "commit", "-q", "-m", "legacy")
	gitIn(t, root, "push", "-q", "origin", "main")
	env := append(hermeticEnv(t), "CI=true")
	reportFile := filepath.Join(t.TempDir(), "report.json")
	run := func(args ...string) binRun {
		t.Helper()
		r := runBin(t, root, env, append(args, "--changed", "--report", reportFile)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	run("apply", "-auto-approve")

	// The dir goes; its state (local, in the dir, untracked) stays.
	gitIn(t, root, "rm", "-q", "-r", "legacy/main.tf")
	gitIn(t, root, "commit", "-q", "-m", "rm legacy")
	gitIn(t, root, "push", "-q", "origin", "main")
	deletedThenDestroyed(t, root, "legacy", env, reportFile, run)
}

// consumerProducer is a config where stack b reads stack a's output.
const consumerProducer = "stacks:\n  names:\n    a: {tag_query: 'dir:a'}\n"

// consumerRepo is a pushed repository of a producer a and a consumer b
// holding two resources, b's input read from a.
func consumerRepo(t *testing.T) string {
	t.Helper()
	return pushedRepo(t, map[string]string{
		"strata.yml": consumerProducer + "    b:\n      tag_query: 'dir:b'\n      inputs: {v: a.out}\n",
		"a/main.tf":  "output \"out\" {\n  value = \"from-a\"\n}\n",
		"b/main.tf":  "variable \"v\" {}\nresource \"terraform_data\" \"x\" {\n  input = var.v\n}\nresource \"terraform_data\" \"y\" {}\n",
		".gitignore": "*.tfstate*\n",
	})
}

// removeConsumer merges a change that deletes b with its stack (its
// inputs would not load without the dir); b's local state, untracked,
// stays.
func removeConsumer(t *testing.T, root string) {
	t.Helper()
	testenvWrite(t, filepath.Join(root, "strata.yml"), consumerProducer)
	gitIn(t, root, "rm", "-q", "-r", "b")
	gitIn(t, root, "commit", "-q", "-am", "rm b")
	gitIn(t, root, "push", "-q", "origin", "main")
}

// TestDeletedUnitWhoseStackLeftTheConfig: a consumer's dir deleted with
// its stack (its inputs would not load without the dir) is found from its
// run state, reported with what its state holds, and destroyed by
// --destroy-deleted from the config at the commit it was applied at, its
// input read from the producer that stays.
func TestDeletedUnitWhoseStackLeftTheConfig(t *testing.T) {
	needTerraform(t)
	root := consumerRepo(t)
	env := append(hermeticEnv(t), "CI=true")
	reportFile := filepath.Join(t.TempDir(), "report.json")
	run := func(args ...string) binRun {
		t.Helper()
		r := runBin(t, root, env, append(args, "--changed", "--report", reportFile)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	run("apply", "-auto-approve")
	if b, err := os.ReadFile(filepath.Join(root, "b", "terraform.tfstate")); err != nil || !strings.Contains(string(b), "from-a") {
		t.Fatalf("b's state after the apply: %v\n%s", err, b)
	}

	removeConsumer(t, root)

	deletedThenDestroyed(t, root, "b", env, reportFile, run)
}

// TestDeletedUnitWhoseStackLeftTheConfigInBucket: the same with the run
// state in a bucket and each run on a fresh machine: ci start names the
// unit, and a run on one machine reports and destroys it.
func TestDeletedUnitWhoseStackLeftTheConfigInBucket(t *testing.T) {
	needTerraform(t)
	root := consumerRepo(t)
	env := append(hermeticEnv(t), "CI=true")
	bucket := "file://" + t.TempDir()
	reportFile := filepath.Join(t.TempDir(), "report.json")
	run := func(args ...string) binRun {
		t.Helper()
		defer os.RemoveAll(filepath.Join(root, ".strata"))
		r := runBin(t, root, env, append(args, "--state", bucket)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	run("apply", "--changed", "-auto-approve")
	removeConsumer(t, root)

	if r := run("ci", "start", "apply", "--changed", "--auto-approve"); !strings.Contains(r.stderr, "b@default: its dir was deleted, and the run state says it was applied at") {
		t.Errorf("ci start does not name b:\n%s", r.stderr)
	}
	run("plan", "--changed", "--report", reportFile)
	if u := readReport(t, reportFile).Units; len(u) != 1 || u[0].Dir != "b" || u[0].Status != report.StatusPlanned || u[0].Changes.Destroy != 2 {
		t.Errorf("plan: %+v", u)
	}
	run("apply", "--changed", "-auto-approve", "--destroy-deleted", "--report", reportFile)
	if got, want := unitWhys(t, reportFile), []string{"b destroyed deleted"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--destroy-deleted: %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(root, "b", "terraform.tfstate"))
	if err != nil || strings.Contains(string(b), "terraform_data") {
		t.Errorf("b's state after the destroy: %v\n%s", err, b)
	}
}

// TestDeletedDirPutBackKeepsWhatItDidNotWrite: a deleted unit's dir, gone
// whole, is put back for its destroy and taken away again, except what
// strata did not put back there: a file its destroy wrote and the
// engine's data dir stay, with a warning naming them.
func TestDeletedDirPutBackKeepsWhatItDidNotWrite(t *testing.T) {
	needTerraform(t)
	root := deployedRepo(t)
	testenvWrite(t, filepath.Join(root, "strata.yml"), deployedConfig+"    legacy: {tag_query: 'dir:legacy'}\n")
	// The state lives outside the dir, so it outlives the dir.
	testenvWrite(t, filepath.Join(root, ".gitignore"), "*.tfstate*\n")
	if err := os.Mkdir(filepath.Join(root, "legacy"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenvWrite(t, filepath.Join(root, "legacy", "main.tf"), `terraform {
  backend "local" {
    path = "../legacy.tfstate"
  }
}
resource "terraform_data" "x" {
  provisioner "local-exec" {
    when    = destroy
    command = "echo gone > destroyed.txt"
  }
}
`)
	gitIn(t, root, "add", ".gitignore", "strata.yml", "legacy/main.tf")
	gitIn(t, root, "commit", "-q", "-m", "legacy")
	gitIn(t, root, "push", "-q", "origin", "main")
	env := append(hermeticEnv(t), "CI=true")
	if r := runBin(t, root, env, "apply", "--changed", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	gitIn(t, root, "rm", "-q", "-r", "legacy")
	gitIn(t, root, "commit", "-q", "-m", "rm legacy")
	gitIn(t, root, "push", "-q", "origin", "main")
	if err := os.RemoveAll(filepath.Join(root, "legacy")); err != nil {
		t.Fatal(err)
	}

	reportFile := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, env, "apply", "--changed", "-auto-approve", "--destroy-deleted", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("apply --destroy-deleted: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := unitWhys(t, reportFile), []string{"legacy destroyed deleted"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--destroy-deleted: %q, want %q", got, want)
	}
	if !strings.Contains(r.stderr, "strata: warning: left in place: legacy (it holds .terraform, destroyed.txt, which strata did not put back)") {
		t.Errorf("no warning naming what stays:\n%s", r.stderr)
	}
	for p, there := range map[string]bool{"legacy/main.tf": false, "legacy/destroyed.txt": true, "legacy/.terraform": true, ".strata/restored.json": false} {
		if _, err := os.Stat(filepath.Join(root, p)); (err == nil) != there {
			t.Errorf("%s: there %v, want %v", p, err == nil, there)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "legacy.tfstate")); err != nil || strings.Contains(string(b), "terraform_data") {
		t.Errorf("legacy's state after the destroy: %v\n%s", err, b)
	}
}

// TestRestoredLeftoversRemoved: what a killed command put back is removed
// before the next command loads the project, so it is never taken for a
// root module; the record is untrusted, and removes nothing strata did not
// put back: not a file HEAD tracks, not a path outside the repository, and
// nothing at all when it is a record without hashes.
func TestRestoredLeftoversRemoved(t *testing.T) {
	root := writeRepo(t, map[string]string{"strata.yml": "", "app/main.tf": deployedTF("app"), "gone/main.tf": deployedTF("gone")})
	gitIn(t, root, "init", "-q")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "base")
	first := testenv.Git(t, root, "rev-parse", "HEAD")
	gitIn(t, root, "rm", "-q", "-r", "gone")
	gitIn(t, root, "commit", "-q", "-m", "rm gone")
	outside := filepath.Join(filepath.Dir(root), "outside.tf")
	testenvWrite(t, outside, deployedTF("gone"))
	state := filepath.Join(root, ".strata")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	putBack := func() {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, "gone"), 0o755); err != nil {
			t.Fatal(err)
		}
		testenvWrite(t, filepath.Join(root, "gone", "main.tf"), deployedTF("gone"))
	}

	// A killed command's record, with entries it never wrote.
	putBack()
	testenvWrite(t, filepath.Join(state, "restored.json"), fmt.Sprintf(`{"version":2,"dirs":[
{"dir":"gone","commit":%[1]q,"made":["gone"],"files":[{"path":"gone/main.tf","sha256":%[2]q}]},
{"dir":"app","commit":%[1]q,"files":[{"path":"app/main.tf","sha256":%[3]q}]},
{"dir":"..","commit":%[1]q,"files":[{"path":"../outside.tf","sha256":%[2]q}]}]}`, first, hash(deployedTF("gone")), hash(deployedTF("app"))))
	code, out, errOut := strata(t, "-C", root, "ls")
	if code != 0 || !strings.Contains(errOut, "left in place: app/main.tf (tracked at HEAD)") || !strings.Contains(errOut, `left in place: ".." (not a path inside the repository)`) ||
		strings.Contains(out, "gone@default") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for p, there := range map[string]bool{"gone": false, "app/main.tf": true, "../outside.tf": true, ".strata/restored.json": false} {
		if _, err := os.Stat(filepath.Join(root, p)); (err == nil) != there {
			t.Errorf("%s: there %v, want %v", p, err == nil, there)
		}
	}

	// A record of an earlier strata names no content: nothing goes.
	putBack()
	testenvWrite(t, filepath.Join(state, "restored.json"), `[{"dir":"gone","existed":false},{"dir":"app","existed":true,"files":["app/main.tf"]}]`)
	code, out, errOut = strata(t, "-C", root, "ls")
	if code != 0 || !strings.Contains(errOut, "was written by an earlier strata and names no content: nothing it names is removed; left in place: gone, app") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for p, there := range map[string]bool{"gone/main.tf": true, "app/main.tf": true, ".strata/restored.json": false} {
		if _, err := os.Stat(filepath.Join(root, p)); (err == nil) != there {
			t.Errorf("%s: there %v, want %v", p, err == nil, there)
		}
	}
}

// TestCIStartNamesDeployedDeleted: a sharded run does not look at deleted
// units, and ci start says which may still hold resources.
func TestCIStartNamesDeployedDeleted(t *testing.T) {
	needTerraform(t)
	root := deployedRepo(t)
	env := append(hermeticEnv(t), "CI=true")
	bucket := "file://" + t.TempDir()
	if r := runBin(t, root, env, "apply", "--changed", "-auto-approve", "--state", bucket); r.code != 0 {
		t.Fatalf("apply: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	gitIn(t, root, "rm", "-q", "app/main.tf")
	gitIn(t, root, "commit", "-q", "-m", "rm app")
	gitIn(t, root, "push", "-q", "origin", "main")
	r := runBin(t, root, env, "ci", "start", "apply", "--changed", "--auto-approve", "--state", bucket)
	if r.code != 0 || !strings.Contains(r.stderr, "app@default: its dir was deleted, and the run state says it was applied at") ||
		!strings.Contains(r.stderr, "strata apply --changed --destroy-deleted --state URL destroys them") {
		t.Errorf("ci start: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDestroyDeletedInDestroyOrder: two deleted units, one planned after
// the other, are destroyed in reverse: the one that waited goes first.
func TestDestroyDeletedInDestroyOrder(t *testing.T) {
	needTerraform(t)
	root := deployedRepo(t)
	env := append(hermeticEnv(t), "CI=true")
	if r := runBin(t, root, env, "apply", "--changed", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// db waits for net, app for db: net and db go.
	gitIn(t, root, "rm", "-q", "net/main.tf", "db/main.tf")
	gitIn(t, root, "commit", "-q", "-m", "rm net db")
	gitIn(t, root, "push", "-q", "origin", "main")
	reportFile := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, env, "apply", "--changed", "-auto-approve", "--destroy-deleted", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("apply --destroy-deleted: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	applied := map[string]report.StepReport{}
	for _, u := range readReport(t, reportFile).Units {
		if u.Status != report.StatusDestroyed || u.Why != "deleted" {
			t.Errorf("%s: %s, %s", u.Dir, u.Status, u.Why)
		}
		for _, st := range u.Steps {
			if st.Name == "apply" {
				applied[u.Dir] = st
			}
		}
	}
	db, net := applied["db"], applied["net"]
	if db.FinishedAt.IsZero() || net.StartedAt.IsZero() || net.StartedAt.Before(db.FinishedAt) {
		t.Errorf("db destroyed %v–%v, net %v–%v: net went first", db.StartedAt, db.FinishedAt, net.StartedAt, net.FinishedAt)
	}
}

// deletedThenDestroyed: with dir deleted and its state holding two
// resources, plan and apply report its unit as holding them and warn,
// putting its config back for the run only; --destroy-deleted destroys
// them, and a run after finds nothing to do.
func deletedThenDestroyed(t *testing.T, root, dir string, env []string, reportFile string, run func(args ...string) binRun) {
	t.Helper()
	for _, args := range [][]string{{"plan"}, {"apply", "-auto-approve"}} {
		r := run(args...)
		if got, want := unitWhys(t, reportFile), []string{dir + " planned deleted"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%v: %q, want %q", args, got, want)
		}
		if u := readReport(t, reportFile).Units; len(u) != 1 || u[0].Changes.Destroy != 2 || !strings.Contains(u[0].Reason, "its state holds 2 resources") {
			t.Errorf("%v: %+v", args, u)
		}
		if !strings.Contains(r.stderr, dir+"@default: its dir was deleted; its state holds 2 resources: strata apply --changed --destroy-deleted destroys them") {
			t.Errorf("%v: no warning\n%s", args, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(root, dir, "main.tf")); !os.IsNotExist(err) {
			t.Fatalf("%v left the deleted config in place: %v", args, err)
		}
	}
	run("apply", "-auto-approve", "--destroy-deleted")
	if got, want := unitWhys(t, reportFile), []string{dir + " destroyed deleted"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--destroy-deleted: %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(root, dir, "terraform.tfstate"))
	if err != nil || strings.Contains(string(b), "terraform_data") {
		t.Errorf("%s's state after the destroy: %v\n%s", dir, err, b)
	}
	if _, err := os.Stat(filepath.Join(root, dir, "main.tf")); !os.IsNotExist(err) {
		t.Errorf("the destroy left the deleted config in place: %v", err)
	}
	if r := runBin(t, root, env, "apply", "--changed", "-auto-approve"); r.code != 0 || !strings.Contains(r.stdout, "no units selected") {
		t.Errorf("after the destroy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
