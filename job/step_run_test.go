package job

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// TestRunStepBuild: what a run step builds: its argv with stack variables
// and strata's values substituted (a shell's script as written), its
// environment, and how its failure counts.
func TestRunStepBuild(t *testing.T) {
	gate := &config.Gate{Token: "t", AnyOf: []string{"alice"}}
	for _, tc := range []struct {
		name   string
		st     stacks.RunStep
		hook   bool
		argv   []string
		env    map[string]string
		err    string
		capt   bool
		ignore bool
	}{
		{name: "argv substituted", st: stacks.RunStep{Cmd: []string{"echo", "${region}", "$STRATA_DIR", "$$HOME"}},
			argv: []string{"echo", "eu-west-1", "net", "$HOME"}},
		{name: "a shell's script is data", st: stacks.RunStep{Cmd: []string{"sh", "-c", "echo $USER ${region}", "${region}"}},
			argv: []string{"sh", "-c", "echo $USER ${region}", "eu-west-1"}},
		{name: "env and TF_VAR_ values", st: stacks.RunStep{Cmd: []string{"true"}, Env: []stacks.EnvVar{{Key: "A", Value: "${USER}"}, {Key: "TF_VAR_size", Value: "7"}}},
			argv: []string{"true"}, env: map[string]string{"A": "me", "TF_VAR_size": "7", "TF_VAR_from_strata": "a", "PATH": "/bin"}},
		{name: "the environment is not in a cmd", st: stacks.RunStep{Cmd: []string{"echo", "$USER"}},
			err: `unknown variable "USER" in plan step 1 (run).cmd (stack prod): a step's cmd takes only stack variables`},
		{name: "empty cmd", st: stacks.RunStep{}, err: "plan step 1 (run): empty cmd"},
		{name: "env read before cmd", st: stacks.RunStep{Cmd: []string{"$NOPE1"}, Env: []stacks.EnvVar{{Key: "K", Value: "$NOPE2"}}},
			err: `"NOPE2"`},
		{name: "capture and ignore_errors", st: stacks.RunStep{Cmd: []string{"x"}, CaptureOutput: true, IgnoreErrors: true},
			argv: []string{"x"}, capt: true, ignore: true},
		{name: "a gate decides, not ignore_errors", st: stacks.RunStep{Cmd: []string{"x"}, IgnoreErrors: true, Gate: gate},
			argv: []string{"x"}},
		{name: "hook: cmd read before env", hook: true, st: stacks.RunStep{Cmd: []string{"$NOPE1"}, Env: []stacks.EnvVar{{Key: "K", Value: "$NOPE2"}}},
			err: `unknown variable "NOPE1" in hooks.all.pre[0].cmd: a hook's cmd`},
		{name: "hook: strata's values in cmd", hook: true, st: stacks.RunStep{Cmd: []string{"ls", "${STRATA_TMPDIR}"}, IgnoreErrors: true, Gate: gate},
			argv: []string{"ls", "/tmp/s"}, ignore: true, env: map[string]string{"TF_VAR_from_strata": "a"}},
		{name: "hook: env from what hooks set", hook: true, st: stacks.RunStep{Cmd: []string{"x"}, Env: []stacks.EnvVar{{Key: "K", Value: "${SET_BEFORE}-${GITHUB_TOKEN}"}}},
			argv: []string{"x"}, env: map[string]string{"K": "b-ghp", "SET_BEFORE": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.st.Type = "run"
			in := testInput(tc.st, "plan step 1 (run)", nil)
			if tc.hook {
				in = testHookInput(tc.st, "hooks.all.pre[0]", nil)
				in.Set["SET_BEFORE"] = "b"
			}
			p, err := (&runStep{}).build(in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.argv, tc.argv) {
				t.Errorf("argv = %q, want %q", p.argv, tc.argv)
			}
			env := envOf(p.env)
			for k, v := range tc.env {
				if env[k] != v {
					t.Errorf("env[%s] = %q, want %q", k, env[k], v)
				}
			}
			if p.capture != tc.capt || p.ignoreErrors != tc.ignore || p.stdout != nil {
				t.Errorf("capture %t ignore %t stdout %v, want %t %t nil", p.capture, p.ignoreErrors, p.stdout, tc.capt, tc.ignore)
			}
			if p.dir != in.Dir || p.name != in.Name {
				t.Errorf("dir %q name %q", p.dir, p.name)
			}
		})
	}
}

