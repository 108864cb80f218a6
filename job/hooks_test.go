package job

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// testRun is a run whose console writes to out.
func testRun(out *bytes.Buffer) *Run {
	return &Run{Console: console.New(out, out, false, false), Now: testClock,
		TFVars: map[string]string{"from_strata": "a"}, Environ: []string{"USER=me", "GITHUB_TOKEN=ghp"}}
}

// hook is a hook step.
func hook(where string, st stacks.RunStep) stacks.HookStep {
	if st.RunOn == "" {
		st.RunOn = "success"
	}
	return stacks.HookStep{RunStep: st, Where: where}
}

// TestNewHooks: the hooks' environment is strata's, with its TF_VAR_
// values and the root and tmp dir under strata's and Terrateam's names;
// the masker starts with strata's credentials.
func TestNewHooks(t *testing.T) {
	var out bytes.Buffer
	h := testRun(&out).NewHooks("/repo", "/tmp/h", map[string]string{"PATH": "/bin"})
	want := map[string]string{"PATH": "/bin", "TF_VAR_from_strata": "a", "STRATA_ROOT": "/repo", "TERRATEAM_ROOT": "/repo",
		"STRATA_TMPDIR": "/tmp/h", "TERRATEAM_TMPDIR": "/tmp/h"}
	if !reflect.DeepEqual(h.env, want) {
		t.Errorf("hooks env = %v, want %v", h.env, want)
	}
	if got := h.Masker.Mask("token ghp"); strings.Contains(got, "ghp") {
		t.Errorf("a credential is not masked: %q", got)
	}
	in := h.input(hook("hooks.all.pre[0]", stacks.RunStep{Type: "run"}))
	if !in.Hook || in.Dir != "/repo" || in.Name != "hooks.all.pre[0]" || in.Who != "hooks" || in.Vars != nil || in.UnitID != "" {
		t.Errorf("hook input = %+v", in)
	}
}

// TestHooksRun: hooks run through the step kinds: what an env hook sets
// reaches the next hook and the units (Set), its secrets the masker and
// Sensitive; a failure is the first error, named by the hook, and stops
// the hooks that need success.
func TestHooksRun(t *testing.T) {
	var out bytes.Buffer
	h := testRun(&out).NewHooks("/repo", "/tmp/h", map[string]string{"PATH": "/bin"})
	x := &fakeExec{stdout: "TOKEN=abc123\nREGION=eu\n"}
	h.exec = x
	steps := []stacks.HookStep{
		hook("hooks.all.pre[0]", stacks.RunStep{Type: "env", Method: "source", Sensitive: true, Cmd: []string{"get-secrets"}}),
		hook("hooks.all.pre[1]", stacks.RunStep{Type: "run", Cmd: []string{"sh", "-c", "use $TOKEN"}, Env: []stacks.EnvVar{{Key: "R", Value: "${REGION}"}}}),
		hook("hooks.all.pre[2]", stacks.RunStep{Type: "slack"}),
		hook("hooks.all.pre[3]", stacks.RunStep{Type: "run", Cmd: []string{"only-on-failure"}, RunOn: "failure"}),
	}
	if err := h.Run(context.Background(), steps, false); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h.Set, map[string]string{"TOKEN": "abc123", "REGION": "eu"}) {
		t.Errorf("Set = %v", h.Set)
	}
	if !reflect.DeepEqual(h.Sensitive, []string{"eu", "abc123"}) {
		t.Errorf("Sensitive = %q", h.Sensitive)
	}
	if strings.Contains(h.Masker.Mask("abc123"), "abc123") {
		t.Error("a sensitive value is not masked")
	}
	if len(x.procs) != 2 || len(h.Steps) != 2 {
		t.Fatalf("%d processes, %d steps; want the env and the run hooks", len(x.procs), len(h.Steps))
	}
	run := x.procs[1]
	if env := envOf(run.env); env["R"] != "eu" || env["TOKEN"] != "abc123" || env["TF_VAR_from_strata"] != "a" {
		t.Errorf("the run hook's env: %v", env)
	}
	if !reflect.DeepEqual(run.argv, []string{"sh", "-c", "use $TOKEN"}) || run.dir != "/repo" || !run.errSide || run.name != "hooks.all.pre[1]" {
		t.Errorf("the run hook's process: %+v", run)
	}
	if !strings.Contains(out.String(), "[hooks] hooks.all.pre[0]: set REGION, TOKEN") {
		t.Errorf("notes: %q", out.String())
	}

	x.err = errors.New("exit status 3")
	failing := []stacks.HookStep{
		hook("hooks.plan.post[0]", stacks.RunStep{Type: "run", Cmd: []string{"a"}}),
		hook("hooks.plan.post[1]", stacks.RunStep{Type: "run", Cmd: []string{"b"}}),
		hook("hooks.plan.post[2]", stacks.RunStep{Type: "run", Cmd: []string{"c"}, RunOn: "always"}),
	}
	x.procs = nil
	err := h.Run(context.Background(), failing, false)
	if err == nil || err.Error() != "hooks.plan.post[0] (run): a: exit status 3" {
		t.Errorf("first failure: %v", err)
	}
	if len(x.procs) != 2 || x.procs[1].argv[0] != "c" {
		t.Errorf("after a failure only always hooks run: %d processes", len(x.procs))
	}

	x.procs, x.err = nil, nil
	if err := h.Run(context.Background(), []stacks.HookStep{hook("hooks.apply.post[0]", stacks.RunStep{Type: "run", Cmd: []string{"notify"}, RunOn: "failure"})}, true); err != nil || len(x.procs) != 1 {
		t.Errorf("a failure hook after failed units: %v, %d processes", err, len(x.procs))
	}
}

