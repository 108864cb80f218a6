// Package ciplatform reads the CI platform a process runs on from its
// environment: which platform (GitHub Actions, GitLab CI, another CI,
// none) and what its job says of itself (event, actor, pull request,
// refs, repository, run, workspace, forge token). It is where strata
// reads the CI's variables (GITHUB_*, GITLAB_*, CI_*, CI); other packages
// ask it, or are handed its value. Two reads stay outside it
// (docs/architecture.md#packages-and-layering): environ.InCI, the rule it
// decides "another CI" by, and internal/git's base for --changed.
//
// It reads an environment and nothing else: no file (not even the event
// payload GITHUB_EVENT_PATH names), no network, and it decides nothing
// about what a platform's facts mean for a command. It imports only
// internal/environ, whose InCI is the rule for "in CI" and whose
// Credentials the tokens are read from (docs/behaviour.md#credentials).
package ciplatform

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/strata-iac/strata/internal/environ"
)

// Platform is the CI platform a job runs on.
type Platform int

const (
	// None is no CI: a terminal, a script.
	None Platform = iota
	// GitHub is GitHub Actions (GITHUB_ACTIONS=true).
	GitHub
	// GitLab is GitLab CI (GITLAB_CI=true).
	GitLab
	// Other is a CI strata knows nothing more of: CI is set, or
	// GITHUB_ACTIONS or GITLAB_CI is set but not to "true"; "false" and
	// "0" are not set (environ.InCI).
	Other
)

// String is the platform's name: "github", "gitlab", "ci" or "none".
func (p Platform) String() string {
	switch p {
	case GitHub:
		return "github"
	case GitLab:
		return "gitlab"
	case Other:
		return "ci"
	}
	return "none"
}

// CI is what the environment says of the CI a process runs in.
type CI struct {
	// Platform is the platform the job runs on.
	Platform Platform
	// GitHub is the job as GitHub Actions' variables describe it, and
	// GitLab as GitLab CI's do. Each is read whatever Platform is: a
	// caller that already knows the platform it talks to (the forge it
	// was asked to open, the job name of a record) reads its variables
	// even where the platform's own marker is not set. Job picks the one
	// of Platform.
	GitHub, GitLab Job
}

