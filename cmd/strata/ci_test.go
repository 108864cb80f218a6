package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/strata-iac/strata/report"
)

const chainRepo = `dirs:
  net: {tags: [net]}
  app1: {tags: [app]}
  app2: {tags: [app]}
stacks:
  names:
    net: {tag_query: net}
    app:
      tag_query: app
      rules: {plan_after: [net]}
`

func chainFiles() map[string]string {
	files := map[string]string{"strata.yml": chainRepo}
	for _, d := range []string{"net", "app1", "app2"} {
		files[d+"/main.tf"] = "resource \"terraform_data\" \"x\" {\n  input = \"" + d + "\"\n}\n"
	}
	return files
}

// TestStateURL: with --state, a plan made on one machine is applied on
// another: the second has no .strata of its own, and finds the plan and
// its record in the bucket.
func TestStateURL(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, chainFiles())
	env := hermeticEnv(t)
	bucket := "file://" + t.TempDir()
	if r := runBin(t, root, env, "plan", "--dir", "net", "--state", bucket); r.code != 0 {
		t.Fatalf("plan: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.RemoveAll(filepath.Join(root, ".strata")); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, root, append(env, "STRATA_STATE_URL="+bucket), "apply", "-auto-approve", "--dir", "net")
	if r.code != 0 || !strings.Contains(r.stdout, "[net@default] reusing the plan saved at") {
		t.Fatalf("apply: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCICommands runs a sharded apply as CI does, each job a process of
// its own: ci start (JSON and GitHub outputs), the shards of each wave at
// once, ci finish (report, exit code), ci check; then two pull requests
// planning the same dirspaces, and unlock.
func TestCICommands(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, chainFiles())
	env := hermeticEnv(t)
	bucket := "file://" + t.TempDir()
	ghOut := filepath.Join(t.TempDir(), "github_output")
	plan, started := startRun(t, root, append(env, "GITHUB_OUTPUT="+ghOut), "apply", "--auto-approve", "--state", bucket, "--shards", "2", "--json", "--max-waves", "3", "--github-output")
	if len(plan.Waves) != 2 || len(plan.Waves[0].Shards) != 1 || len(plan.Waves[1].Shards) != 2 {
		t.Fatalf("waves: %s", started)
	}
	outputs, _ := os.ReadFile(ghOut)
	for _, want := range []string{"run<<", plan.Run, "has_work_0<<", "has_work_2<<", "shards_1<<", "[0,1]", "false"} {
		if !strings.Contains(string(outputs), want) {
			t.Errorf("GitHub outputs lack %q:\n%s", want, outputs)
		}
	}
	for _, w := range plan.Waves {
		var wg sync.WaitGroup
		for _, s := range w.Shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := runBin(t, root, env, "ci", "run", "--state", bucket, "--run", plan.Run, "--wave", itoa(w.Wave), "--shard", itoa(s))
				if r.code != 0 {
					t.Errorf("wave %d shard %d: %d\n%s%s", w.Wave, s, r.code, r.stdout, r.stderr)
				}
			}()
		}
		wg.Wait()
	}
	reportFile := filepath.Join(t.TempDir(), "report.json")
	if r := runBin(t, root, env, "ci", "finish", "--state", bucket, "--run", plan.Run, "--report", reportFile); r.code != 0 {
		t.Fatalf("finish: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, u := range readReport(t, reportFile).Units {
		if u.Status != "applied" {
			t.Errorf("%s: %s", u.Name(), u.Status)
		}
	}
	if r := runBin(t, root, env, "ci", "check", "--state", bucket, "--run", plan.Run); r.code != 0 {
		t.Errorf("check: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	if r := runBin(t, root, env, "ci", "start", "plan", "--state", bucket, "--pr", "3", "--link", "https://ci.example/3"); r.code != 0 {
		t.Fatalf("PR 3: %d\n%s", r.code, r.stderr)
	}
	r := runBin(t, root, env, "ci", "start", "plan", "--state", bucket, "--pr", "4", "--dir", "app1")
	if r.code != 1 || !strings.Contains(r.stderr, "app1@default#app: PR #3") || !strings.Contains(r.stderr, "https://ci.example/3") {
		t.Errorf("PR 4: %d\n%s", r.code, r.stderr)
	}
	if r := runBin(t, root, env, "ci", "unlock", "--state", bucket, "--pr", "3"); r.code != 0 || !strings.Contains(r.stdout, "3 dirspaces unlocked") {
		t.Errorf("unlock: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "ci", "start", "plan", "--state", bucket, "--pr", "4", "--dir", "app1"); r.code != 0 {
		t.Errorf("PR 4 after unlock: %d\n%s", r.code, r.stderr)
	}
	if r := runBin(t, root, env, "ci", "start", "apply", "--state", bucket); r.code != 1 || !strings.Contains(r.stderr, "needs --auto-approve") {
		t.Errorf("apply without --auto-approve: %d\n%s", r.code, r.stderr)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCIRunErrors: a job reads its run while its config is read. A run
// the bucket does not have is reported as such, not as a failure to load
// the repository; a config in error is reported as the config's errors,
// whatever the bucket holds.
func TestCIRunErrors(t *testing.T) {
	root := writeRepo(t, chainFiles())
	bucket := "file://" + t.TempDir()
	code, _, stderr := strata(t, "-C", root, "ci", "run", "--state", bucket, "--run", "nosuch", "--wave", "0", "--shard", "0")
	if code != 1 || !strings.Contains(stderr, "run nosuch: no such run in the state bucket") || strings.Contains(stderr, "loading the repository") {
		t.Errorf("missing run: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(root, "strata.yml"), []byte(chainRepo+"bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = strata(t, "-C", root, "ci", "run", "--state", bucket, "--run", "nosuch", "--wave", "0", "--shard", "0")
	if code != 1 || !strings.Contains(stderr, `unknown key "bogus"`) || strings.Contains(stderr, "no such run") {
		t.Errorf("config in error: exit %d\n%s", code, stderr)
	}
}

// readersNetTF is net's module: a resource with input, and the output out.
func readersNetTF(input, out string) string {
	return "resource \"terraform_data\" \"n\" {\n  input = \"" + input + "\"\n}\noutput \"out\" {\n  value = \"" + out + "\"\n}\n"
}

// TestCIReaders: push builds of a 2-stack repository applied through ci
// start --changed, the jobs of each wave and ci finish, as a team's CI
// does. app reads net's output and its files never change after the
// first build: a merge that changes net's output pulls app in, which
// applies the new value; a merge that changes net but not its output
// leaves app out of the report, and every invariant holds.
func TestCIReaders(t *testing.T) {
	needTerraform(t)
	root := pushedRepo(t, map[string]string{
		"strata.yml": `stacks:
  names:
    net: {tag_query: 'dir:net'}
    app:
      tag_query: 'dir:app'
      inputs: {x: net.out}
`,
		"net/main.tf": readersNetTF("a", "v1"),
		"app/main.tf": "variable \"x\" {\n  type = string\n}\nresource \"terraform_data\" \"x\" {\n  input = var.x\n}\n",
	})
	env := append(hermeticEnv(t), "CI=true")
	bucket := "file://" + t.TempDir()

	build := func() (*report.Report, string) {
		t.Helper()
		return ciBuild(t, root, env, bucket, "apply", "--changed", "--auto-approve", "--shards", "2")
	}
	whys := func(rep *report.Report) map[string]string {
		out := map[string]string{}
		for _, u := range rep.Units {
			out[u.Dir] = string(u.Status) + " " + u.Why
		}
		return out
	}

	rep, _ := build()
	if got := whys(rep); len(got) != 2 || !strings.HasPrefix(got["net"], "applied") || !strings.HasPrefix(got["app"], "applied") {
		t.Fatalf("first build: %v", got)
	}

	// net's output changes: app joins in the wave after net's.
	merge(t, root, "net/main.tf", readersNetTF("a", "v2"))
	rep, started := build()
	if !strings.Contains(started, `"wave":1`) {
		t.Errorf("the reader has no wave of its own: %s", started)
	}
	want := map[string]string{"net": "applied modified: net/main.tf", "app": "applied reads: net@default (net.out)"}
	if got := whys(rep); !reflect.DeepEqual(got, want) || rep.ExitCode != 0 {
		t.Errorf("output changed: %v (exit %d), want %v", got, rep.ExitCode, want)
	}
	if v := deployedInput(t, root, "app"); v != "v2" {
		t.Errorf("app's state holds %q, want v2", v)
	}

	// net changes, its output does not: app stays out.
	merge(t, root, "net/main.tf", readersNetTF("b", "v2"))
	rep, _ = build()
	want = map[string]string{"net": "applied modified: net/main.tf"}
	if got := whys(rep); !reflect.DeepEqual(got, want) || rep.ExitCode != 0 {
		t.Errorf("output unchanged: %v (exit %d), want %v", got, rep.ExitCode, want)
	}
	if v := deployedInput(t, root, "app"); v != "v2" {
		t.Errorf("app's state holds %q, want v2", v)
	}
}

// startedRun is what ci start --json prints: the run and its waves, each
// with its shards.
type startedRun struct {
	Run   string `json:"run"`
	Waves []struct {
		Wave   int   `json:"wave"`
		Shards []int `json:"shards"`
	} `json:"waves"`
}

// startRun runs ci start with args, which ask for --json, and returns what
// it printed, parsed and as text.
func startRun(t *testing.T, root string, env []string, args ...string) (startedRun, string) {
	t.Helper()
	start := runBin(t, root, env, append([]string{"ci", "start"}, args...)...)
	if start.code != 0 {
		t.Fatalf("start: %d\n%s%s", start.code, start.stdout, start.stderr)
	}
	var plan startedRun
	if err := json.Unmarshal([]byte(start.stdout), &plan); err != nil {
		t.Fatalf("%v: %s", err, start.stdout)
	}
	return plan, start.stdout
}

// ciBuild is one CI run of a command as a team's CI runs it: ci start with
// args, every job of every wave, ci finish and ci check, each a process
// of its own. It returns the report and what start printed.
func ciBuild(t *testing.T, root string, env []string, bucket string, args ...string) (*report.Report, string) {
	t.Helper()
	plan, started := startRun(t, root, env, slices.Concat(args, []string{"--state", bucket, "--json"})...)
	for _, w := range plan.Waves {
		for _, s := range w.Shards {
			r := runBin(t, root, env, "ci", "run", "--state", bucket, "--run", plan.Run, "--wave", itoa(w.Wave), "--shard", itoa(s))
			if r.code != 0 {
				t.Fatalf("wave %d shard %d: %d\n%s%s", w.Wave, s, r.code, r.stdout, r.stderr)
			}
		}
	}
	reportFile := filepath.Join(t.TempDir(), "report.json")
	if r := runBin(t, root, env, "ci", "finish", "--state", bucket, "--run", plan.Run, "--report", reportFile); r.code != 0 {
		t.Fatalf("finish: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "ci", "check", "--state", bucket, "--run", plan.Run); r.code != 0 || !strings.Contains(r.stdout, "every invariant holds") {
		t.Errorf("check: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return readReport(t, reportFile), started
}

// TestEmitOutput: ci emit --output writes the file, creating its dirs, the
// same bytes as on stdout.
func TestEmitOutput(t *testing.T) {
	root := fixture(t, "nested")
	for _, forge := range []string{"github", "gitlab"} {
		path := filepath.Join(t.TempDir(), ".ci", "deep", forge+".yml")
		var pin []string
		if forge == "github" {
			// This test's strata is no release and no commit.
			pin = []string{"--strata-version", "v1.2.3"}
		}
		code, out, errOut := strata(t, append([]string{"-C", root, "ci", "emit", forge, "--output", path}, pin...)...)
		written, err := os.ReadFile(path)
		if code != 0 || out != "" || err != nil || !strings.Contains(errOut, "wrote "+path) {
			t.Fatalf("%s: exit %d, stdout %q, %v\n%s", forge, code, out, err, errOut)
		}
		_, want, _ := strata(t, append([]string{"-C", root, "ci", "emit", forge}, pin...)...)
		if string(written) != want {
			t.Errorf("%s: the file differs from what stdout gets", forge)
		}
	}
}
