// Package oidctest serves, on loopback, what oidc steps talk to: GitHub
// Actions' OIDC token endpoint, AWS STS and Google's STS and IAM
// credentials, with the shapes of their real responses. Tests of the
// oidc package and of runs with oidc steps share it.
package oidctest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the fake clouds and CI.
type Server struct {
	URL string
	// Token is the OIDC token the CI hands out; RequestToken the bearer
	// the CI gives the job to ask for it.
	Token, RequestToken string
	mu                  sync.Mutex
	calls               []string
}

// Secrets the fakes hand out, which must never reach a log.
const (
	AWSKeyID         = "ASIAFAKEWEBIDENTITY1"
	AWSSecret        = "web-identity-secret-8c1d"
	AWSSession       = "web-identity-session-4f2a"
	AWSChainedKeyID  = "ASIAFAKECHAINED00002"
	AWSChainedSecret = "chained-secret-77ab"
	GCPFederated     = "federated-token-19e0"
	GCPAccessToken   = "ya29.fake-access-token-5d3c"
)

// New starts the fakes; they stop with the test.
func New(t testing.TB) *Server {
	s := &Server{Token: "eyJ.fake-oidc-token.sig", RequestToken: "gha-request-token"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /gha/token", s.githubToken)
	mux.HandleFunc("POST /aws/", s.sts)
	mux.HandleFunc("POST /gcp-sts/v1/token", s.googleSTS)
	mux.HandleFunc("POST /gcp-iam/v1/projects/-/serviceAccounts/", s.generateAccessToken)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Env is what a CI job's environment holds to reach the fakes: GitHub's
// token request variables and the clouds' endpoints.
func (s *Server) Env() []string {
	return []string{
		"ACTIONS_ID_TOKEN_REQUEST_URL=" + s.URL + "/gha/token?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN=" + s.RequestToken,
		"AWS_ENDPOINT_URL_STS=" + s.URL + "/aws/",
		"STRATA_GCP_STS_ENDPOINT=" + s.URL + "/gcp-sts",
		"STRATA_GCP_IAMCREDENTIALS_ENDPOINT=" + s.URL + "/gcp-iam",
	}
}

// Calls are the calls served, in order, as "what detail".
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func (s *Server) record(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

// githubToken is GitHub Actions' ACTIONS_ID_TOKEN_REQUEST_URL.
func (s *Server) githubToken(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+s.RequestToken {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	s.record("github token audience=%s", r.URL.Query().Get("audience"))
	json.NewEncoder(w).Encode(map[string]any{"count": 1, "value": s.Token})
}

// sts is AWS STS's query API.
func (s *Server) sts(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f := r.PostForm
	expires := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	w.Header().Set("Content-Type", "text/xml")
	switch f.Get("Action") {
	case "AssumeRoleWithWebIdentity":
		if f.Get("WebIdentityToken") != s.Token {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, stsError("InvalidIdentityToken", "Couldn't retrieve verification key from your identity provider"))
			return
		}
		s.record("aws AssumeRoleWithWebIdentity role=%s session=%s duration=%s", f.Get("RoleArn"), f.Get("RoleSessionName"), f.Get("DurationSeconds"))
		fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>repo:acme/infra:ref:refs/heads/main</SubjectFromWebIdentityToken>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/ci/%[1]s</Arn>
      <AssumedRoleId>AROACLKWSDQRAOEXAMPLE:%[1]s</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <SessionToken>%[2]s</SessionToken>
      <SecretAccessKey>%[3]s</SecretAccessKey>
      <Expiration>%[4]s</Expiration>
      <AccessKeyId>%[5]s</AccessKeyId>
    </Credentials>
    <Provider>arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com</Provider>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`, f.Get("RoleSessionName"), AWSSession, AWSSecret, expires, AWSKeyID)
	case "AssumeRole":
		if !strings.Contains(r.Header.Get("Authorization"), "Credential="+AWSKeyID+"/") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, stsError("AccessDenied", "not signed with the web identity's credentials"))
			return
		}
		s.record("aws AssumeRole role=%s", f.Get("RoleArn"))
		fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::210987654321:assumed-role/deploy/terrateam</Arn>
      <AssumedRoleId>ARO123EXAMPLE123:terrateam</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>%s</AccessKeyId>
      <SecretAccessKey>%s</SecretAccessKey>
      <SessionToken>chained-session</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`, AWSChainedKeyID, AWSChainedSecret, expires)
	default:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, stsError("InvalidAction", "unknown action"))
	}
}

func stsError(code, msg string) string {
	return fmt.Sprintf(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>1</RequestId></ErrorResponse>`, code, msg)
}

// googleSTS is sts.googleapis.com's token exchange.
func (s *Server) googleSTS(w http.ResponseWriter, r *http.Request) {
	// The token exchange is form-encoded (RFC 8693).
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := map[string]string{"subject_token": r.PostForm.Get("subject_token"), "audience": r.PostForm.Get("audience")}
	w.Header().Set("Content-Type", "application/json")
	if req["subject_token"] != s.Token {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant","error_description":"The audience in ID Token does not match the expected audience."}`)
		return
	}
	s.record("gcp sts audience=%s", req["audience"])
	fmt.Fprintf(w, `{"access_token":%q,"issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":3600}`, GCPFederated)
}

// generateAccessToken is iamcredentials.googleapis.com's.
func (s *Server) generateAccessToken(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+GCPFederated {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	var req struct {
		Lifetime string `json:"lifetime"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	sa := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/gcp-iam/v1/projects/-/serviceAccounts/"), ":generateAccessToken")
	s.record("gcp generateAccessToken %s lifetime=%s", sa, req.Lifetime)
	fmt.Fprintf(w, `{"accessToken":%q,"expireTime":%q}`, GCPAccessToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
}
