package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// gitIn runs git in dir with a fixed identity and none of the user's git
// config.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	testenv.Git(t, dir, args...)
}

// changedRepo commits a repository on main, pushes it to a bare origin and
// checks out a feature branch. The CI variables of the environment strata
// reads are cleared so the test decides the base.
func changedRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, v := range []string{"CI", "GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "TF_WORKSPACE"} {
		t.Setenv(v, "")
	}
	root := pushedRepo(t, files)
	gitIn(t, root, "checkout", "-q", "-b", "feature")
	return root
}

// pushedRepo commits files on main and pushes them to a bare origin.
func pushedRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := writeRepo(t, files)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitIn(t, root, "init", "-q")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "base")
	gitIn(t, root, "init", "-q", "--bare", origin)
	gitIn(t, root, "remote", "add", "origin", origin)
	gitIn(t, root, "push", "-q", "origin", "main")
	return root
}

const changedConfig = `dirs:
  legacy:
    tags: [legacy]
stacks:
  names:
    network: {tag_query: 'dir:net'}
    app:
      tag_query: 'dir:app'
      rules: {modified_by: [network]}
    db: {tag_query: 'dir:db'}
    legacy: {tag_query: legacy}
`

func changedFiles() map[string]string {
	res := `resource "terraform_data" "this" {}` + "\n"
	return map[string]string{
		"strata.yml": changedConfig, "net/main.tf": res, "app/main.tf": res, "db/main.tf": res,
		"legacy/main.tf": res, "docs/index.md": "# docs\n",
	}
}

type lsRow struct {
	Dir       string   `json:"dir"`
	Workspace string   `json:"workspace"`
	Stack     *string  `json:"stack"`
	StackPath []string `json:"stack_path"`
	Tags      []string `json:"tags"`
	Engine    any      `json:"engine"`
	Why       string   `json:"why"`
	Whys      []string `json:"whys"`
}

func lsChanged(t *testing.T, root string, args ...string) []lsRow {
	t.Helper()
	code, out, errOut := strata(t, append([]string{"-C", root, "ls", "--changed", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rows []lsRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return rows
}

func whys(rows []lsRow) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r.Dir+"@"+r.Workspace+": "+r.Why)
	}
	return out
}

