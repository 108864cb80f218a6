package report

import (
	"github.com/strata-iac/strata/internal/ciplatform"
)

// Service is the CI service a run is in, when strata knows its forge:
// ciplatform.GitHub, ciplatform.GitLab, else ciplatform.None.
type Service = ciplatform.Platform

// The services: no forge strata knows (outside CI, or on another CI),
// GitHub Actions and GitLab CI.
const (
	NoService = ciplatform.None
	GitHub    = ciplatform.GitHub
	GitLab    = ciplatform.GitLab
)

// ServiceOf reads the CI service from an environment.
func ServiceOf(getenv func(string) string) Service {
	return ciplatform.From(getenv).Forge()
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
func CIFromEnv(env []string) *CIReport { return CIOf(ciplatform.Read(env)) }

// CIOf is what ci says of the run; nil outside GitHub Actions and GitLab
// CI.
func CIOf(ci ciplatform.CI) *CIReport {
	if ci.Forge() == ciplatform.None {
		return nil
	}
	j := ci.Job()
	return &CIReport{Service: ci.Platform.String(), Commit: j.Commit, CommitURL: j.CommitURL, Base: j.BaseRef, RunURL: j.RunURL}
}