// TestHooksRunErrors: a hook's unknown name is named with the hook's
// words; an interrupted run stops before the next hook.
func TestHooksRunErrors(t *testing.T) {
	var out bytes.Buffer
	h := testRun(&out).NewHooks("/repo", "/tmp/h", map[string]string{})
	x := &fakeExec{}
	h.exec = x
	err := h.Run(context.Background(), []stacks.HookStep{hook("hooks.all.pre[0]", stacks.RunStep{Type: "run", Cmd: []string{"echo", "$USER"}})}, false)
	if err == nil || !strings.Contains(err.Error(), `hooks.all.pre[0] (run): unknown variable "USER" in hooks.all.pre[0].cmd: a hook's cmd takes only strata's own values`) {
		t.Errorf("unknown name in a hook's cmd: %v", err)
	}
	err = h.Run(context.Background(), []stacks.HookStep{hook("hooks.all.pre[0]", stacks.RunStep{Type: "run", Cmd: []string{"x"}, Env: []stacks.EnvVar{{Key: "K", Value: "$NOPE"}}})}, false)
	if err == nil || !strings.Contains(err.Error(), `unknown variable "NOPE" in hooks.all.pre[0].env.K: not set by a hook nor in the environment`) {
		t.Errorf("unknown name in a hook's env: %v", err)
	}
	if len(x.procs) != 0 {
		t.Errorf("a hook that could not be built ran: %d", len(x.procs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = h.Run(ctx, []stacks.HookStep{hook("hooks.all.pre[0]", stacks.RunStep{Type: "run", Cmd: []string{"x"}})}, false)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "hooks.all.pre[0]: ") || len(x.procs) != 0 {
		t.Errorf("interrupted: %v, %d processes", err, len(x.procs))
	}
}

// TestHooksOIDC: an oidc hook's credentials reach every unit (Set), all
// its secrets masked; without a token outside CI it is skipped, said
// once.
func TestHooksOIDC(t *testing.T) {
	var out bytes.Buffer
	h := testRun(&out).NewHooks("/repo", "/tmp/h", map[string]string{})
	x := &fakeExec{creds: &oidc.Credentials{Env: map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": "ya29"}, Secrets: []string{"ya29"}}}
	h.exec = x
	st := hook("hooks.all.pre[0]", stacks.RunStep{Type: "oidc", OIDC: &config.OIDCStep{Provider: "gcp"}})
	if err := h.Run(context.Background(), []stacks.HookStep{st}, false); err != nil {
		t.Fatal(err)
	}
	if h.Set["GOOGLE_OAUTH_ACCESS_TOKEN"] != "ya29" || !reflect.DeepEqual(h.Sensitive, []string{"ya29"}) {
		t.Errorf("Set %v Sensitive %v", h.Set, h.Sensitive)
	}
	if len(h.Steps) != 1 || h.Steps[0].Name != "hooks.all.pre[0]" || !h.Steps[0].OK {
		t.Errorf("steps: %+v", h.Steps)
	}
	if !strings.Contains(out.String(), "[hooks] hooks.all.pre[0]: gcp credentials set") {
		t.Errorf("notes: %q", out.String())
	}
	x.creds, x.credErr = nil, oidc.ErrNoToken
	out.Reset()
	for range 2 {
		if err := h.Run(context.Background(), []stacks.HookStep{st}, false); err != nil {
			t.Fatalf("no token outside CI: %v", err)
		}
	}
	if n := strings.Count(out.String(), "no OIDC token outside CI"); n != 1 {
		t.Errorf("the skip is said %d times: %q", n, out.String())
	}
	if last := h.Steps[len(h.Steps)-1]; last.Name != "hooks.all.pre[0]" || !last.OK || len(h.Steps) != 3 {
		t.Errorf("a skipped step's report: %+v", last)
	}
}
