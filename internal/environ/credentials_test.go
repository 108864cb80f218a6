package environ

import (
	"reflect"
	"testing"
)

func TestCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		environ []string
		without []string
		values  []string
	}{
		{"none", []string{"PATH=/bin", "HOME=/h"}, []string{"PATH=/bin", "HOME=/h"}, nil},
		{"forge tokens", []string{"GITHUB_TOKEN=ghs-1", "PATH=/bin", "STRATA_GITLAB_TOKEN=glpat-2", "CI_JOB_TOKEN=job-3"},
			[]string{"PATH=/bin"}, []string{"ghs-1", "glpat-2", "job-3"}},
		{"oidc tokens, not the request URL", []string{"ACTIONS_ID_TOKEN_REQUEST_URL=https://x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=req-4", "STRATA_OIDC_TOKEN=eyJ5"},
			[]string{"ACTIONS_ID_TOKEN_REQUEST_URL=https://x"}, []string{"eyJ5", "req-4"}},
		{"the last entry wins; an empty one masks nothing", []string{"GITLAB_TOKEN=old", "GITLAB_TOKEN=new", "STRATA_GITHUB_TOKEN="},
			[]string{}, []string{"new"}},
		{"a name that only starts like one", []string{"GITHUB_TOKEN_FILE=/t", "MY_GITHUB_TOKEN=x"}, []string{"GITHUB_TOKEN_FILE=/t", "MY_GITHUB_TOKEN=x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := WithoutCredentials(tt.environ); !reflect.DeepEqual(got, tt.without) {
				t.Errorf("WithoutCredentials = %q, want %q", got, tt.without)
			}
			got := map[string]bool{}
			for _, v := range CredentialValues(tt.environ) {
				got[v] = true
			}
			want := map[string]bool{}
			for _, v := range tt.values {
				want[v] = true
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("CredentialValues = %v, want %v", got, want)
			}
			for k, v := range CredentialsOf(tt.environ) {
				if !IsCredential(k) {
					t.Errorf("CredentialsOf has %s=%s", k, v)
				}
			}
		})
	}
}
