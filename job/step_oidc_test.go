package job

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// TestOIDCEnv: the exchange reads the step's environment with strata's
// credentials: over what a unit's steps set, under what hooks set.
func TestOIDCEnv(t *testing.T) {
	st := stacks.RunStep{Type: "oidc", OIDC: &config.OIDCStep{Provider: "aws"}}
	in := testInput(st, "plan step 1 (oidc)", nil)
	in.Environ = []string{"ACTIONS_ID_TOKEN_REQUEST_TOKEN=from-ci", "STRATA_OIDC_TOKEN=jwt", "OTHER=x"}
	in.Set["STRATA_OIDC_TOKEN"] = "from-step"
	in.Set["TF_VAR_a"] = "1"
	env := (&oidcStep{}).env(in)
	if env["STRATA_OIDC_TOKEN"] != "jwt" || env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] != "from-ci" || env["PATH"] != "/bin" {
		t.Errorf("unit env: %v", env)
	}
	if _, ok := env["OTHER"]; ok {
		t.Error("a variable of strata's environment that is no credential reached the exchange")
	}
	if _, ok := env["TF_VAR_a"]; ok {
		t.Error("a TF_VAR_ value reached a unit's exchange")
	}
	hook := testHookInput(st, "hooks.all.pre[0]", nil)
	hook.Environ = in.Environ
	hook.Set["STRATA_OIDC_TOKEN"] = "from-hook"
	henv := (&oidcStep{}).env(hook)
	if henv["STRATA_OIDC_TOKEN"] != "from-hook" || henv["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] != "from-ci" || henv["STRATA_ROOT"] != "/repo" {
		t.Errorf("hook env: %v", henv)
	}
	if _, ok := hook.Env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"]; ok {
		t.Error("the exchange's env was written into the hooks' own")
	}
}

// TestOIDCStepRun: credentials made are what the step sets and masks,
// with a note; no token outside CI skips the step, in CI fails it; a
// failed exchange fails it.
func TestOIDCStepRun(t *testing.T) {
	creds := &oidc.Credentials{Env: map[string]string{"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "ST"},
		Secrets: []string{"SK", "ST"}}
	noToken := fmt.Errorf("%w: give the job a token", oidc.ErrNoToken)
	for _, tc := range []struct {
		name    string
		hook    bool
		environ []string
		creds   *oidc.Credentials
		err     error
		wantErr bool
		skipped bool
		note    string
	}{
		{name: "made", creds: creds, note: "plan step 1 (oidc): aws credentials set"},
		{name: "hook made", hook: true, creds: creds, note: "hooks.all.pre[0]: aws credentials set"},
		{name: "no token outside CI", err: noToken, skipped: true},
		{name: "no token in CI", environ: []string{"CI=true"}, err: noToken, wantErr: true},
		{name: "CI=false is outside CI", environ: []string{"CI=false"}, err: noToken, skipped: true},
		{name: "exchange refused", err: errors.New("AccessDenied"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := stacks.RunStep{Type: "oidc", OIDC: &config.OIDCStep{Provider: "aws", RoleArn: "arn:aws:iam::1:role/r"}}
			x := &fakeExec{creds: tc.creds, credErr: tc.err}
			in := testInput(st, "plan step 1 (oidc)", x)
			if tc.hook {
				in = testHookInput(st, "hooks.all.pre[0]", x)
			}
			in.Environ = tc.environ
			out := (&oidcStep{}).run(context.Background(), in)
			if (out.Err != nil) != tc.wantErr || out.NoToken != tc.skipped {
				t.Fatalf("err %v skipped %t, want error %t skipped %t", out.Err, out.NoToken, tc.wantErr, tc.skipped)
			}
			if len(out.Reports) != 1 || out.Reports[0].Name != in.Name || out.Reports[0].OK == tc.wantErr || !out.Reports[0].StartedAt.Equal(testClock()) {
				t.Errorf("reports = %+v", out.Reports)
			}
			if x.credEnv == nil {
				t.Error("the exchange was given no environment")
			}
			if tc.creds == nil {
				if out.Set != nil || out.Secrets != nil || out.Note != "" {
					t.Errorf("a step without credentials adds %v %v %q", out.Set, out.Secrets, out.Note)
				}
				return
			}
			if !reflect.DeepEqual(out.Set, creds.Env) || !reflect.DeepEqual(out.Secrets, creds.Secrets) || out.Note != tc.note {
				t.Errorf("set %v secrets %v note %q", out.Set, out.Secrets, out.Note)
			}
		})
	}
}

// TestNoTokenOutsideCI: only a missing token, outside CI, skips.
func TestNoTokenOutsideCI(t *testing.T) {
	for _, tc := range []struct {
		err  error
		env  []string
		want bool
	}{
		{oidc.ErrNoToken, nil, true},
		{fmt.Errorf("wrapped: %w", oidc.ErrNoToken), []string{"PATH=/bin"}, true},
		{oidc.ErrNoToken, []string{"GITHUB_ACTIONS=true"}, false},
		{oidc.ErrNoToken, []string{"GITLAB_CI=true"}, false},
		{oidc.ErrNoToken, []string{"CI=0"}, true},
		{errors.New("other"), nil, false},
		{nil, nil, false},
	} {
		if got := noTokenOutsideCI(tc.err, tc.env); got != tc.want {
			t.Errorf("noTokenOutsideCI(%v, %q) = %t, want %t", tc.err, tc.env, got, tc.want)
		}
	}
}
