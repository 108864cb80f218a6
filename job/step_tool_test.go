package job

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// TestToolStepBuild: a tool runs from the path found, with its
// extra_args substituted (checkov with `-d .` when it has none), its
// output kept, and the step's env over the process environment.
func TestToolStepBuild(t *testing.T) {
	for _, tc := range []struct {
		name   string
		st     stacks.RunStep
		argv   []string
		err    string
		ignore bool
	}{
		{name: "checkov default", st: stacks.RunStep{Type: "checkov"}, argv: []string{"/t/checkov", "-d", "."}},
		{name: "checkov own args", st: stacks.RunStep{Type: "checkov", ExtraArgs: []string{"-f", "${STRATA_PLAN_FILE}"}},
			argv: []string{"/t/checkov", "-f", "/s/p.tfplan"}},
		{name: "conftest", st: stacks.RunStep{Type: "conftest", ExtraArgs: []string{"test", "--namespace", "${region}"}},
			argv: []string{"/t/conftest", "test", "--namespace", "eu-west-1"}},
		{name: "opa without args", st: stacks.RunStep{Type: "opa"}, argv: []string{"/t/opa"}},
		{name: "ignore_errors", st: stacks.RunStep{Type: "opa", IgnoreErrors: true}, argv: []string{"/t/opa"}, ignore: true},
		{name: "ignore_errors with a gate", st: stacks.RunStep{Type: "opa", IgnoreErrors: true, Gate: &config.Gate{Token: "g"}}, argv: []string{"/t/opa"}},
		{name: "unknown in extra_args", st: stacks.RunStep{Type: "opa", ExtraArgs: []string{"$NOPE"}}, err: "plan step 4 (opa).extra_args"},
		{name: "unknown in env", st: stacks.RunStep{Type: "opa", Env: []stacks.EnvVar{{Key: "K", Value: "$NOPE"}}}, err: "plan step 4 (opa).env.K"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.st.Env = append(tc.st.Env, stacks.EnvVar{Key: "TF_VAR_size", Value: "8"})
			in := testInput(tc.st, "plan step 4 ("+tc.st.Type+")", nil)
			p, err := (&toolStep{}).build(in, "/t/"+tc.st.Type)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.argv, tc.argv) || !p.capture || p.ignoreErrors != tc.ignore || p.name != tc.st.Type {
				t.Errorf("process: %q capture %t ignore %t name %q", p.argv, p.capture, p.ignoreErrors, p.name)
			}
			if env := envOf(p.env); env["TF_VAR_size"] != "8" || env["STRATA_DIR"] != "net" {
				t.Errorf("env: %v", env)
			}
		})
	}
}

// TestToolStepRun: a tool not on PATH fails the step with what to do; one
// there runs, and a gated failure in the plan workflow raises the gate.
func TestToolStepRun(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	x := &fakeExec{}
	out := (&toolStep{}).run(context.Background(), testInput(stacks.RunStep{Type: "checkov"}, "plan step 2 (checkov)", x))
	if out.Err == nil || !strings.Contains(out.Err.Error(), "checkov is not on PATH: install it or remove the plan step 2 (checkov) step") {
		t.Errorf("a missing tool: %v", out.Err)
	}
	if len(out.Reports) != 1 || out.Reports[0].Name != "checkov" || out.Reports[0].OK || len(x.procs) != 0 {
		t.Errorf("a missing tool's report: %+v, %d processes", out.Reports, len(x.procs))
	}
	tool := filepath.Join(dir, "conftest")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	x = &fakeExec{err: errors.New("2 failures")}
	st := stacks.RunStep{Type: "conftest", ExtraArgs: []string{"test", "."}, Gate: &config.Gate{Token: "policy"}}
	out = (&toolStep{}).run(context.Background(), testInput(st, "plan step 3 (conftest)", x))
	if out.Err != nil || out.Gate == nil || out.Gate.Token != "policy" || out.Gate.Step != "plan step 3 (conftest)" {
		t.Errorf("a gated tool failure: err %v gate %+v", out.Err, out.Gate)
	}
	if len(x.procs) != 1 || !reflect.DeepEqual(x.procs[0].argv, []string{tool, "test", "."}) {
		t.Errorf("processes: %+v", x.procs)
	}
}