// TestLsChanged: the units a committed change, an untracked file and a
// deleted dir bring into the run, each with why.
func TestLsChanged(t *testing.T) {
	root := changedRepo(t, changedFiles())
	if err := os.WriteFile(filepath.Join(root, "net", "main.tf"), []byte("# changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "commit", "-q", "-am", "net")
	gitIn(t, root, "rm", "-q", "-r", "legacy")
	gitIn(t, root, "commit", "-q", "-m", "rm legacy")
	if err := os.WriteFile(filepath.Join(root, "db", "extra.tfvars"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	rows := lsChanged(t, root)
	want := []string{
		"app@default: modified_by: network",
		"db@default: modified: db/extra.tfvars",
		"net@default: modified: net/main.tf",
		"legacy@default: deleted",
	}
	if got := whys(rows); !reflect.DeepEqual(got, want) {
		t.Fatalf("ls --changed = %q, want %q", got, want)
	}
	legacy := rows[3]
	if legacy.Stack == nil || *legacy.Stack != "legacy" || !reflect.DeepEqual(legacy.StackPath, []string{"legacy"}) ||
		legacy.Engine != nil || !reflect.DeepEqual(legacy.Tags, []string{"legacy", "dir:legacy", "workspace:default", "stack_name:legacy"}) {
		t.Errorf("deleted entry = %+v", legacy)
	}
	net := rows[2]
	if net.Stack == nil || *net.Stack != "network" || net.Engine == nil {
		t.Errorf("modified entry = %+v", net)
	}

	// Selection flags intersect with the modified set; propagation still
	// reaches outside it.
	if got, want := whys(lsChanged(t, root, "--stack", "network")), []string{"app@default: modified_by: network", "net@default: modified: net/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--stack network: %q, want %q", got, want)
	}
	if got, want := whys(lsChanged(t, root, "--stack", "network", "--no-propagate")), []string{"net@default: modified: net/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--no-propagate: %q, want %q", got, want)
	}
	if got, want := whys(lsChanged(t, root, "--dir", "legacy")), []string{"legacy@default: deleted"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--dir legacy: %q, want %q", got, want)
	}
	// --base HEAD: only what is not committed.
	if got, want := whys(lsChanged(t, root, "--base", "HEAD")), []string{"db@default: modified: db/extra.tfvars"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--base HEAD: %q, want %q", got, want)
	}

	// The people's listing says the same.
	code, out, _ := strata(t, "-C", root, "ls", "--changed")
	found := false
	for _, line := range strings.Split(out, "\n") {
		found = found || reflect.DeepEqual(strings.Fields(line), []string{"legacy@default", "legacy", "-", "deleted"})
	}
	if code != 0 || !found {
		t.Errorf("ls --changed: exit %d\n%s", code, out)
	}
}

// TestChangedCIVariables: $GITHUB_BASE_REF names the base branch, and a
// push build on the base branch ($CI) takes the last commit.
func TestChangedCIVariables(t *testing.T) {
	root := changedRepo(t, changedFiles())
	gitIn(t, root, "checkout", "-q", "main")
	gitIn(t, root, "push", "-q", "origin", "main:release")
	if err := os.WriteFile(filepath.Join(root, "db", "main.tf"), []byte("# merged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "commit", "-q", "-am", "merge db")
	gitIn(t, root, "push", "-q", "origin", "main")

	if rows := lsChanged(t, root); len(rows) != 0 {
		t.Errorf("on main, locally: %q, want nothing", whys(rows))
	}
	t.Setenv("CI", "true")
	if got, want := whys(lsChanged(t, root)), []string{"db@default: modified: db/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CI push build: %q, want %q", got, want)
	}
	t.Setenv("CI", "")
	t.Setenv("GITHUB_BASE_REF", "release")
	if got, want := whys(lsChanged(t, root)), []string{"db@default: modified: db/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("GITHUB_BASE_REF=release: %q, want %q", got, want)
	}
}

func TestChangedErrors(t *testing.T) {
	root := changedRepo(t, changedFiles())
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--changed", "--all"}, "strata: --changed and --all: choose one"},
		{[]string{"ls", "--base", "main"}, "strata: --base works with --changed"},
		{[]string{"plan", "--changed", "--all"}, "strata: --changed and --all: choose one"},
		{[]string{"ls", "--changed", "--base", "nope"}, "strata: --base nope: no such commit in this clone"},
	}
	for _, tc := range cases {
		code, out, errOut := strata(t, append([]string{"-C", root}, tc.args...)...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}

	gitIn(t, root, "remote", "remove", "origin")
	code, _, errOut := strata(t, "-C", root, "graph", "--changed")
	if code != 1 || !strings.Contains(errOut, "tried origin/HEAD, origin/main and origin/master (the repository has no remote origin); give one with --base REF") {
		t.Errorf("no remote: exit %d, %s", code, errOut)
	}
}

// TestChangedNeverRunsDeleted: a run whose only change deleted a dir says
// so and runs nothing, with no engine needed.
func TestChangedNeverRunsDeleted(t *testing.T) {
	root := changedRepo(t, changedFiles())
	gitIn(t, root, "rm", "-q", "-r", "legacy", "docs")
	gitIn(t, root, "commit", "-q", "-m", "rm")
	code, out, errOut := strata(t, "-C", root, "plan", "--changed")
	// The config still names legacy: its warning comes first.
	if code != 0 || out != "no units selected\n" || !strings.HasSuffix(errOut, "\nstrata: legacy@default: its dir was deleted (legacy/main.tf); it does not run\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestChangedRunsDependentsOfDeleted: Terrateam's layered-run case, with
// no stacks: dev/networking deleted, dev/database (depends_on it) runs.
func TestChangedRunsDependentsOfDeleted(t *testing.T) {
	res := `resource "terraform_data" "this" {}` + "\n"
	root := changedRepo(t, map[string]string{
		".terrateam/config.yml": `dirs:
  dev/database:
    when_modified: {depends_on: 'dir:dev/networking'}
`,
		"dev/networking/main.tf": res, "dev/database/main.tf": res, "prod/database/main.tf": res,
	})
	gitIn(t, root, "rm", "-q", "-r", "dev/networking")
	gitIn(t, root, "commit", "-q", "-m", "rm networking")
	want := []string{"dev/database@default: depends_on: dev/networking@default (deleted)", "dev/networking@default: deleted"}
	if got := whys(lsChanged(t, root)); !reflect.DeepEqual(got, want) {
		t.Errorf("ls --changed = %q, want %q", got, want)
	}
}
