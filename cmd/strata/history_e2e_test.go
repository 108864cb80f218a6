package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/history"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// historyRepo is three units of one resource each.
func historyRepo(t *testing.T) string {
	return testenv.WriteRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n  b: {tags: [b]}\n  c: {tags: [c]}\nhistory:\n  keep: 10\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {\n  input = \"a\"\n}\n",
		"b/main.tf":  "resource \"terraform_data\" \"x\" {\n  input = \"b\"\n}\n",
		"c/main.tf":  "resource \"terraform_data\" \"x\" {\n  input = \"c\"\n}\n",
	})
}

type historyRuns struct {
	Runs []struct {
		ID       string         `json:"id"`
		Command  string         `json:"command"`
		Commit   string         `json:"commit"`
		Actor    string         `json:"actor"`
		ExitCode int            `json:"exit_code"`
		Units    int            `json:"units"`
		Counts   map[string]int `json:"counts"`
	} `json:"runs"`
}

type historyOfUnit struct {
	Unit   string `json:"unit"`
	Status struct {
		Status       string  `json:"status"`
		Drift        string  `json:"drift"`
		DriftedSince *string `json:"drifted_since"`
	} `json:"status"`
	Runs []struct {
		Run struct {
			Command string `json:"command"`
		} `json:"run"`
		Unit struct {
			Status string `json:"status"`
			Drift  string `json:"drift"`
			Steps  []struct {
				Name string `json:"name"`
				MS   int64  `json:"ms"`
			} `json:"steps"`
		} `json:"unit"`
	} `json:"runs"`
	Steps []struct {
		Name  string `json:"name"`
		Runs  int    `json:"runs"`
		P50MS int64  `json:"p50_ms"`
	} `json:"steps"`
}

func decodeJSON(t *testing.T, r binRun, v any) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
}

func lsDirs(t *testing.T, r binRun) []string {
	t.Helper()
	var entries []struct{ Dir string }
	decodeJSON(t, r, &entries)
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, e.Dir)
	}
	return dirs
}

