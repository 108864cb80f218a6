package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/strata-iac/strata/stacks/config"
)

// TestGlobRegexp: a destination branch glob matches in GitLab's rules
// exactly the branches it matches in strata (doublestar).
func TestGlobRegexp(t *testing.T) {
	t.Parallel()
	globs := []string{"main", "release/*", "release/**", "**/prod", "a/**/b", "hotfix-?", "feature/{a,b}-*", "v[0-9].x", "env.prod", "team/[!x]*"}
	branches := []string{"main", "mainline", "release/1.2", "release/1.2/rc", "hotfix-1", "hotfix-12", "feature/a-x", "feature/c-x",
		"v1.x", "vx.x", "env.prod", "envXprod", "team/y1", "team/x1", "release", "prod", "x/y/prod", "a/b", "a/x/y/b"}
	for _, g := range globs {
		re := globRegexp(g)
		// GitLab's /…/ with \/ is Go's regexp once the slashes are plain.
		goRe := regexp.MustCompile(strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(re, "/"), "/"), `\/`, "/"))
		for _, b := range branches {
			want, _ := doublestar.Match(g, b)
			if got := goRe.MatchString(b); got != want {
				t.Errorf("%s (%s) on %s: %v, want %v", g, re, b, got, want)
			}
		}
	}
}

func TestGitLabBranchRules(t *testing.T) {
	t.Parallel()
	str := func(s string) config.String { return config.String{Value: s, Set: true} }
	mr, push := gitlabBranchRules(nil)
	if mr != `$CI_PIPELINE_SOURCE == "merge_request_event"` || push != "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH" {
		t.Errorf("no destination_branches: %q, %q", mr, push)
	}
	src := []config.String{str("feature/*")}
	mr, push = gitlabBranchRules([]config.DestinationBranch{{Branch: str("main")}, {Branch: str("release/*"), SourceBranches: &src}})
	if want := `$CI_PIPELINE_SOURCE == "merge_request_event" && ($CI_MERGE_REQUEST_TARGET_BRANCH_NAME =~ /^main$/ || ($CI_MERGE_REQUEST_TARGET_BRANCH_NAME =~ /^release\/[^/]*$/ && $CI_MERGE_REQUEST_SOURCE_BRANCH_NAME =~ /^feature\/[^/]*$/))`; mr != want {
		t.Errorf("merge requests:\n got %s\nwant %s", mr, want)
	}
	if want := `$CI_COMMIT_BRANCH =~ /^main$/ || $CI_COMMIT_BRANCH =~ /^release\/[^/]*$/`; push != want {
		t.Errorf("pushes:\n got %s\nwant %s", push, want)
	}
}

// TestGitLabCheckoutScript runs the emitted checkout in real clones: under
// merge, a detached merge request pipeline's jobs all work on one merge
// commit of the head and the target the start fetched, even after the
// target moved on; under checkout, a merged results pipeline works on the
// source commit; other pipelines keep their checkout.
func TestGitLabCheckoutScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git := func(in string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = in
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	origin, work := filepath.Join(dir, "origin.git"), filepath.Join(dir, "work")
	git(dir, "init", "-q", "--bare", "-b", "main", origin)
	git(dir, "clone", "-q", origin, work)
	writeTestFile(t, filepath.Join(work, "base.tf"), []byte("# base\n"))
	git(work, "add", "-A")
	git(work, "commit", "-qm", "base")
	git(work, "push", "-q", "origin", "HEAD:main")
	git(work, "checkout", "-qb", "change")
	writeTestFile(t, filepath.Join(work, "change.tf"), []byte("# change\n"))
	git(work, "add", "-A")
	git(work, "commit", "-qm", "change")
	head := git(work, "rev-parse", "HEAD")
	git(work, "push", "-q", "origin", "change")
	git(work, "checkout", "-q", "main")
	writeTestFile(t, filepath.Join(work, "main.tf"), []byte("# main moved\n"))
	git(work, "add", "-A")
	git(work, "commit", "-qm", "main moved")
	git(work, "push", "-q", "origin", "main")

	job := func(name string, env ...string) (string, string) {
		clone := filepath.Join(dir, name)
		git(dir, "clone", "-q", "--depth", "1", "--no-single-branch", "file://"+origin, clone)
		git(clone, "checkout", "-q", head)
		cmd := exec.Command("sh", "-c", gitlabCheckoutScript+`echo "$STRATA_MERGE_TARGET"`)
		cmd.Dir = clone
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return git(clone, "rev-parse", "HEAD"), strings.TrimSpace(string(out))
	}
	mrEnv := []string{"STRATA_CHECKOUT_STRATEGY=merge", "CI_MERGE_REQUEST_EVENT_TYPE=detached", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main"}
	started, target := job("start", mrEnv...)
	if started == head || target == "" {
		t.Fatalf("merge: HEAD %s (the head %s), target %q", started, head, target)
	}
	if files := git(filepath.Join(dir, "start"), "ls-files"); files != "base.tf\nchange.tf\nmain.tf" {
		t.Errorf("the merge holds %q", files)
	}
	// The target moves on; a job of the run merges what the start did.
	git(work, "commit", "-q", "--allow-empty", "-m", "main moved again")
	git(work, "push", "-q", "origin", "main")
	if got, _ := job("wave-0-shard-0", append(mrEnv, "STRATA_MERGE_TARGET="+target)...); got != started {
		t.Errorf("a job's merge %s; the start's %s", got, started)
	}
	if got, _ := job("merged-results", "STRATA_CHECKOUT_STRATEGY=checkout", "CI_MERGE_REQUEST_EVENT_TYPE=merged_result", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA="+head); got != head {
		t.Errorf("checkout on a merged results pipeline: %s, want the source %s", got, head)
	}
	if got, _ := job("branch", "STRATA_CHECKOUT_STRATEGY=merge"); got != head {
		t.Errorf("a branch pipeline's checkout moved: %s", got)
	}
}
