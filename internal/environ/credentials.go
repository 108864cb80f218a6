package environ

import (
	"slices"
	"strings"
)

// Credentials are the variables strata reads credentials of its own from:
// the forge tokens it reads the forge with and the OIDC tokens it
// exchanges. They reach an engine, a hook or a step only when the config
// names them, and their values are masked wherever output is shown or
// kept (docs/behaviour.md#credentials).
var Credentials = []string{
	"GITHUB_TOKEN", "STRATA_GITHUB_TOKEN", "GITLAB_TOKEN", "STRATA_GITLAB_TOKEN", "CI_JOB_TOKEN",
	"STRATA_OIDC_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
}

// IsCredential reports whether name is one of Credentials.
func IsCredential(name string) bool { return slices.Contains(Credentials, name) }

// CredentialsOf are the credentials set in an environment list, by name.
func CredentialsOf(environ []string) map[string]string {
	out := map[string]string{}
	for _, name := range Credentials {
		if v, ok := Lookup(environ, name); ok {
			out[name] = v
		}
	}
	return out
}

// CredentialValues are the non-empty values of the credentials set in an
// environment list, for masking.
func CredentialValues(environ []string) []string {
	var out []string
	for _, v := range CredentialsOf(environ) {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// WithoutCredentials is an environment list with the credentials taken
// out.
func WithoutCredentials(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !IsCredential(k) {
			out = append(out, kv)
		}
	}
	return out
}
