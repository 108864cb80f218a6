package oidc

import (
	"context"
	"fmt"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google/externalaccount"

	"github.com/strata-iac/strata/stacks/config"
)

// GCP endpoints a private network (Private Service Connect) replaces.
const (
	gcpSTSVariable = "STRATA_GCP_STS_ENDPOINT"            // default https://sts.googleapis.com
	gcpIAMVariable = "STRATA_GCP_IAMCREDENTIALS_ENDPOINT" // default https://iamcredentials.googleapis.com
)

// gcpCredentials exchanges the OIDC token at Google's STS for a federated
// token, and that for the service account's access token.
func gcpCredentials(ctx context.Context, st *config.OIDCStep, env map[string]string) (*Credentials, error) {
	provider := "//iam.googleapis.com/" + st.WorkloadIdentityProvider
	stsURL, iamURL := env[gcpSTSVariable], env[gcpIAMVariable]
	if stsURL == "" {
		stsURL = "https://sts.googleapis.com"
	}
	if iamURL == "" {
		iamURL = "https://iamcredentials.googleapis.com"
	}
	ts, err := externalaccount.NewTokenSource(context.WithValue(ctx, oauth2.HTTPClient, client), externalaccount.Config{
		Audience:                       provider,
		SubjectTokenType:               "urn:ietf:params:oauth:token-type:jwt",
		TokenURL:                       stsURL + "/v1/token",
		ServiceAccountImpersonationURL: iamURL + "/v1/projects/-/serviceAccounts/" + st.ServiceAccount + ":generateAccessToken",
		ServiceAccountImpersonationLifetimeSeconds: st.Lifetime,
		Scopes:               []string{"https://www.googleapis.com/auth/cloud-platform"},
		SubjectTokenSupplier: supplier{env: env, audience: st.Audience},
	})
	if err != nil {
		return nil, err
	}
	tok, err := ts.Token()
	if err != nil {
		return nil, fmt.Errorf("impersonating %s through %s: %w", st.ServiceAccount, st.WorkloadIdentityProvider, err)
	}
	c := &Credentials{
		Env:     map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": tok.AccessToken, "CLOUDSDK_AUTH_ACCESS_TOKEN": tok.AccessToken},
		Secrets: []string{tok.AccessToken},
	}
	if st.ProjectID != "" {
		for _, k := range []string{"GOOGLE_PROJECT", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"} {
			c.Env[k] = st.ProjectID
		}
	}
	return c, nil
}

// supplier gives the federation the CI's OIDC token.
type supplier struct {
	env      map[string]string
	audience string
}

func (s supplier) SubjectToken(ctx context.Context, _ externalaccount.SupplierOptions) (string, error) {
	return idToken(ctx, s.env, s.audience)
}