// TestHistoryAndDrift: three applies and a drift check, with real
// terraform, are four runs in the history, newest first; the unit whose
// resource went away outside strata is drifted, and --status drifted
// selects it alone in ls, plan and apply, which reconciles it; history
// UNIT shows its runs with their step times, at the root and in its dir.
func TestHistoryAndDrift(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := historyRepo(t)
	env := hermeticEnv(t)
	for range 3 {
		if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
			t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	// b's resource is gone, as if deleted by hand: its state is.
	if err := os.Remove(filepath.Join(root, "b", "terraform.tfstate")); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, root, env, "drift"); r.code != 2 {
		t.Fatalf("drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	var runs historyRuns
	decodeJSON(t, runBin(t, root, env, "history", "--json"), &runs)
	if len(runs.Runs) != 4 {
		t.Fatalf("%d runs, want 4: %+v", len(runs.Runs), runs)
	}
	drift, first := runs.Runs[0], runs.Runs[3]
	if drift.Command != "drift" || drift.ExitCode != 2 || drift.Counts["drifted"] != 1 || drift.Counts["in_sync"] != 2 || drift.Actor == "" {
		t.Errorf("the drift run: %+v", drift)
	}
	if first.Command != "apply" || first.Counts["applied"] != 3 || runs.Runs[1].Counts["no_changes"] != 3 {
		t.Errorf("the applies: %+v", runs.Runs[1:])
	}

	var b historyOfUnit
	decodeJSON(t, runBin(t, root, env, "history", "b", "--json"), &b)
	if b.Unit != "b@default#default" || b.Status.Drift != "drifted" || b.Status.DriftedSince == nil || len(b.Runs) != 4 {
		t.Fatalf("history b: %+v", b)
	}
	if b.Runs[0].Run.Command != "drift" || b.Runs[0].Unit.Drift != "drifted" || b.Runs[3].Unit.Status != "applied" {
		t.Errorf("b's runs: %+v", b.Runs)
	}
	steps := map[string]int{}
	for _, s := range b.Steps {
		steps[s.Name] = s.Runs
	}
	// Each apply planned and applied in one engine call; the drift planned.
	if steps["apply"] != 3 || steps["plan"] != 1 || steps["total"] != 4 {
		t.Errorf("b's step stats: %+v", b.Steps)
	}
	// In b's dir, history alone is b's.
	r := runBin(t, filepath.Join(root, "b"), env, "history")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "b@default#default: 4 runs\n") || !strings.Contains(r.stdout, "drifted since") ||
		!strings.Contains(r.stdout, "P50") {
		t.Errorf("history in b: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, root, env, "history")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 5 || !strings.Contains(lines[1], "1 drifted, 2 in sync") {
		t.Errorf("history: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	if got := lsDirs(t, runBin(t, root, env, "ls", "--json", "--status", "drifted")); len(got) != 1 || got[0] != "b" {
		t.Errorf("ls --status drifted: %v", got)
	}
	if got := lsDirs(t, runBin(t, root, env, "ls", "--json", "--status", "in-sync", "--dir", "c")); len(got) != 1 || got[0] != "c" {
		t.Errorf("ls --status in-sync --dir c: %v", got)
	}
	if got := lsDirs(t, runBin(t, root, env, "ls", "--json", "--status", "drifted", "--dir", "a")); len(got) != 0 {
		t.Errorf("ls --status drifted --dir a: %v", got)
	}
	if r := runBin(t, root, env, "ls", "--status", "drifted", "--dir", "nope"); r.code != 1 || !strings.Contains(r.stderr, "no units match --dir nope") {
		t.Errorf("ls --status drifted --dir nope: exit %d\n%s", r.code, r.stderr)
	}
	if r := runBin(t, root, env, "ls", "--status", "drifed"); r.code != 1 || !strings.Contains(r.stderr, "did you mean drifted?") {
		t.Errorf("ls --status drifed: exit %d\n%s", r.code, r.stderr)
	}
	reportFile := filepath.Join(t.TempDir(), "plan.json")
	if r := runBin(t, root, env, "plan", "--status", "drifted", "--report", reportFile); r.code != 0 {
		t.Fatalf("plan --status drifted: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rep := readReport(t, reportFile); len(rep.Units) != 1 || rep.Units[0].Dir != "b" || rep.Units[0].Status != "planned" {
		t.Errorf("plan --status drifted planned %+v", rep.Units)
	}
	// The plan left b drifted: apply reconciles it.
	if r := runBin(t, root, env, "apply", "-auto-approve", "--status", "drifted", "--report", reportFile); r.code != 0 {
		t.Fatalf("apply --status drifted: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if rep := readReport(t, reportFile); len(rep.Units) != 1 || rep.Units[0].Dir != "b" || rep.Units[0].Status != "applied" {
		t.Errorf("apply --status drifted applied %+v", rep.Units)
	}
	r = runBin(t, root, env, "ls", "--status", "drifted")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "no units selected" || !strings.Contains(r.stderr, "no unit selected has the last recorded status drifted") {
		t.Errorf("ls --status drifted after the apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runBin(t, root, env, "history", "--format", "html")
	if r.code != 0 || !strings.Contains(r.stdout, `<svg id="runs"`) || strings.Count(r.stdout, `<tr class="unit">`) != 3 ||
		!strings.Contains(r.stdout, "b@default#default") || strings.Contains(r.stdout, "http") && strings.Contains(r.stdout, "src=") {
		t.Errorf("history --format html: exit %d\n%s", r.code, r.stderr)
	}
	r = runBin(t, root, env, "graph", "--format", "html")
	if r.code != 0 || !strings.Contains(r.stdout, `<ul class="recent">`) || !strings.Contains(r.stdout, "Drift: in sync.") {
		t.Errorf("graph --format html: exit %d\n%s", r.code, r.stderr)
	}
}

// TestHistoryInBucket: runs with --state keep their history in the
// bucket, which history --state reads on a fresh machine, an empty state
// dir; --status reads the bucket's statuses there too.
func TestHistoryInBucket(t *testing.T) {
	needTerraform(t)
	buckets := map[string]string{"file": "file://" + t.TempDir()}
	if srv := testenv.StartS3(t); srv != nil {
		buckets["s3"] = srv.URL
	}
	for kind, bucket := range buckets {
		t.Run(kind, func(t *testing.T) {
			root := historyRepo(t)
			env := s3Env(t)
			if r := runBin(t, root, env, "apply", "-auto-approve", "--state", bucket, "--dir", "a"); r.code != 0 {
				t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := runBin(t, root, env, "drift", "--state", bucket); r.code != 2 {
				t.Fatalf("drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			fresh := testenv.CopyTree(t, root)
			if _, err := os.Stat(filepath.Join(fresh, ".strata")); err == nil {
				t.Fatal("the copy has a state dir")
			}
			env = s3Env(t)
			var runs historyRuns
			decodeJSON(t, runBin(t, fresh, env, "history", "--json", "--state", bucket), &runs)
			if len(runs.Runs) != 2 || runs.Runs[0].Command != "drift" || runs.Runs[0].Counts["drifted"] != 2 || runs.Runs[1].Command != "apply" {
				t.Fatalf("history of the bucket: %+v", runs)
			}
			var none historyRuns
			decodeJSON(t, runBin(t, fresh, env, "history", "--json"), &none)
			if len(none.Runs) != 0 {
				t.Errorf("the fresh state dir's history: %+v", none)
			}
			if got := lsDirs(t, runBin(t, fresh, env, "ls", "--json", "--status", "drifted", "--state", bucket)); strings.Join(got, " ") != "b c" {
				t.Errorf("ls --status drifted of the bucket: %v", got)
			}
			if got := lsDirs(t, runBin(t, fresh, env, "ls", "--json", "--status", "never-applied", "--state", bucket)); strings.Join(got, " ") != "b c" {
				t.Errorf("ls --status never-applied of the bucket: %v", got)
			}
		})
	}
}

// TestHistoryOfCIRun: a run of CI jobs is one record of the bucket's
// history, written by ci finish under the run's ID; finishing it again
// records nothing more.
func TestHistoryOfCIRun(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := historyRepo(t)
	env := hermeticEnv(t)
	bucket := "file://" + t.TempDir()
	rep, started := ciBuild(t, root, env, bucket, "apply", "--auto-approve", "--shards", "2")
	if len(rep.Units) != 3 {
		t.Fatalf("the run's report: %+v", rep.Units)
	}
	var plan startedRun
	if err := json.Unmarshal([]byte(started), &plan); err != nil {
		t.Fatal(err)
	}
	if r := runBin(t, root, env, "ci", "finish", "--state", bucket, "--run", plan.Run); r.code != 0 {
		t.Fatalf("finish again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var runs struct {
		Runs []struct {
			Run     string         `json:"run"`
			Command string         `json:"command"`
			Counts  map[string]int `json:"counts"`
		} `json:"runs"`
	}
	decodeJSON(t, runBin(t, root, env, "history", "--json", "--state", bucket), &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Run != plan.Run || runs.Runs[0].Command != "apply" || runs.Runs[0].Counts["applied"] != 3 {
		t.Errorf("the bucket's history: %+v", runs)
	}
}

// TestStatusThenDependencies: --status picks among what the other flags
// select, and --with-dependencies then adds what the picked units wait
// for, whatever their status.
func TestStatusThenDependencies(t *testing.T) {
	t.Parallel()
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": "dirs:\n  net: {tags: [net]}\n  app: {tags: [app]}\n  web: {tags: [web]}\n" +
			"stacks:\n  names:\n    net: {tag_query: net}\n    app: {tag_query: app, rules: {plan_after: [net]}}\n    web: {tag_query: web}\n",
		"net/main.tf": "", "app/main.tf": "", "web/main.tf": "",
	})
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var units []*report.UnitReport
	// old left the config since.
	for dir, s := range map[string]report.Status{"net": report.StatusNoChanges, "app": report.StatusPlanned, "web": report.StatusPlanned, "old": report.StatusPlanned} {
		units = append(units, &report.UnitReport{Dir: dir, Workspace: "default", Stack: dir, Status: s})
	}
	rec := history.FromReport(report.Assemble("drift", t0, t0.Add(time.Minute), units, false), history.Meta{})
	if err := history.Local(filepath.Join(root, ".strata")).Append(context.Background(), rec, 10); err != nil {
		t.Fatal(err)
	}
	env := hermeticEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--status", "drifted"}, "app web"},
		{[]string{"--status", "drifted", "--stack", "app"}, "app"},
		{[]string{"--status", "drifted", "--stack", "app", "--with-dependencies"}, "app net"},
		{[]string{"--status", "in-sync,failed"}, "net"},
	} {
		got := lsDirs(t, runBin(t, root, env, append([]string{"ls", "--json"}, tt.args...)...))
		if strings.Join(got, " ") != tt.want {
			t.Errorf("ls %v: %v, want %s", tt.args, got, tt.want)
		}
	}
	for _, arg := range []string{"old", "old@default#old"} {
		var old historyOfUnit
		decodeJSON(t, runBin(t, root, env, "history", arg, "--json"), &old)
		if old.Unit != "old@default#old" || old.Status.Drift != "drifted" || len(old.Runs) != 1 {
			t.Errorf("history %s of a unit that left the config: %+v", arg, old)
		}
	}
	if r := runBin(t, root, env, "history", "nothere"); r.code != 1 || !strings.Contains(r.stderr, "no unit nothere in the config or the history") {
		t.Errorf("history nothere: exit %d\n%s", r.code, r.stderr)
	}
}
