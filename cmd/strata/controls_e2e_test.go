package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// controlsByStack is the stacks design's "different controls based on
// stack name": prod applied only by team:sre with two approvals from the
// team, dev by anyone.
func controlsByStack(t *testing.T) string {
	return "dirs:\n  production: {tags: [production]}\n  development: {tags: [development]}\n" + designDoc(t, "controls-by-stack-name.yml")
}

// fakeForge is a fake GitHub or GitLab: what it knows, and the
// environment of a CI job that runs a command by actor for pull (merge)
// request n.
type fakeForge interface {
	state() *forgeState
	jobEnv(t *testing.T, dir, actor string, n int, token bool) []string
}

// controlsRepo is a repository of the two stacks under controlsByStack,
// with the same config on the fake's default branch.
func controlsRepo(t *testing.T, gh *forgeState) string {
	t.Helper()
	tf := func(name string) string {
		return `resource "terraform_data" "x" { input = "` + name + `" }
output "name" { value = terraform_data.x.output }
`
	}
	gh.files["strata.yml"] = controlsByStack(t)
	return testenv.WriteRepo(t, map[string]string{
		"strata.yml":             controlsByStack(t),
		"production/main.tf":     tf("production"),
		"development/main.tf":    tf("development"),
		"production/.gitignore":  "",
		"development/.gitignore": "",
	})
}

// unitsOf is each unit's status and reason in a report, by dir.
func unitsOf(t *testing.T, path string) map[string]*report.UnitReport {
	t.Helper()
	out := map[string]*report.UnitReport{}
	for _, u := range readReport(t, path).Units {
		out[u.Dir] = u
	}
	return out
}

// TestControlsByStackName: the controls a config declares hold in a
// GitHub Actions run, read from a fake GitHub: bob may apply dev and not
// prod; alice, of team sre, applies prod only with two approvals from the
// team (one from outside it does not count); a pull request that loosens
// its own controls is held to the default branch's; merge conflicts and a
// failed status check hold prod back. A refused unit ends denied, runs
// nothing, and the run exits 1.
func TestControlsByStackName(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for name, f := range map[string]fakeForge{"github": newFakeGitHub(t), "gitlab": newFakeGitLab(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			controlsByStackName(t, f)
		})
	}
}

// controlsRun is one forge's fake and the repository the controls are
// tried on.
type controlsRun struct {
	f            fakeForge
	gh           *forgeState
	root, events string
}

// apply runs apply -auto-approve for actor's pull request n, with the
// token, and returns its report's units.
func (c *controlsRun) apply(t *testing.T, actor string, n int, args ...string) (binRun, map[string]*report.UnitReport) {
	t.Helper()
	rep := filepath.Join(t.TempDir(), "report.json")
	env := testenv.Env(t, c.f.jobEnv(t, c.events, actor, n, true)...)
	r := runBin(t, c.root, env, append([]string{"apply", "-auto-approve", "--report", rep}, args...)...)
	return r, unitsOf(t, rep)
}

// wantUnit checks a unit's status and that its reason holds reason; a
// denied unit must have run nothing.
func wantUnit(t *testing.T, units map[string]*report.UnitReport, dir string, status report.Status, reason string) {
	t.Helper()
	u := units[dir]
	if u == nil || u.Status != status || !strings.Contains(u.Reason, reason) {
		t.Errorf("%s: %+v; want %s, reason holding %q", dir, u, status, reason)
		return
	}
	if status == report.StatusDenied && len(u.Steps) != 0 {
		t.Errorf("%s was denied and ran %+v", dir, u.Steps)
	}
}