// Job is what a CI job's variables say of it. Each field names the
// variable it is read from, on GitHub Actions then on GitLab CI; a field
// a platform has no variable for is empty there.
type Job struct {
	// Event is what started the job: GITHUB_EVENT_NAME (pull_request,
	// push, issue_comment, …); CI_PIPELINE_SOURCE (merge_request_event,
	// push, …).
	Event string
	// EventPath is the event's payload file: GITHUB_EVENT_PATH.
	EventPath string
	// Actor is who started the job: GITHUB_ACTOR; GITLAB_USER_LOGIN.
	Actor string
	// PullRequest is the number of the pull or merge request the job
	// builds, as the platform gives it: N of GITHUB_REF
	// refs/pull/N/merge or refs/pull/N/head; CI_MERGE_REQUEST_IID. ""
	// for none. It is not checked to be a number: a caller that needs
	// one says what it got.
	PullRequest string
	// Ref is the full ref the job builds: GITHUB_REF.
	Ref string
	// Branch is the branch a push built: GITHUB_REF_NAME when
	// GITHUB_REF_TYPE is branch; CI_COMMIT_BRANCH.
	Branch string
	// HeadRef and BaseRef are a pull request's branches, the one it
	// merges and the one it merges into: GITHUB_HEAD_REF and
	// GITHUB_BASE_REF; CI_MERGE_REQUEST_SOURCE_BRANCH_NAME and
	// CI_MERGE_REQUEST_TARGET_BRANCH_NAME.
	HeadRef, BaseRef string
	// Draft says the merge request is a draft: CI_MERGE_REQUEST_DRAFT
	// is true. GitHub says it only in the event payload.
	Draft bool
	// DefaultBranch is the repository's default branch:
	// CI_DEFAULT_BRANCH. GitHub says it only in the event payload.
	DefaultBranch string
	// Commit is the commit the job builds: GITHUB_SHA; CI_COMMIT_SHA.
	Commit string
	// Repository is the repository as the forge's API names it:
	// GITHUB_REPOSITORY (OWNER/NAME); CI_PROJECT_ID.
	Repository string
	// ServerURL is the forge's web address, without a trailing slash:
	// GITHUB_SERVER_URL; CI_SERVER_URL.
	ServerURL string
	// RepositoryURL is the repository's web address, without a trailing
	// slash: GITHUB_SERVER_URL/GITHUB_REPOSITORY when both are set;
	// CI_PROJECT_URL.
	RepositoryURL string
	// API is the forge's REST API as the job gives it, "" for the
	// forge's default: GITHUB_API_URL; CI_API_V4_URL.
	API string
	// GraphQL is GitHub's GraphQL API: GITHUB_GRAPHQL_URL.
	GraphQL string
	// RunID is the CI run's ID: GITHUB_RUN_ID; CI_PIPELINE_ID.
	RunID string
	// RunAttempt is the run's attempt: GITHUB_RUN_ATTEMPT.
	RunAttempt string
	// JobID is the job within the run: GITHUB_JOB (the workflow's job
	// key); CI_JOB_ID.
	JobID string
	// RunURL links to the CI run: RepositoryURL/actions/runs/RunID when
	// both are known; CI_PIPELINE_URL.
	RunURL string
	// CommitURL links to Commit: RepositoryURL/commit/Commit;
	// RepositoryURL/-/commit/Commit; "" when either is unknown.
	CommitURL string
	// Workspace is the checkout's dir: GITHUB_WORKSPACE;
	// CI_PROJECT_DIR.
	Workspace string
	// StepSummary is the file a step's Markdown summary is appended to:
	// GITHUB_STEP_SUMMARY.
	StepSummary string
	// Output is the file a step's outputs are written to: GITHUB_OUTPUT.
	Output string
	// Token is the forge token strata reads the forge with:
	// STRATA_GITHUB_TOKEN, else GITHUB_TOKEN; STRATA_GITLAB_TOKEN, else
	// GITLAB_TOKEN (GitLab's job token cannot read members or
	// approvals). It is masked wherever it is printed.
	Token Token
}

// Token is a forge token and the credential variable it was read from
// (environ.Credentials). Its value shows only through Value: printed or
// marshalled, a token is its variable's name and "***"
// (docs/behaviour.md#credentials).
type Token struct {
	name, value string
}

// Name is the variable the token was read from; "" when none was set.
func (t Token) Name() string { return t.name }

// Value is the token itself, for the forge's client and nothing else.
func (t Token) Value() string { return t.value }

// String is the token masked: NAME=***, or "" when there is none.
func (t Token) String() string {
	if t.value == "" {
		return ""
	}
	return t.name + "=***"
}

// GoString is String, so %#v masks the token too.
func (t Token) GoString() string { return fmt.Sprintf("%q", t.String()) }

// MarshalText is String, so encoders mask the token too.
func (t Token) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Read reads the CI from an environment list (os.Environ's form).
func Read(env []string) CI { return From(environ.Getenv(env)) }

// From reads the CI through getenv (os.Getenv's form).
func From(getenv func(string) string) CI {
	return CI{Platform: platformOf(getenv), GitHub: github(getenv), GitLab: gitlab(getenv)}
}

// platformOf decides the platform: GITHUB_ACTIONS=true first, then
// GITLAB_CI=true, then environ.InCI.
func platformOf(getenv func(string) string) Platform {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return GitHub
	case getenv("GITLAB_CI") == "true":
		return GitLab
	case environ.InCI(getenv):
		return Other
	}
	return None
}

// Job is the job of the platform: GitHub or GitLab, the zero Job on
// another CI and outside CI.
func (c CI) Job() Job {
	switch c.Platform {
	case GitHub:
		return c.GitHub
	case GitLab:
		return c.GitLab
	}
	return Job{}
}