// TestRunStepRun: a run step reports its process and fails with it; a
// failure in the plan workflow of a step with a gate raises the gate,
// its error masked, and the unit goes on; in the apply workflow, or
// interrupted, it fails.
func TestRunStepRun(t *testing.T) {
	x := &fakeExec{}
	in := testInput(stacks.RunStep{Type: "run", Cmd: []string{"true"}}, "plan step 1 (run)", x)
	out := (&runStep{}).run(context.Background(), in)
	if out.Err != nil || len(out.Reports) != 1 || !out.Reports[0].OK || out.Reports[0].Name != "run" || len(x.procs) != 1 || out.Gate != nil {
		t.Errorf("a run that ends well: %+v, %d processes", out, len(x.procs))
	}

	gate := &config.Gate{Token: "sec", Name: "security", AnyOf: []string{"alice"}, AnyOfCount: 1}
	failing := stacks.RunStep{Type: "run", Cmd: []string{"scan"}, Gate: gate}
	x = &fakeExec{err: errors.New("scan: exit status 1: found s3cret")}
	in = testInput(failing, "plan step 3 (run)", x)
	in.Masker.Add("s3cret")
	out = (&runStep{}).run(context.Background(), in)
	if out.Err != nil || out.Gate == nil {
		t.Fatalf("a gated failure in plan: err %v, gate %v", out.Err, out.Gate)
	}
	g := out.Gate
	if g.Step != "plan step 3 (run)" || g.Token != "sec" || g.Name != "security" || !reflect.DeepEqual(g.AnyOf, []string{"alice"}) || g.AnyOfCount != 1 {
		t.Errorf("gate = %+v", g)
	}
	if strings.Contains(g.Error, "s3cret") || !strings.Contains(g.Error, "found") {
		t.Errorf("the gate's error is not masked: %q", g.Error)
	}
	if len(out.Reports) != 1 || out.Reports[0].OK {
		t.Errorf("the failed step's report: %+v", out.Reports)
	}

	in = testInput(failing, "apply step 2 (run)", &fakeExec{err: errors.New("exit 1")})
	if out := (&runStep{}).run(context.Background(), in); out.Err == nil || out.Gate != nil {
		t.Errorf("a gated failure in apply: %+v", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in = testInput(failing, "plan step 3 (run)", &fakeExec{err: errors.New("interrupted")})
	if out := (&runStep{}).run(ctx, in); out.Err == nil || out.Gate != nil {
		t.Errorf("an interrupted gated step: %+v", out)
	}
	x = &fakeExec{}
	bad := testInput(stacks.RunStep{Type: "run", Cmd: []string{"$NOPE"}}, "plan step 1 (run)", x)
	if out := (&runStep{}).run(context.Background(), bad); out.Err == nil || len(out.Reports) != 0 || len(x.procs) != 0 {
		t.Errorf("a step whose cmd cannot be built ran: %+v, %d processes", out, len(x.procs))
	}
}

// TestSubstituteCmdShells: each argument is substituted, but for a shell's
// script; the first unknown name is returned.
func TestSubstituteCmdShells(t *testing.T) {
	lookup := func(name string) (string, bool) {
		v, ok := map[string]string{"A": "a", "B": "b b"}[name]
		return v, ok
	}
	for _, tc := range []struct {
		argv, want []string
		unknown    string
	}{
		{argv: []string{"echo", "$A", "${B}"}, want: []string{"echo", "a", "b b"}},
		{argv: []string{"bash", "-c", "echo $A $NOPE", "$A"}, want: []string{"bash", "-c", "echo $A $NOPE", "a"}},
		{argv: []string{"/bin/sh", "-ec", "$X"}, want: []string{"/bin/sh", "-ec", "$X"}},
		{argv: []string{"python", "-c", "$A"}, want: []string{"python", "-c", "a"}},
		{argv: []string{"echo", "$NOPE"}, unknown: "NOPE"},
		{argv: []string{"sh", "script.sh", "$Z"}, unknown: "Z"},
		{argv: []string{}, want: []string{}},
	} {
		got, name, ok := substituteCmd(tc.argv, lookup)
		if tc.unknown != "" {
			if ok || name != tc.unknown {
				t.Errorf("substituteCmd(%q) = %q %q %t, want unknown %q", tc.argv, got, name, ok, tc.unknown)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("substituteCmd(%q) = %q %t, want %q", tc.argv, got, ok, tc.want)
		}
	}
}

// TestShellScriptIndex: where a shell's script stands, after its
// options, and none for a shell running a file or for other programs.
func TestShellScriptIndex(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"sh", "-c", "s"}, 2},
		{[]string{"bash", "-e", "-c", "s", "name", "arg"}, 3},
		{[]string{"bash", "-ec", "s"}, 2},
		{[]string{"zsh", "-o", "pipefail", "-c", "s"}, 4},
		{[]string{"bash", "-c", "--", "s"}, 3},
		{[]string{"bash", "--", "s"}, -1},
		{[]string{"bash", "-c"}, -1},
		{[]string{"bash", "--norc", "-c", "s"}, 3},
		{[]string{"/usr/bin/dash", "-c", "s"}, 2},
		{[]string{"sh", "file.sh"}, -1},
		{[]string{"ksh", "+x", "-c", "s"}, 3},
		{[]string{"python", "-c", "s"}, -1},
		{[]string{"fish", "-c", "s"}, -1},
		{nil, -1},
	} {
		if got := shellScriptIndex(tc.argv); got != tc.want {
			t.Errorf("shellScriptIndex(%q) = %d, want %d", tc.argv, got, tc.want)
		}
	}
}

// TestRunsOn: which steps run after a failure, and which before one.
func TestRunsOn(t *testing.T) {
	for _, tc := range []struct {
		runOn          string
		failed, before bool
	}{
		{"success", false, true}, {"success", true, false},
		{"failure", false, false}, {"failure", true, true},
		{"always", false, true}, {"always", true, true},
		{"", false, false}, {"never", true, false},
	} {
		if got := runsOn(tc.runOn, tc.failed); got != tc.before {
			t.Errorf("runsOn(%q, failed %t) = %t, want %t", tc.runOn, tc.failed, got, tc.before)
		}
	}
}
