package ciplatform

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/environ"
)

func TestRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      []string
		platform Platform
		forge    Platform
		job      Job
	}{
		{"no CI", nil, None, None, Job{}},
		{"CI=false", []string{"CI=false"}, None, None, Job{}},
		{"CI=0", []string{"CI=0"}, None, None, Job{}},
		{"CI empty", []string{"CI="}, None, None, Job{}},
		{"plain CI", []string{"CI=true"}, Other, None, Job{}},
		{"plain CI, any value", []string{"CI=yes"}, Other, None, Job{}},
		{"GITHUB_ACTIONS=false", []string{"GITHUB_ACTIONS=false", "GITHUB_RUN_ID=1"}, None, None, Job{}},
		{"GITHUB_ACTIONS not true", []string{"GITHUB_ACTIONS=1"}, Other, None, Job{}},
		{"GITLAB_CI not true", []string{"GITLAB_CI=TRUE"}, Other, None, Job{}},
		{"GitHub pull request", []string{"CI=true", "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=/e.json",
			"GITHUB_ACTOR=bob", "GITHUB_REF=refs/pull/12/merge", "GITHUB_REF_TYPE=branch", "GITHUB_REF_NAME=12/merge",
			"GITHUB_HEAD_REF=feature/x", "GITHUB_BASE_REF=main", "GITHUB_SHA=abc", "GITHUB_REPOSITORY=o/r",
			"GITHUB_SERVER_URL=https://github.com/", "GITHUB_RUN_ID=99", "GITHUB_RUN_ATTEMPT=2", "GITHUB_JOB=plan",
			"GITHUB_WORKSPACE=/w", "GITHUB_TOKEN=ghs-1", "GITHUB_OUTPUT=/o", "GITHUB_STEP_SUMMARY=/s"},
			GitHub, GitHub, Job{Event: "pull_request", EventPath: "/e.json", Actor: "bob", PullRequest: "12", Ref: "refs/pull/12/merge",
				Branch: "12/merge", HeadRef: "feature/x", BaseRef: "main", Commit: "abc", Repository: "o/r",
				ServerURL: "https://github.com", RepositoryURL: "https://github.com/o/r", RunID: "99", RunAttempt: "2", JobID: "plan",
				RunURL: "https://github.com/o/r/actions/runs/99", CommitURL: "https://github.com/o/r/commit/abc",
				Workspace: "/w", Output: "/o", StepSummary: "/s", Token: Token{"GITHUB_TOKEN", "ghs-1"}}},
		{"GitHub push", []string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=push", "GITHUB_REF=refs/heads/main", "GITHUB_REF_TYPE=branch",
			"GITHUB_REF_NAME=main", "GITHUB_BASE_REF=", "GITHUB_SHA=abc", "STRATA_GITHUB_TOKEN=mine", "GITHUB_TOKEN=ghs-1"},
			GitHub, GitHub, Job{Event: "push", Ref: "refs/heads/main", Branch: "main", Commit: "abc", Token: Token{"STRATA_GITHUB_TOKEN", "mine"}}},
		{"GitHub tag: no branch", []string{"GITHUB_ACTIONS=true", "GITHUB_REF=refs/tags/v1", "GITHUB_REF_TYPE=tag", "GITHUB_REF_NAME=v1"},
			GitHub, GitHub, Job{Ref: "refs/tags/v1"}},
		{"GitHub, a ref that only looks like a pull request's", []string{"GITHUB_ACTIONS=true", "GITHUB_REF=refs/pull/x/merge"},
			GitHub, GitHub, Job{Ref: "refs/pull/x/merge"}},
		{"GitHub, no repository: no links", []string{"GITHUB_ACTIONS=true", "GITHUB_SERVER_URL=https://github.com", "GITHUB_RUN_ID=1", "GITHUB_SHA=abc"},
			GitHub, GitHub, Job{ServerURL: "https://github.com", RunID: "1", Commit: "abc"}},
		{"GitLab merge request pipeline", []string{"CI=true", "GITLAB_CI=true", "CI_PIPELINE_SOURCE=merge_request_event", "GITLAB_USER_LOGIN=bob",
			"CI_MERGE_REQUEST_IID=5", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=dev", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main",
			"CI_MERGE_REQUEST_DRAFT=true", "CI_DEFAULT_BRANCH=main", "CI_COMMIT_SHA=def", "CI_PROJECT_ID=42",
			"CI_SERVER_URL=https://gitlab.example", "CI_PROJECT_URL=https://gitlab.example/g/p/", "CI_API_V4_URL=https://gitlab.example/api/v4",
			"CI_PIPELINE_ID=7", "CI_JOB_ID=8", "CI_PIPELINE_URL=https://gitlab.example/g/p/-/pipelines/7", "CI_PROJECT_DIR=/builds/g/p",
			"CI_JOB_TOKEN=job-3", "GITLAB_TOKEN=glpat-2"},
			GitLab, GitLab, Job{Event: "merge_request_event", Actor: "bob", PullRequest: "5", HeadRef: "dev", BaseRef: "main", Draft: true,
				DefaultBranch: "main", Commit: "def", Repository: "42", ServerURL: "https://gitlab.example",
				RepositoryURL: "https://gitlab.example/g/p", API: "https://gitlab.example/api/v4", RunID: "7", JobID: "8",
				RunURL: "https://gitlab.example/g/p/-/pipelines/7", CommitURL: "https://gitlab.example/g/p/-/commit/def",
				Workspace: "/builds/g/p", Token: Token{"GITLAB_TOKEN", "glpat-2"}}},
		{"GitLab push, an odd IID kept as given", []string{"GITLAB_CI=true", "CI_COMMIT_BRANCH=main", "CI_MERGE_REQUEST_IID=five", "CI_MERGE_REQUEST_DRAFT=yes"},
			GitLab, GitLab, Job{Branch: "main", PullRequest: "five"}},
		{"GitHub before GitLab", []string{"GITLAB_CI=true", "GITHUB_ACTIONS=true", "GITHUB_ACTOR=a", "GITLAB_USER_LOGIN=b"},
			GitHub, GitHub, Job{Actor: "a"}},
		{"the last entry wins", []string{"GITHUB_ACTIONS=true", "GITHUB_ACTIONS=false"}, None, None, Job{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ci := Read(tt.env)
			if ci.Platform != tt.platform || ci.Forge() != tt.forge || ci.InCI() != (tt.platform != None) {
				t.Errorf("platform %s, forge %s, in CI %t; want %s, %s, %t", ci.Platform, ci.Forge(), ci.InCI(), tt.platform, tt.forge, tt.platform != None)
			}
			if ci.InCI() != environ.InCI(environ.Getenv(tt.env)) {
				t.Errorf("InCI %t, environ.InCI says otherwise", ci.InCI())
			}
			if got := ci.Job(); !reflect.DeepEqual(got, tt.job) {
				t.Errorf("Job:\n got %+v\nwant %+v", got, tt.job)
			}
			if got := From(environ.Getenv(tt.env)); !reflect.DeepEqual(got, ci) {
				t.Errorf("From differs from Read: %+v", got)
			}
		})
	}
}

