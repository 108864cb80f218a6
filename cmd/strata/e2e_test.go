package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// End-to-end tests of the strata binary with real terraform: signals, exit
// codes, drop-in behaviour and passthrough. Each test has its own repo,
// cache dir and CLI config.

var strataBin string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "strata-bin-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		defer scaleRepos.RemoveAll()
		strataBin = filepath.Join(dir, "strata")
		out, err := testenv.BuildStrata(".", strataBin)
		if err != nil {
			os.Stderr.Write(out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

type binRun struct {
	code           int
	stdout, stderr string
}

func runBin(t *testing.T, dir string, env []string, args ...string) binRun {
	t.Helper()
	return runBinIn(t, dir, env, "", args...)
}

// runBinIn is runBin with standard input.
func runBinIn(t *testing.T, dir string, env []string, stdin string, args ...string) binRun {
	t.Helper()
	cmd := exec.Command(strataBin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return binRun{code, out.String(), errb.String()}
}

func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	rep, err := report.ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestInterruptDuringApply: SIGINT during a slow apply lets the running
// apply end cleanly (state written, no lock left), cancels the pending
// units, writes the report and exits 130.
func TestInterruptDuringApply(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  slow: {tags: [slow]}
  next: {tags: [next]}
stacks:
  names:
    slow: {tag_query: slow}
    next:
      tag_query: next
      rules: {plan_after: [slow]}
`,
		"slow/main.tf": `resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "touch started; sleep 4; touch finished"
  }
}
`,
		"next/main.tf": `resource "terraform_data" "n" {}
`,
	})
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(strataBin, "apply", "-auto-approve", "--report", reportFile)
	cmd.Dir, cmd.Env = root, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(root, "slow", "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the slow apply never started:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, out.String())
	}
	rep := readReport(t, reportFile)
	st := map[string]string{}
	for _, u := range rep.Units {
		st[u.Name()] = string(u.Status) + " (" + u.Reason + ")"
	}
	if !strings.HasPrefix(st["slow@default"], "cancelled (interrupted during apply") {
		t.Errorf("slow: %s", st["slow@default"])
	}
	if !strings.HasPrefix(st["next@default"], "cancelled") {
		t.Errorf("next: %s", st["next@default"])
	}
	if rep.ExitCode != 130 || rep.OK {
		t.Errorf("report exit_code %d ok %t", rep.ExitCode, rep.OK)
	}
	// The engine was interrupted, not killed: no state lock is left, and a
	// later plan runs.
	if _, err := os.Stat(filepath.Join(root, "slow", ".terraform.tfstate.lock.info")); err == nil {
		t.Error("a state lock was left behind")
	}
	r := runBin(t, root, env, "plan")
	if r.code != 0 {
		t.Errorf("plan after the interrupt: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDriftExitCode: drift plans everything at once and exits 2 when
// anything would change, 0 when nothing would.
func TestDriftExitCode(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n  b: {tags: [b]}\nstacks:\n  names:\n    a: {tag_query: a}\n    b:\n      tag_query: b\n      rules: {plan_after: [a]}\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
		"b/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "r.json")
	r := runBin(t, root, env, "drift", "--report", reportFile)
	if r.code != 2 {
		t.Fatalf("drift with changes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, u := range readReport(t, reportFile).Units {
		if u.Status != report.StatusPlanned {
			t.Errorf("drift ignores gates: %s is %s", u.Name(), u.Status)
		}
	}
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "drift"); r.code != 0 {
		t.Errorf("drift without changes: exit %d\n%s", r.code, r.stdout)
	}
	// Without a terminal, apply refuses to run without -auto-approve.
	if r := runBin(t, root, env, "apply"); r.code != 1 || !strings.Contains(r.stderr, "needs -auto-approve") {
		t.Errorf("apply without -auto-approve: exit %d, %s", r.code, r.stderr)
	}
	r = runBin(t, root, env, "destroy", "-auto-approve", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("destroy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep := readReport(t, reportFile)
	var aFinished, bStarted time.Time
	for _, u := range rep.Units {
		if u.Status != report.StatusDestroyed {
			t.Errorf("destroy: %s is %s", u.Name(), u.Status)
		}
		for _, s := range u.Steps {
			if u.Dir == "b" && s.Name == report.StepApply {
				aFinished = s.FinishedAt
			}
			if u.Dir == "a" && s.Name == report.StepPlan {
				bStarted = s.StartedAt
			}
		}
	}
	if bStarted.Before(aFinished) {
		t.Errorf("destroy order: a planned its destroy before b was destroyed")
	}
}

// TestDropIn: in a module dir strata plan is terraform plan there: the
// engine's output unchanged, -out writes the saved plan, apply FILE applies
// it without a question, engine flags typed directly reach the plan.
func TestDropIn(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"app/main.tf": `variable "x" {
  type    = string
  default = "d"
}
resource "terraform_data" "a" {
  input = var.x
}
resource "terraform_data" "b" {}
`,
	})
	env := hermeticEnv(t)
	app := filepath.Join(root, "app")
	r := runBin(t, app, env, "plan", "-var", "x=typed", "-target=terraform_data.a", "-out=saved.tfplan")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "[app@default]") || !strings.Contains(r.stdout, `+ input  = "typed"`) || strings.Contains(r.stdout, "terraform_data.b will be created") {
		t.Errorf("drop-in plan output:\n%s", r.stdout)
	}
	r = runBin(t, app, env, "apply", "saved.tfplan")
	if r.code != 0 || !strings.Contains(r.stdout, "Apply complete! Resources: 1 added") {
		t.Fatalf("apply FILE: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(app, "saved.tfplan")); err != nil {
		t.Errorf("apply FILE removed the user's plan file: %v", err)
	}
	r = runBin(t, app, env, "state", "list")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "terraform_data.a" {
		t.Errorf("passthrough state list: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, app, env, "output", "-json")
	var outs map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &outs) != nil {
		t.Errorf("output -json: exit %d, %q", r.code, r.stdout)
	}
	if r := runBin(t, app, env, "plan", "-generate-config-out=x.tf"); r.code != 1 || !strings.Contains(r.stderr, "-generate-config-out is not accepted by strata plan") {
		t.Errorf("unknown engine flag: exit %d, %s", r.code, r.stderr)
	}
	if r := runBin(t, root, env, "state", "list"); r.code != 1 || !strings.Contains(r.stderr, "holds none") {
		t.Errorf("passthrough outside a unit: exit %d, %s", r.code, r.stderr)
	}
	if r := runBin(t, root, env, "fmt", "-check", "-recursive"); r.code != 0 {
		t.Errorf("fmt outside a unit: exit %d, %s", r.code, r.stderr)
	}
	// The engine's exit code is strata's.
	if err := os.WriteFile(filepath.Join(app, "ugly.tf"), []byte("locals {\nx=1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, app, env, "fmt", "-check"); r.code != 3 {
		t.Errorf("fmt -check on an unformatted file: exit %d, want terraform's 3", r.code)
	}
}

// TestCIOutputIsPrefixedBlocks: without a terminal, each unit's output is
// one block of lines prefixed with the unit, and a table ends the run.
func TestCIOutputIsPrefixedBlocks(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"a/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"b/main.tf": "resource \"terraform_data\" \"y\" {}\n",
	})
	env := hermeticEnv(t)
	summary := filepath.Join(t.TempDir(), "summary.md")
	r := runBin(t, root, append(env, "GITHUB_STEP_SUMMARY="+filepath.Join(t.TempDir(), "gh.md")), "plan", "--summary", summary)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Each plan block is contiguous: from "will perform" to "Plan:" every
	// line carries the same unit.
	lines := strings.Split(r.stdout, "\n")
	for _, unit := range []string{"[a@default] ", "[b@default] "} {
		start, end := -1, -1
		for i, l := range lines {
			if strings.HasPrefix(l, unit) && strings.Contains(l, "will perform the following actions") {
				start = i
			}
			if strings.HasPrefix(l, unit) && strings.Contains(l, "Plan: 1 to add") {
				end = i
			}
		}
		if start < 0 || end < start {
			t.Fatalf("no plan block for %s:\n%s", unit, r.stdout)
		}
		for _, l := range lines[start : end+1] {
			if !strings.HasPrefix(l, unit) {
				t.Errorf("line %q interleaves the plan block of %s", l, unit)
			}
		}
	}
	if !strings.Contains(r.stdout, "[a@default] Plan: 1 to add") || !strings.Contains(r.stdout, "[b@default] Plan: 1 to add") {
		t.Errorf("no prefixed plan lines:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "STACK") || !strings.Contains(r.stdout, "planned") {
		t.Errorf("no final table:\n%s", r.stdout)
	}
	md, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(md), "### default — planned") || !strings.Contains(string(md), "<details>") {
		t.Errorf("summary: %v\n%s", err, md)
	}
}

// TestEnginesE2E runs with make test-engines, after the engines package's
// end-to-end test put terraform 1.5.7 and tofu 1.8.8 in the cache: engines
// list resolves both from the cache, and one apply runs prod on terraform
// 1.5.7 and dev on tofu 1.8.8.
func TestEnginesE2E(t *testing.T) {
	if os.Getenv("STRATA_E2E_ENGINES") != "1" {
		t.Skip("set STRATA_E2E_ENGINES=1 (make test-engines)")
	}
	cache := os.Getenv("STRATA_CACHE_DIR")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(dir, "strata")
	}
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  prod: {tags: [prod]}
  dev: {tags: [dev]}
stacks:
  names:
    prod:
      tag_query: prod
      engine: {name: terraform, version: 1.5.7}
    dev:
      tag_query: dev
      engine: {name: tofu, version: "~> 1.8.0"}
      rules: {plan_after: [prod]}
`,
		"prod/main.tf": "resource \"terraform_data\" \"x\" {}\noutput \"v\" {\n  value = terraform.workspace\n}\n",
		"dev/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	env := hermeticEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "STRATA_CACHE_DIR=") {
			env[i] = "STRATA_CACHE_DIR=" + cache
		}
	}
	r := runBin(t, root, env, "engines", "list", "--json")
	if r.code != 0 {
		t.Fatalf("engines list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var needs []engineNeed
	if err := json.Unmarshal([]byte(r.stdout), &needs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range needs {
		if n.Resolved == nil {
			t.Fatalf("%s: not resolved: %s", n.Stack, n.Error)
		}
		got[n.Stack] = n.Resolved.String() + " from " + n.Resolved.Source
	}
	want := map[string]string{"prod": "terraform 1.5.7 from cache", "dev": "tofu 1.8.8 from cache"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	reportFile := filepath.Join(t.TempDir(), "r.json")
	r = runBin(t, root, env, "apply", "-auto-approve", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, u := range readReport(t, reportFile).Units {
		engine := u.Engine.Name + " " + u.Engine.Version
		if (u.Dir == "prod" && engine != "terraform 1.5.7") || (u.Dir == "dev" && engine != "tofu 1.8.8") || u.Status != report.StatusApplied {
			t.Errorf("%s: %s with %s", u.Name(), u.Status, engine)
		}
	}
}

// TestChangedPropagationExamples runs the nested-stacks design's two
// propagation examples end to end with plan --changed on a real repo: with
// modified_by transitive, a change to network runs network, base and prod
// (not dev, which only plans after base); in the counter-example it runs
// network alone.
func TestChangedPropagationExamples(t *testing.T) {
	needTerraform(t)
	dirs := "dirs:\n  network: {tags: [network]}\n  base: {tags: [base]}\n  prod: {tags: [prod]}\n  dev: {tags: [dev]}\n"
	examples := []struct {
		name, stacks string
		want         map[string]string
	}{
		{"modified_by is transitive", designDoc(t, "modified-by-transitive.yml"), map[string]string{
			"network@default": "modified: network/main.tf planned",
			"base@default":    "modified_by: network blocked",
			"prod@default":    "modified_by: network blocked",
		}},
		{"plan_after does not propagate", designDoc(t, "plan-after-does-not-propagate.yml"), map[string]string{
			"network@default": "modified: network/main.tf planned",
		}},
	}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			files := map[string]string{"strata.yml": dirs + ex.stacks}
			for _, d := range []string{"network", "base", "prod", "dev"} {
				files[d+"/main.tf"] = "resource \"terraform_data\" \"this\" {}\n"
			}
			root := changedRepo(t, files)
			env := hermeticEnv(t)
			if r := runBin(t, root, env, "apply", "-auto-approve", "--all"); r.code != 0 {
				t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if err := os.WriteFile(filepath.Join(root, "network", "main.tf"), []byte("resource \"terraform_data\" \"this\" {\n  input = \"v2\"\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gitIn(t, root, "commit", "-q", "-am", "change network")
			reportFile := filepath.Join(t.TempDir(), "r.json")
			r := runBin(t, root, env, "plan", "--changed", "--report", reportFile)
			if r.code != 0 {
				t.Fatalf("plan --changed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			got := map[string]string{}
			for _, u := range readReport(t, reportFile).Units {
				got[u.Name()] = u.Why + " " + string(u.Status)
			}
			if !reflect.DeepEqual(got, ex.want) {
				t.Errorf("run:\n got %v\nwant %v", got, ex.want)
			}
		})
	}
}

// TestSecondInterruptKills: a step that does not stop on the first
// interrupt is killed by the second, with everything it started: strata
// writes the report with the running unit cancelled as killed, and exits
// 130 before the step ends.
func TestSecondInterruptKills(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml": `workflows:
  - tag_query: ''
    apply:
      - type: run
        cmd: ['sh', '-c', "trap '' INT; (trap '' INT; sleep 30; touch grandchild-finished) & echo $! > grandchild.pid; touch started; sleep 6; touch finished"]
      - type: apply
`,
		"stubborn/main.tf": "resource \"terraform_data\" \"s\" {}\n",
	})
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(strataBin, "apply", "-auto-approve", "--all", "--report", reportFile)
	cmd.Dir, cmd.Env = root, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, filepath.Join(root, "stubborn", "started"), &out)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	_, finishedErr := os.Stat(filepath.Join(root, "stubborn", "finished"))
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, out.String())
	}
	if finishedErr == nil {
		t.Error("strata waited for the step to end after the second interrupt")
	}
	rep := readReport(t, reportFile)
	if len(rep.Units) != 1 || rep.Units[0].Status != report.StatusCancelled || rep.Units[0].Reason != "killed: state may be incomplete" {
		t.Errorf("report: %+v", rep.Units[0])
	}
	pid := strings.TrimSpace(readFileT(t, filepath.Join(root, "stubborn", "grandchild.pid")))
	if alive(pid) {
		t.Errorf("the run step's child %s outlived the second interrupt", pid)
		exec.Command("kill", "-9", pid).Run()
	}
}

// alive reports whether a process runs: it exists and is no zombie.
func alive(pid string) bool {
	for i := 0; i < 40; i++ {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			return false
		}
		if s := string(b); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func waitFor(t *testing.T, path string, out *bytes.Buffer) {
	t.Helper()
	for i := 0; i < 1200; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never appeared:\n%s", path, out.String())
}

func needTerraform(t *testing.T)        { testenv.NeedTerraform(t) }
func hermeticEnv(t *testing.T) []string { return testenv.Env(t) }

// TestResumeFromReport: --resume REPORT re-runs what the report left failed
// or skipped, and nothing it applied.
func TestResumeFromReport(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":    "dirs:\n  flaky: {tags: [flaky]}\n  after: {tags: [after]}\n  free: {tags: [free]}\nstacks:\n  names:\n    flaky: {tag_query: flaky}\n    after:\n      tag_query: after\n      rules: {plan_after: [flaky]}\n    free: {tag_query: free}\n",
		"flaky/main.tf": "resource \"terraform_data\" \"x\" {\n  provisioner \"local-exec\" {\n    command = \"test -f ok\"\n  }\n}\n",
		"after/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"free/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	env := hermeticEnv(t)
	first := filepath.Join(t.TempDir(), "first.json")
	if r := runBin(t, root, env, "apply", "-auto-approve", "--report", first); r.code != 1 {
		t.Fatalf("first apply: exit %d\n%s", r.code, r.stdout)
	}
	if err := os.WriteFile(filepath.Join(root, "flaky", "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(t.TempDir(), "second.json")
	r := runBin(t, root, env, "apply", "-auto-approve", "--resume", first, "--report", second)
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := map[string]string{}
	for _, u := range readReport(t, second).Units {
		got[u.Name()] = u.Why + " " + string(u.Status)
	}
	want := map[string]string{"flaky@default": "resume: failed applied", "after@default": "resume: skipped applied"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resume: %v, want %v", got, want)
	}
}

// designDoc reads a stacks section of the design documents, as the stacks
// package's tests keep them.
func designDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "stacks", "testdata", "designdocs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
