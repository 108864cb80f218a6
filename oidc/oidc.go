// Package oidc makes cloud credentials from a CI job's OIDC token
// (docs/behaviour.md#oidc): AWS through STS's AssumeRoleWithWebIdentity,
// GCP through workload identity federation, each with the cloud's own
// SDK. What it returns is the environment a unit's engine reads, and the
// values that must never be printed.
package oidc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/strata-iac/strata/stacks/config"
)

// TokenVariable holds a job's OIDC token where the CI gives it as a
// variable: GitLab's id_tokens.
const TokenVariable = "STRATA_OIDC_TOKEN"

// Credentials are what an oidc step sets: variables for the engine, and
// which of their values are secrets.
type Credentials struct {
	Env     map[string]string
	Secrets []string
}

// client is the HTTP client of every call: a cloud that does not answer
// fails the step, it does not hang the run.
var client = &http.Client{Timeout: 60 * time.Second}

// Make exchanges the CI's OIDC token for the step's cloud credentials.
// env is the step's environment: where the token comes from, and the
// endpoints (AWS_ENDPOINT_URL_STS, …) a private network sets.
func Make(ctx context.Context, st *config.OIDCStep, env map[string]string) (*Credentials, error) {
	if env["ACTIONS_ID_TOKEN_REQUEST_URL"] == "" && env[TokenVariable] == "" {
		// Said before any exchange: a cloud's client wraps what its
		// token supplier says as text.
		return nil, noToken(st.Audience)
	}
	switch st.Provider {
	case "aws":
		return awsCredentials(ctx, st, env)
	case "gcp":
		return gcpCredentials(ctx, st, env)
	}
	return nil, fmt.Errorf("oidc provider %q: expected aws or gcp", st.Provider)
}

// ErrNoToken is an oidc step with no OIDC token to exchange: outside CI
// the step is skipped, in CI it fails (docs/behaviour.md#oidc).
var ErrNoToken = errors.New("no OIDC token")

// idToken is the job's OIDC token for an audience: asked of GitHub
// Actions (the job needs `permissions: id-token: write`), else the
// STRATA_OIDC_TOKEN variable (GitLab's id_tokens).
func idToken(ctx context.Context, env map[string]string, audience string) (string, error) {
	if env["ACTIONS_ID_TOKEN_REQUEST_URL"] != "" {
		gha := githubactions.New(githubactions.WithGetenv(func(k string) string { return env[k] }), githubactions.WithHTTPClient(client))
		tok, err := gha.GetIDToken(ctx, audience)
		if err != nil {
			return "", fmt.Errorf("the GitHub Actions OIDC token: %w", err)
		}
		return tok, nil
	}
	if tok := env[TokenVariable]; tok != "" {
		return tok, nil
	}
	return "", noToken(audience)
}

// noToken is ErrNoToken, with how a CI job gets a token for audience.
func noToken(audience string) error {
	return fmt.Errorf("%w: on GitHub Actions give the job `permissions: id-token: write`; on GitLab declare `id_tokens: {"+
		TokenVariable+": {aud: "+audience+"}}` on the job (ci emit gitlab does)", ErrNoToken)
}