// TestJobsWhateverThePlatform: each platform's job is read without its
// marker, for a caller that knows which platform it talks to.
func TestJobsWhateverThePlatform(t *testing.T) {
	t.Parallel()
	ci := Read([]string{"GITHUB_RUN_ID=42", "GITHUB_EVENT_PATH=/e.json", "CI_JOB_ID=8", "CI_PROJECT_ID=7"})
	if ci.Platform != None || ci.Job() != (Job{}) {
		t.Errorf("platform %s, job %+v; want none", ci.Platform, ci.Job())
	}
	if ci.GitHub.RunID != "42" || ci.GitHub.EventPath != "/e.json" || ci.GitLab.JobID != "8" || ci.GitLab.Repository != "7" {
		t.Errorf("GitHub %+v, GitLab %+v", ci.GitHub, ci.GitLab)
	}
}

// TestTokenMasked: a token's value shows only through Value; its
// variables are credentials.
func TestTokenMasked(t *testing.T) {
	t.Parallel()
	ci := Read([]string{"GITHUB_ACTIONS=true", "GITHUB_TOKEN=ghs-secret", "STRATA_GITLAB_TOKEN=glpat-secret"})
	for _, tok := range []Token{ci.GitHub.Token, ci.GitLab.Token} {
		if !environ.IsCredential(tok.Name()) {
			t.Errorf("%s is not a credential (environ.Credentials)", tok.Name())
		}
		if !strings.HasSuffix(tok.Value(), "-secret") {
			t.Errorf("%s: value %q", tok.Name(), tok.Value())
		}
	}
	js, err := json.Marshal(ci)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(ci), fmt.Sprintf("%+v", ci), fmt.Sprintf("%#v", ci), fmt.Sprint(ci.GitHub.Token), string(js)} {
		if strings.Contains(s, "secret") {
			t.Errorf("the token shows: %s", s)
		}
		if !strings.Contains(s, "GITHUB_TOKEN=***") {
			t.Errorf("no masked token: %s", s)
		}
	}
	if tok := Read(nil).GitHub.Token; tok.String() != "" || tok.Name() != "" || tok.Value() != "" {
		t.Errorf("no token: %q %q %q", tok, tok.Name(), tok.Value())
	}
}

func TestPlatformString(t *testing.T) {
	t.Parallel()
	for p, want := range map[Platform]string{None: "none", GitHub: "github", GitLab: "gitlab", Other: "ci"} {
		if p.String() != want {
			t.Errorf("%d: %q, want %q", p, p.String(), want)
		}
	}
}
