package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// TestMergeCommitsPullRequest: PR 5's plan records app's plan as PR 5's,
// in GitHub Actions against a fake GitHub. The push that follows a merge
// names no pull request; strata asks the forge whose merge made the
// commit. When it is PR 5's, the apply compares its new plan with PR 5's
// and says how it differs; when it is PR 6's, PR 5's review says nothing
// of it, and the apply carries no note of it.
func TestMergeCommitsPullRequest(t *testing.T) {
	needTerraform(t)
	for _, merged := range []int{5, 6} {
		t.Run("PR "+strconv.Itoa(merged), func(t *testing.T) {
			t.Parallel()
			f := newFakeGitHub(t)
			root := writeRepo(t, map[string]string{
				"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
				"app/main.tf": testenv.AppTF("a0", ""),
			})
			events := t.TempDir()
			env := append(hermeticEnv(t), "GITHUB_ACTIONS=true")
			if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
				t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}

			head, mergeCommit := strings.Repeat("a", 40), strings.Repeat("c", 40)
			f.mu.Lock()
			f.pulls[5] = &fakePull{head: head, mergeable: true}
			f.pulls[6] = &fakePull{head: strings.Repeat("b", 40), mergeable: true}
			f.mu.Unlock()
			testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), testenv.AppTF("a5", ""))
			prEnv := append(hermeticEnv(t), f.env(t, events, "alice", "pull_request",
				`{"action":"synchronize","number":5,"pull_request":{"number":5,"head":{"sha":"`+head+`"}},"repository":{"full_name":"acme/infra","default_branch":"main"}}`,
				"GITHUB_REF=refs/pull/5/merge", "GITHUB_SHA="+strings.Repeat("d", 40))...)
			if r := runBin(t, root, prEnv, "plan"); r.code != 0 {
				t.Fatalf("PR 5's plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}

			f.mu.Lock()
			f.pulls[merged].merged, f.pulls[merged].mergeCommit = true, mergeCommit
			f.mu.Unlock()
			testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), testenv.AppTF("a6", ""))
			pushEnv := append(hermeticEnv(t), f.env(t, events, "alice", "push",
				`{"ref":"refs/heads/main","after":"`+mergeCommit+`","repository":{"full_name":"acme/infra","default_branch":"main"}}`,
				"GITHUB_REF=refs/heads/main", "GITHUB_SHA="+mergeCommit)...)
			reportFile := filepath.Join(t.TempDir(), "report.json")
			r := runBin(t, root, pushEnv, "apply", "-auto-approve", "--report", reportFile)
			if r.code != 0 {
				t.Fatalf("the push's apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			app := readReport(t, reportFile).Units[0]
			if merged == 5 {
				const reason = "re-planned: differs from the reviewed plan, from PR #5 (reviewed +0 ~1 -0, applied +0 ~1 -0)"
				if app.Status != report.StatusApplied || app.Reason != reason || app.Replanned == nil || app.Replanned.ReviewedBy != "PR #5" {
					t.Errorf("app: %s (%s), replanned %+v; want %q", app.Status, app.Reason, app.Replanned, reason)
				}
				return
			}
			if app.Status != report.StatusApplied || app.Reason != "" || app.Replanned != nil {
				t.Errorf("app: %s (%s), replanned %+v; want applied with no note of PR 5's review", app.Status, app.Reason, app.Replanned)
			}
		})
	}
}