// controlsByStackName is TestControlsByStackName on one forge; its parts
// run in order, as each leaves the pull requests and statuses the next
// one reads.
func controlsByStackName(t *testing.T, f fakeForge) {
	gh := f.state()
	gh.teams["sre"] = []string{"alice", "carol", "dave"}
	gh.roles = map[string]string{"alice": "admin", "bob": "write", "carol": "write", "dave": "write", "erin": "write"}
	gh.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true, approvals: []string{"carol", "erin"}, statuses: map[string]string{"lint": "success"}}
	c := &controlsRun{f: f, gh: gh, root: controlsRepo(t, gh), events: t.TempDir()}
	t.Cleanup(func() {
		// Each command set the apply status of its pull request's head
		// (GitLab calls a failure failed).
		want := []string{
			"aaaaaaa strata apply: failure: 2 units not applied",
			"aaaaaaa strata apply: success: everything applied",
			"aaaaaaa strata apply: failure: 1 unit not applied",
			"aaaaaaa strata apply: pending: 1 unit to apply",
			"aaaaaaa strata apply: success: everything applied",
		}
		got := make([]string, len(gh.statuses))
		for i, st := range gh.statuses {
			got[i] = strings.Replace(st, ": failed: ", ": failure: ", 1)
		}
		if !slices.Equal(got[:min(len(got), len(want))], want) {
			t.Errorf("apply statuses:\n got %q\nwant %q (then those of the later subtests)", got, want)
		}
		asked := slices.ContainsFunc(gh.calls, func(c string) bool { return strings.Contains(c, "/members") })
		if !asked {
			t.Errorf("the fake forge was never asked who is in a team: %v", gh.calls)
		}
	})
	ctlAccess(t, c)
	ctlRequirements(t, c)
	ctlFailClosed(t, c)
	ctlElsewhere(t, c)
}

// ctlAccess: bob may apply dev and not prod.
func ctlAccess(t *testing.T, c *controlsRun) {
	t.Run("bob may not apply prod, so not the whole apply", func(t *testing.T) {
		r, units := c.apply(t, "bob", 5)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, units, "production", report.StatusDenied, `bob may not apply production@default: access_control policy "stack_name:prod" lets team:sre apply it`)
		wantUnit(t, units, "development", report.StatusDenied, "access_control.apply_require_all_dirspace_access refuses the whole apply")
		if !strings.Contains(r.stdout+r.stderr, "denied") {
			t.Errorf("the console does not say what was denied:\n%s%s", r.stdout, r.stderr)
		}
	})
	t.Run("bob applies dev", func(t *testing.T) {
		r, units := c.apply(t, "bob", 5, "--stack", "dev")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, units, "development", report.StatusApplied, "")
	})
}

// ctlRequirements: what an apply of prod needs of its pull request, and the apply status it leaves.
func ctlRequirements(t *testing.T, c *controlsRun) {
	t.Run("alice with one approval from team sre", func(t *testing.T) {
		r, units := c.apply(t, "alice", 5, "--stack", "prod")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		// erin's approval is not from the team.
		wantUnit(t, units, "production", report.StatusDenied, `apply_requirements check "stack_name:prod": needs 2 approvals from team:sre, has 1: carol`)
	})
	t.Run("a plan leaves the apply status pending", func(t *testing.T) {
		rep := filepath.Join(t.TempDir(), "report.json")
		r := runBin(t, c.root, testenv.Env(t, c.f.jobEnv(t, c.events, "alice", 5, true)...), "plan", "--stack", "prod", "--report", rep)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, unitsOf(t, rep), "production", report.StatusPlanned, "")
	})
	t.Run("alice with two approvals from team sre", func(t *testing.T) {
		c.gh.mu.Lock()
		c.gh.pulls[5].approvals = append(c.gh.pulls[5].approvals, "dave")
		c.gh.mu.Unlock()
		r, units := c.apply(t, "alice", 5, "--stack", "prod")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, units, "production", report.StatusApplied, "")
	})
	t.Run("merge conflicts hold prod back", func(t *testing.T) {
		c.gh.mu.Lock()
		c.gh.pulls[6] = &fakePull{head: strings.Repeat("b", 40), approvals: []string{"carol", "dave"}}
		c.gh.mu.Unlock()
		r, units := c.apply(t, "alice", 6, "--stack", "prod")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, units, "production", report.StatusDenied, "6 has merge conflicts")
	})
	t.Run("a failed status check holds prod back", func(t *testing.T) {
		c.gh.mu.Lock()
		c.gh.pulls[7] = &fakePull{head: strings.Repeat("c", 40), mergeable: true, approvals: []string{"carol", "dave"}, statuses: map[string]string{"lint": "failure", "docs": "success"}}
		c.gh.mu.Unlock()
		r, units := c.apply(t, "alice", 7, "--stack", "prod")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, units, "production", report.StatusDenied, "status checks not passed: lint (failure)")
	})
}

