package job

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks"
)

// TestEnvValues: method exec sets the step's name to the output, its
// trailing newlines trimmed unless asked otherwise; method source reads
// KEY=VALUE lines, export prefixes, quotes and comments as a shell would
// write them.
func TestEnvValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   stacks.RunStep
		out  string
		want map[string]string
	}{
		{"exec trims", stacks.RunStep{Name: "TOKEN", TrimTrailingNewlines: true}, "abc\r\n\n", map[string]string{"TOKEN": "abc"}},
		{"exec keeps", stacks.RunStep{Name: "TOKEN"}, "abc\n", map[string]string{"TOKEN": "abc\n"}},
		{"exec keeps inner lines", stacks.RunStep{Name: "PEM", TrimTrailingNewlines: true}, "a\nb\n", map[string]string{"PEM": "a\nb"}},
		{"exec empty", stacks.RunStep{Name: "E", TrimTrailingNewlines: true}, "", map[string]string{"E": ""}},
		{"source", stacks.RunStep{Method: "source"}, "A=1\n  export B=\"two words\"\n# C=3\nD='4'\nnot a pair\n=5\nE=x=y\n",
			map[string]string{"A": "1", "B": "two words", "D": "4", "E": "x=y"}},
		{"source empty", stacks.RunStep{Method: "source"}, "\n\n", map[string]string{}},
		{"source last wins", stacks.RunStep{Method: "source"}, "A=1\nA=2\n", map[string]string{"A": "2"}},
	} {
		if got := envValues(tc.st, tc.out); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: envValues = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestEnvStepBuild: an env step's process keeps its stdout for the
// values, and keeps nothing else (a hook's, when asked to).
func TestEnvStepBuild(t *testing.T) {
	st := stacks.RunStep{Type: "env", Cmd: []string{"sh", "-c", "echo $T", "${region}"}, Name: "X", CaptureOutput: true,
		Env: []stacks.EnvVar{{Key: "T", Value: "${GITHUB_TOKEN}"}}}
	p, err := (&envStep{}).build(testInput(st, "plan step 1 (env)", nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.argv, []string{"sh", "-c", "echo $T", "eu-west-1"}) || p.stdout == nil || p.capture || p.ignoreErrors {
		t.Errorf("process = %q stdout %v capture %t ignore %t", p.argv, p.stdout, p.capture, p.ignoreErrors)
	}
	if env := envOf(p.env); env["T"] != "ghp" || env["TF_VAR_size"] != "3" {
		t.Errorf("env: T=%q TF_VAR_size=%q", env["T"], env["TF_VAR_size"])
	}
	hp, err := (&envStep{}).build(testHookInput(st, "hooks.all.pre[1]", nil))
	if err == nil || !strings.Contains(err.Error(), `"region"`) {
		t.Errorf("a hook's cmd took a stack variable: %q %v", hp.argv, err)
	}
	st.Cmd = []string{"cat", "${STRATA_ROOT}/x"}
	hp, err = (&envStep{}).build(testHookInput(st, "hooks.all.pre[1]", nil))
	if err != nil || !hp.capture || hp.stdout == nil || !reflect.DeepEqual(hp.argv, []string{"cat", "/repo/x"}) {
		t.Errorf("hook env step: %q capture %t %v", hp.argv, hp.capture, err)
	}
	if _, err := (&envStep{}).build(testInput(stacks.RunStep{Type: "env"}, "plan step 1 (env)", nil)); err == nil || !strings.Contains(err.Error(), "empty cmd") {
		t.Errorf("an env step with no cmd: %v", err)
	}
}

// TestEnvStepRun: what an env step adds: the variables its cmd printed,
// its values as secrets when sensitive (in name order), and a note naming
// them; nothing when its cmd fails.
func TestEnvStepRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		st      stacks.RunStep
		hook    bool
		stdout  string
		err     error
		set     map[string]string
		secrets []string
		note    string
	}{
		{name: "exec", st: stacks.RunStep{Name: "TOKEN", TrimTrailingNewlines: true}, stdout: "t0k\n",
			set: map[string]string{"TOKEN": "t0k"}, note: "env: set TOKEN"},
		{name: "source, sensitive", st: stacks.RunStep{Method: "source", Sensitive: true}, stdout: "B=2\nA=1\n",
			set: map[string]string{"A": "1", "B": "2"}, secrets: []string{"1", "2"}, note: "env: set A, B"},
		{name: "hook", hook: true, st: stacks.RunStep{Method: "source"}, stdout: "TF_VAR_x=1\n",
			set: map[string]string{"TF_VAR_x": "1"}, note: "hooks.plan.pre[0]: set TF_VAR_x"},
		{name: "failed", st: stacks.RunStep{Name: "X"}, stdout: "half", err: errors.New("exit status 2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.st.Type, tc.st.Cmd = "env", []string{"print"}
			x := &fakeExec{stdout: tc.stdout, err: tc.err}
			in := testInput(tc.st, "plan step 1 (env)", x)
			if tc.hook {
				in = testHookInput(tc.st, "hooks.plan.pre[0]", x)
			}
			out := (&envStep{}).run(context.Background(), in)
			if !errors.Is(out.Err, tc.err) {
				t.Errorf("err = %v, want %v", out.Err, tc.err)
			}
			if len(tc.set) > 0 || out.Set != nil {
				if !reflect.DeepEqual(out.Set, tc.set) {
					t.Errorf("set = %q, want %q", out.Set, tc.set)
				}
			}
			if !reflect.DeepEqual(out.Secrets, tc.secrets) || out.Note != tc.note {
				t.Errorf("secrets %q note %q, want %q %q", out.Secrets, out.Note, tc.secrets, tc.note)
			}
			if len(out.Reports) != 1 || len(x.procs) != 1 {
				t.Errorf("%d reports, %d processes", len(out.Reports), len(x.procs))
			}
			if len(in.Set) != 0 {
				t.Error("the step wrote what later steps see itself; the job folds it")
			}
		})
	}
}