// InCI says the process runs in a CI job, on any platform.
func (c CI) InCI() bool { return c.Platform != None }

// Forge is the platform when strata knows its forge: GitHub or GitLab;
// None on another CI and outside CI.
func (c CI) Forge() Platform {
	if c.Platform == Other {
		return None
	}
	return c.Platform
}

// pullRef is GitHub's ref of a pull request's merge (or head) commit.
var pullRef = regexp.MustCompile(`^refs/pull/([0-9]+)/(?:merge|head)$`)

// github reads GitHub Actions' variables.
func github(get func(string) string) Job {
	j := Job{
		Event: get("GITHUB_EVENT_NAME"), EventPath: get("GITHUB_EVENT_PATH"), Actor: get("GITHUB_ACTOR"),
		Ref: get("GITHUB_REF"), HeadRef: get("GITHUB_HEAD_REF"), BaseRef: get("GITHUB_BASE_REF"),
		Commit: get("GITHUB_SHA"), Repository: get("GITHUB_REPOSITORY"),
		ServerURL: strings.TrimSuffix(get("GITHUB_SERVER_URL"), "/"),
		API:       get("GITHUB_API_URL"), GraphQL: get("GITHUB_GRAPHQL_URL"),
		RunID: get("GITHUB_RUN_ID"), RunAttempt: get("GITHUB_RUN_ATTEMPT"), JobID: get("GITHUB_JOB"),
		Workspace: get("GITHUB_WORKSPACE"), StepSummary: get("GITHUB_STEP_SUMMARY"), Output: get("GITHUB_OUTPUT"),
		Token: token(get, "STRATA_GITHUB_TOKEN", "GITHUB_TOKEN"),
	}
	if m := pullRef.FindStringSubmatch(j.Ref); m != nil {
		j.PullRequest = m[1]
	}
	if get("GITHUB_REF_TYPE") == "branch" {
		j.Branch = get("GITHUB_REF_NAME")
	}
	if j.ServerURL != "" && j.Repository != "" {
		j.RepositoryURL = j.ServerURL + "/" + j.Repository
		if j.RunID != "" {
			j.RunURL = j.RepositoryURL + "/actions/runs/" + j.RunID
		}
		if j.Commit != "" {
			j.CommitURL = j.RepositoryURL + "/commit/" + j.Commit
		}
	}
	return j
}

// gitlab reads GitLab CI's variables.
func gitlab(get func(string) string) Job {
	j := Job{
		Event: get("CI_PIPELINE_SOURCE"), Actor: get("GITLAB_USER_LOGIN"), PullRequest: get("CI_MERGE_REQUEST_IID"),
		Branch: get("CI_COMMIT_BRANCH"), HeadRef: get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"),
		BaseRef: get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"), Draft: get("CI_MERGE_REQUEST_DRAFT") == "true",
		DefaultBranch: get("CI_DEFAULT_BRANCH"), Commit: get("CI_COMMIT_SHA"), Repository: get("CI_PROJECT_ID"),
		ServerURL:     strings.TrimSuffix(get("CI_SERVER_URL"), "/"),
		RepositoryURL: strings.TrimSuffix(get("CI_PROJECT_URL"), "/"),
		API:           get("CI_API_V4_URL"), RunID: get("CI_PIPELINE_ID"), JobID: get("CI_JOB_ID"),
		RunURL: get("CI_PIPELINE_URL"), Workspace: get("CI_PROJECT_DIR"),
		Token: token(get, "STRATA_GITLAB_TOKEN", "GITLAB_TOKEN"),
	}
	if j.RepositoryURL != "" && j.Commit != "" {
		j.CommitURL = j.RepositoryURL + "/-/commit/" + j.Commit
	}
	return j
}

// token is the first of names set to a non-empty value.
func token(get func(string) string, names ...string) Token {
	for _, name := range names {
		if v := get(name); v != "" {
			return Token{name: name, value: v}
		}
	}
	return Token{}
}