// ctlFailClosed: a forge that cannot be read refuses.
func ctlFailClosed(t *testing.T, c *controlsRun) {
	// alice may apply prod with PR 5 by now: only the forge refuses.
	applyProd := func(t *testing.T, env []string, reason string) {
		t.Helper()
		rep := filepath.Join(t.TempDir(), "report.json")
		r := runBin(t, c.root, testenv.Env(t, env...), "apply", "-auto-approve", "--stack", "prod", "--report", rep)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, unitsOf(t, rep), "production", report.StatusDenied, reason)
	}
	t.Run("no token", func(t *testing.T) {
		applyProd(t, c.f.jobEnv(t, c.events, "alice", 5, false), "the controls could not be checked: no Git")
	})
	t.Run("a token the forge refuses", func(t *testing.T) {
		env := c.f.jobEnv(t, c.events, "alice", 5, true)
		for i, kv := range env {
			if name, _, _ := strings.Cut(kv, "="); strings.HasSuffix(name, "_TOKEN") {
				env[i] = name + "=revoked"
			}
		}
		applyProd(t, env, "401")
	})
}

// ctlElsewhere: a run spread over jobs, a run outside CI, and a pull request that loosens its own controls.
func ctlElsewhere(t *testing.T, c *controlsRun) {
	t.Run("a run spread over jobs", func(t *testing.T) {
		// ci start decides for the whole run; its jobs follow; ci
		// finish reports the denial and sets the apply status.
		env := testenv.Env(t, c.f.jobEnv(t, c.events, "bob", 5, true)...)
		bucket := "file://" + t.TempDir()
		plan, _ := startRun(t, c.root, env, "apply", "--auto-approve", "--state", bucket, "--json")
		for _, w := range plan.Waves {
			for _, shard := range w.Shards {
				if r := runBin(t, c.root, env, "ci", "run", "--state", bucket, "--run", plan.Run, "--wave", itoa(w.Wave), "--shard", itoa(shard)); r.code != 0 {
					t.Fatalf("wave %d shard %d: exit %d\n%s%s", w.Wave, shard, r.code, r.stdout, r.stderr)
				}
			}
		}
		rep := filepath.Join(t.TempDir(), "report.json")
		r := runBin(t, c.root, env, "ci", "finish", "--state", bucket, "--run", plan.Run, "--report", rep)
		if r.code != 1 || !strings.Contains(r.stderr, `commit status "strata apply": failure, 2 units not applied`) {
			t.Fatalf("finish: exit %d, want 1 and the apply status set\n%s%s", r.code, r.stdout, r.stderr)
		}
		units := unitsOf(t, rep)
		wantUnit(t, units, "production", report.StatusDenied, `bob may not apply production@default`)
		wantUnit(t, units, "development", report.StatusDenied, "refuses the whole apply")
		if r := runBin(t, c.root, env, "ci", "check", "--state", bucket, "--run", plan.Run); r.code != 0 {
			t.Errorf("ci check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("outside CI", func(t *testing.T) {
		// Nobody can tell who runs it: strata says so once, and runs.
		r := runBin(t, c.root, testenv.Env(t), "plan", "--stack", "prod")
		if r.code != 0 || strings.Count(r.stderr, "this run is not checked against them") != 1 {
			t.Errorf("exit %d, want 0 and the note once\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("a pull request that loosens its own controls", func(t *testing.T) {
		// The checkout lets anyone apply prod; the default branch does not.
		loose := strings.Replace(controlsByStack(t), "apply: ['team:sre']", "apply: ['*']", 1)
		loose = loose[:strings.Index(loose, "apply_requirements:")]
		testenv.WriteFile(t, filepath.Join(c.root, "strata.yml"), loose)
		defer testenv.WriteFile(t, filepath.Join(c.root, "strata.yml"), controlsByStack(t))
		r, units := c.apply(t, "bob", 5, "--stack", "prod")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		wantUnit(t, units, "production", report.StatusDenied, `bob may not apply production@default: access_control policy "stack_name:prod" lets team:sre apply it`)
	})
}
