package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/strata-iac/strata/internal/testenv"
)

// TestDriftIssues: a drift check in CI, with drift scheduled in the
// config, opens one issue per drifted unit, updates it on the next check
// rather than opening another, and closes it once the unit no longer
// drifts; on GitHub and on GitLab.
func TestDriftIssues(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for name, f := range map[string]fakeForge{"github": newFakeGitHub(t), "gitlab": newFakeGitLab(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			driftIssuesOn(t, f)
		})
	}
}

func driftIssuesOn(t *testing.T, f fakeForge) {
	st := f.state()
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n  b: {tags: [b]}\ndrift:\n  enabled: true\n  schedule: daily\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
		"b/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	env := testenv.Env(t, f.jobEnv(t, t.TempDir(), "alice", 5, true)...)
	// The fake's handlers run on the server's goroutines: the test reads
	// its state under its lock.
	open := func() map[string]int {
		st.mu.Lock()
		defer st.mu.Unlock()
		out := map[string]int{}
		for n, is := range st.issues {
			if is.open {
				out[is.title] = n
			}
		}
		return out
	}
	if r := runBin(t, root, env, "drift"); r.code != 2 {
		t.Fatalf("drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	first := open()
	if len(first) != 2 || first["Drift: a@default"] == 0 || first["Drift: b@default"] == 0 {
		t.Fatalf("open issues %v after the first check", first)
	}
	st.mu.Lock()
	body := st.issues[first["Drift: a@default"]].body
	st.mu.Unlock()
	if !strings.HasPrefix(body, "<!-- strata:drift a@default#") || !strings.Contains(body, "+1 ~0 -0") {
		t.Errorf("issue body:\n%s", body)
	}
	if r := runBin(t, root, env, "apply", "-auto-approve", "--dir", "a"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runBin(t, root, env, "drift")
	if r.code != 2 {
		t.Fatalf("drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := open(); len(got) != 1 || got["Drift: b@default"] != first["Drift: b@default"] {
		t.Errorf("open issues %v after a applied, want only b's, the same issue\n%s", got, r.stderr)
	}
	st.mu.Lock()
	if len(st.issues) != 2 || st.issues[first["Drift: a@default"]].open {
		t.Errorf("issues %v: a's not closed, or a new one opened", st.issues)
	}
	st.mu.Unlock()
	if !strings.Contains(r.stderr, "no longer drifts") {
		t.Errorf("the close is not said:\n%s", r.stderr)
	}
}

// TestEmitDrift: ci emit drift writes a scheduled workflow running drift
// on each schedule's tag query through the reusable workflow, reconcile
// applying the same units when drift found changes; without drift
// scheduled it says so and exits 1.
func TestEmitDrift(t *testing.T) {
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\ndrift:\n  enabled: true\n  schedules:\n    nightly: {schedule: daily, tag_query: 'dir:a', reconcile: true}\n    often: {schedule: hourly, tag_query: 'tag:a'}\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	out := filepath.Join(t.TempDir(), ".github", "workflows", "strata-drift.yml")
	if r := runBin(t, root, testenv.Env(t), "ci", "emit", "drift", "--output", out); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			Schedule []struct{ Cron string } `yaml:"schedule"`
		} `yaml:"on"`
		Jobs map[string]struct {
			If    string            `yaml:"if"`
			Needs string            `yaml:"needs"`
			Uses  string            `yaml:"uses"`
			With  map[string]string `yaml:"with"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	var crons []string
	for _, s := range wf.On.Schedule {
		crons = append(crons, s.Cron)
	}
	if !slices.Equal(crons, []string{"17 3 * * *", "17 * * * *"}) {
		t.Errorf("crons %v", crons)
	}
	nightly, reconcile, often := wf.Jobs["drift_nightly"], wf.Jobs["reconcile_nightly"], wf.Jobs["drift_often"]
	if nightly.With["command"] != "drift" || nightly.With["query"] != "dir:a" || !strings.Contains(nightly.If, "'17 3 * * *'") {
		t.Errorf("drift_nightly %+v", nightly)
	}
	if reconcile.With["command"] != "apply" || reconcile.With["auto-approve"] != "true" || reconcile.Needs != "drift_nightly" ||
		!strings.Contains(reconcile.If, "needs.drift_nightly.outputs.exit-code == '2'") {
		t.Errorf("reconcile_nightly %+v", reconcile)
	}
	if often.With["query"] != "tag:a" || wf.Jobs["reconcile_often"].Uses != "" {
		t.Errorf("drift_often %+v, reconcile_often %+v", often, wf.Jobs["reconcile_often"])
	}
	testenv.WriteFile(t, filepath.Join(root, "strata.yml"), "dirs:\n  a: {tags: [a]}\n")
	if r := runBin(t, root, testenv.Env(t), "ci", "emit", "drift"); r.code != 1 || !strings.Contains(r.stderr, "no drift schedule") {
		t.Errorf("without drift: exit %d\n%s", r.code, r.stderr)
	}
}
