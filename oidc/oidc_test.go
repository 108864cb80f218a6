package oidc

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/strata-iac/strata/oidc/oidctest"
	"github.com/strata-iac/strata/stacks/config"
)

func envOf(kv []string) map[string]string {
	m := map[string]string{}
	for _, e := range kv {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return m
}

// TestAWS: the role is assumed with GitHub's OIDC token for STS's
// audience, then the chained role with those credentials; the engine
// gets the last credentials and the region, each secret listed.
func TestAWS(t *testing.T) {
	srv := oidctest.New(t)
	env := envOf(srv.Env())
	st := &config.OIDCStep{Provider: "aws", Audience: "sts.amazonaws.com", RoleArn: "arn:aws:iam::123456789012:role/ci", Region: "eu-west-1", SessionName: "strata", Duration: 900}
	c, err := Make(context.Background(), st, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Env["AWS_ACCESS_KEY_ID"] != oidctest.AWSKeyID || c.Env["AWS_SECRET_ACCESS_KEY"] != oidctest.AWSSecret ||
		c.Env["AWS_SESSION_TOKEN"] != oidctest.AWSSession || c.Env["AWS_REGION"] != "eu-west-1" {
		t.Errorf("env %v", c.Env)
	}
	for _, s := range []string{oidctest.AWSSecret, oidctest.AWSSession} {
		if !slices.Contains(c.Secrets, s) {
			t.Errorf("%s is not listed as a secret", s)
		}
	}
	want := []string{
		"github token audience=sts.amazonaws.com",
		"aws AssumeRoleWithWebIdentity role=arn:aws:iam::123456789012:role/ci session=strata duration=900",
	}
	if got := srv.Calls(); !slices.Equal(got, want) {
		t.Errorf("calls\n%q\nwant\n%q", got, want)
	}

	st.AssumeRoleArn = "arn:aws:iam::210987654321:role/deploy"
	c, err = Make(context.Background(), st, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Env["AWS_ACCESS_KEY_ID"] != oidctest.AWSChainedKeyID || c.Env["AWS_SECRET_ACCESS_KEY"] != oidctest.AWSChainedSecret {
		t.Errorf("chained env %v", c.Env)
	}
	if got := srv.Calls(); got[len(got)-1] != "aws AssumeRole role=arn:aws:iam::210987654321:role/deploy" {
		t.Errorf("calls %q", got)
	}
}

// TestGCP: the OIDC token for the workload identity provider's audience
// is exchanged at STS, and the federated token for the service
// account's access token.
func TestGCP(t *testing.T) {
	srv := oidctest.New(t)
	st := &config.OIDCStep{Provider: "gcp", Audience: "https://iam.googleapis.com/projects/42/locations/global/workloadIdentityPools/gh/providers/gh", ServiceAccount: "ci@acme.iam.gserviceaccount.com",
		WorkloadIdentityProvider: "projects/42/locations/global/workloadIdentityPools/gh/providers/gh", ProjectID: "acme-prod", Lifetime: 1200}
	c, err := Make(context.Background(), st, envOf(srv.Env()))
	if err != nil {
		t.Fatal(err)
	}
	if c.Env["GOOGLE_OAUTH_ACCESS_TOKEN"] != oidctest.GCPAccessToken || c.Env["GOOGLE_PROJECT"] != "acme-prod" {
		t.Errorf("env %v", c.Env)
	}
	want := []string{
		"github token audience=https://iam.googleapis.com/projects/42/locations/global/workloadIdentityPools/gh/providers/gh",
		"gcp sts audience=//iam.googleapis.com/projects/42/locations/global/workloadIdentityPools/gh/providers/gh",
		"gcp generateAccessToken ci@acme.iam.gserviceaccount.com lifetime=1200s",
	}
	if got := srv.Calls(); !slices.Equal(got, want) {
		t.Errorf("calls\n%q\nwant\n%q", got, want)
	}
}

// TestTokenSources: GitLab's id_tokens variable serves when GitHub's
// request URL is absent; with neither, or a token the cloud refuses, the
// step fails saying what to do.
func TestTokenSources(t *testing.T) {
	srv := oidctest.New(t)
	st := &config.OIDCStep{Provider: "aws", Audience: "sts.amazonaws.com", RoleArn: "arn:aws:iam::1:role/ci", Region: "us-east-1", SessionName: "s", Duration: 3600}
	env := envOf(srv.Env())
	delete(env, "ACTIONS_ID_TOKEN_REQUEST_URL")
	env[TokenVariable] = srv.Token
	if _, err := Make(context.Background(), st, env); err != nil {
		t.Errorf("with %s: %v", TokenVariable, err)
	}
	delete(env, TokenVariable)
	if _, err := Make(context.Background(), st, env); err == nil || !strings.Contains(err.Error(), "id-token: write") {
		t.Errorf("no token: %v", err)
	}
	env[TokenVariable] = "forged"
	if _, err := Make(context.Background(), st, env); err == nil || !strings.Contains(err.Error(), "InvalidIdentityToken") {
		t.Errorf("a refused token: %v", err)
	}
	env = envOf(srv.Env())
	env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = "wrong"
	if _, err := Make(context.Background(), st, env); err == nil || !strings.Contains(err.Error(), "GitHub Actions OIDC token") {
		t.Errorf("a refused request token: %v", err)
	}
}
