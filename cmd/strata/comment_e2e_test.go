package main

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// TestOneCommentPerPullRequest: --comment posts the run's comment on the
// pull (merge) request the CI runs for, and the next run edits the same
// comment in place, on GitHub and on GitLab; ci comment --post does the
// same for a run spread over jobs.
func TestOneCommentPerPullRequest(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for name, f := range map[string]fakeForge{"github": newFakeGitHub(t), "gitlab": newFakeGitLab(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := writeRepo(t, map[string]string{
				"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
				"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
			})
			gh := f.state()
			gh.roles["alice"] = "write"
			gh.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true}
			// Someone else's comment stays as it is.
			gh.comment(5, 0, "looks good")
			env := testenv.Env(t, f.jobEnv(t, t.TempDir(), "alice", 5, true)...)
			if r := runBin(t, root, env, "plan", "--comment"); r.code != 0 || !strings.Contains(r.stderr, "strata: commented: ") {
				t.Fatalf("plan --comment: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := runBin(t, root, env, "apply", "-auto-approve", "--comment"); r.code != 0 {
				t.Fatalf("apply --comment: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			bucket := "file://" + t.TempDir()
			plan, _ := startRun(t, root, env, "plan", "--state", bucket, "--json")
			for _, w := range plan.Waves {
				for _, shard := range w.Shards {
					if r := runBin(t, root, env, "ci", "run", "--state", bucket, "--run", plan.Run, "--wave", itoa(w.Wave), "--shard", itoa(shard)); r.code != 0 {
						t.Fatalf("ci run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
					}
				}
			}
			if r := runBin(t, root, env, "ci", "comment", "--state", bucket, "--run", plan.Run, "--post"); r.code != 0 || r.stdout != "" {
				t.Fatalf("ci comment --post: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
			}
			var ours []string
			for _, c := range gh.commentsOf(5) {
				if body := c["body"].(string); strings.HasPrefix(body, report.CommentMarker) {
					ours = append(ours, body)
				}
			}
			if len(gh.comments[5]) != 2 || len(ours) != 1 || !strings.Contains(ours[0], "strata plan: no changes") {
				t.Errorf("comments on PR 5: %v; want one of strata's, the last run's", gh.comments[5])
			}
		})
	}
}

// TestCommentStrategyFromConfig: notifications.policies decide what a
// new comment does with strata's earlier one; append keeps both.
func TestCommentStrategyFromConfig(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	f := newFakeGitHub(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\nnotifications:\n  policies:\n    - {tag_query: 'dir:other', comment_strategy: delete}\n    - {tag_query: app, comment_strategy: append}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	f.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true}
	env := testenv.Env(t, f.jobEnv(t, t.TempDir(), "alice", 5, true)...)
	for range 2 {
		if r := runBin(t, root, env, "plan", "--comment"); r.code != 0 {
			t.Fatalf("plan --comment: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	if n := len(f.comments[5]); n != 2 {
		t.Errorf("%d comments on PR 5, want 2 (append): %v", n, f.comments[5])
	}
}
