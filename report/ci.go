package report

import (
	"strings"

	"github.com/strata-iac/strata/internal/environ"
)

// Service is the CI service a run is in.
type Service int

const (
	NoService Service = iota
	GitHub
	GitLab
)

// ServiceOf reads the CI service from an environment.
func ServiceOf(getenv func(string) string) Service {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return GitHub
	case getenv("GITLAB_CI") == "true":
		return GitLab
	}
	return NoService
}

// CIReport is what the CI service says about the run: the commit, the
// branch a merge request targets and a link to the CI run.
type CIReport struct {
	Service   string `json:"service"` // "github" or "gitlab"
	Commit    string `json:"commit,omitempty"`
	CommitURL string `json:"commit_url,omitempty"`
	Base      string `json:"base,omitempty"`
	RunURL    string `json:"run_url,omitempty"`
}

// CIFromEnv reads the CI service's variables from an environment list;
// nil outside GitHub Actions and GitLab CI.
func CIFromEnv(env []string) *CIReport {
	get := environ.Getenv(env)
	switch ServiceOf(get) {
	case GitHub:
		ci := &CIReport{Service: "github", Commit: get("GITHUB_SHA"), Base: get("GITHUB_BASE_REF")}
		server, repo := strings.TrimSuffix(get("GITHUB_SERVER_URL"), "/"), get("GITHUB_REPOSITORY")
		if server != "" && repo != "" {
			if id := get("GITHUB_RUN_ID"); id != "" {
				ci.RunURL = server + "/" + repo + "/actions/runs/" + id
			}
			if ci.Commit != "" {
				ci.CommitURL = server + "/" + repo + "/commit/" + ci.Commit
			}
		}
		return ci
	case GitLab:
		ci := &CIReport{Service: "gitlab", Commit: get("CI_COMMIT_SHA"), Base: get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"), RunURL: get("CI_PIPELINE_URL")}
		if project := strings.TrimSuffix(get("CI_PROJECT_URL"), "/"); project != "" && ci.Commit != "" {
			ci.CommitURL = project + "/-/commit/" + ci.Commit
		}
		return ci
	}
	return nil
}
