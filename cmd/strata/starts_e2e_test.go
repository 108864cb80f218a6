package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// Engine starts: a logging wrapper named terraform, first on PATH, runs
// the real terraform and writes down each start (the unit's dir and the
// engine command), so a test sees every start strata makes
// (docs/architecture.md#what-a-command-costs).

// pathFirst puts dir first on env's PATH, so a wrapper there stands in
// for the program of its name.
func pathFirst(env []string, dir string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	return env
}

// startLog puts the wrapper first on PATH of a hermetic environment; it
// returns the environment and a function that reads and clears the log:
// each unit dir's engine commands in order, and the count of `version`
// starts.
func startLog(t *testing.T) ([]string, func() (map[string][]string, int)) {
	t.Helper()
	real, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "starts.log")
	script := "#!/bin/sh\nprintf '%s %s\\n' \"$(basename \"$PWD\")\" \"$1\" >> " + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := pathFirst(testenv.Env(t), bin)
	read := func() (map[string][]string, int) {
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		os.Remove(log)
		starts, versions := map[string][]string{}, 0
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			dir, cmd, _ := strings.Cut(line, " ")
			switch {
			case line == "":
			case cmd == "version":
				versions++
			default:
				starts[dir] = append(starts[dir], cmd)
			}
		}
		return starts, versions
	}
	return env, read
}

// TestEngineStartsPerUnit: a plan with changes starts the engine once per
// unit (after its init), a plan without changes once, an apply of the
// saved plan once after its text, a drop-in plan once; `version` at most once a command.
func TestEngineStartsPerUnit(t *testing.T) {
	t.Parallel()
	needTerraform(t)
	unit := func(input string) string {
		return "resource \"terraform_data\" \"x\" {\n  input = \"" + input + "\"\n}\noutput \"id\" {\n  value = terraform_data.x.output\n}\n"
	}
	// strata.yml marks the root, so the drop-in plan in a is the same unit.
	root := writeRepo(t, map[string]string{"strata.yml": "", "a/main.tf": unit("a1"), "b/main.tf": unit("b1")})
	env, starts := startLog(t)
	for _, step := range []struct {
		name string
		dir  string
		args []string
		edit func()
		want map[string][]string
	}{
		{name: "plan of new units with changes", args: []string{"plan"},
			want: map[string][]string{"a": {"init", "plan"}, "b": {"init", "plan"}}},
		// The saved plan is shown as people read it, as a plan's text is,
		// then applied.
		{name: "apply of the saved plans", args: []string{"apply", "-auto-approve"},
			want: map[string][]string{"a": {"show", "apply"}, "b": {"show", "apply"}}},
		{name: "plan without changes", args: []string{"plan"},
			want: map[string][]string{"a": {"plan"}, "b": {"plan"}}},
		{name: "drop-in plan with changes", dir: "a", args: []string{"plan"},
			edit: func() {
				if err := os.WriteFile(filepath.Join(root, "a", "main.tf"), []byte(unit("a2")), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string][]string{"a": {"plan"}}},
	} {
		if step.edit != nil {
			step.edit()
		}
		rp := filepath.Join(t.TempDir(), "report.json")
		r := runBin(t, filepath.Join(root, step.dir), env, append(append([]string(nil), step.args...), "--report", rp)...)
		if r.code != 0 && r.code != 2 {
			t.Fatalf("%s: exit %d\n%s%s", step.name, r.code, r.stdout, r.stderr)
		}
		// The report says what strata's own process and the engines it
		// started cost; the engines' is most of it.
		if c := readReport(t, rp).CPU; c == nil || c.OwnMS <= 0 || c.ChildrenMS <= 0 {
			t.Errorf("%s: the report's cpu is %+v, want strata's and the engines' CPU time", step.name, c)
		}
		got, versions := starts()
		if !reflect.DeepEqual(got, step.want) {
			t.Errorf("%s: engine starts %q, want %q\n%s%s", step.name, got, step.want, r.stdout, r.stderr)
		}
		if versions > 1 {
			t.Errorf("%s: %d starts for version, want at most one", step.name, versions)
		}
	}
}

// TestReviewedPlanOfEarlierForm: a reviewed plan whose change set was
// recorded from show -json (no "f1:" prefix, as strata recorded before it
// read plan files) is compared in that form, the new plan read with a
// show step; one recorded from the plan file needs no show. The forged
// change set here differs from the new plan's, so the plans differ; the
// one read from the file is the same.
func TestReviewedPlanOfEarlierForm(t *testing.T) {
	t.Parallel()
	needTerraform(t)
	for _, tc := range []struct {
		name     string
		forge    bool
		wantShow bool
		wantSame bool
	}{
		{name: "file form", wantSame: true},
		{name: "show -json form", forge: true, wantShow: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := writeRepo(t, map[string]string{
				"strata.yml":  "",
				"app/main.tf": "resource \"terraform_data\" \"app\" {\n  input = \"one\"\n}\n",
			})
			env := hermeticEnv(t)
			if r := runBin(t, root, env, "plan"); r.code != 0 {
				t.Fatalf("plan: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			records, _ := filepath.Glob(filepath.Join(root, ".strata", "state", "app", "*.json"))
			if len(records) != 1 {
				t.Fatalf("records: %q", records)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(readFileT(t, records[0])), &rec); err != nil {
				t.Fatal(err)
			}
			plan, _ := rec["plan"].(map[string]any)
			if cs, _ := plan["change_set"].(string); !strings.HasPrefix(cs, "f1:") {
				t.Fatalf("change set recorded: %q", cs)
			}
			if tc.forge {
				plan["change_set"] = strings.Repeat("0", 64)
				b, _ := json.Marshal(rec)
				if err := os.WriteFile(records[0], b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// Another digest, the same changes: apply plans again and
			// compares.
			if err := os.WriteFile(filepath.Join(root, "app", "notes.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := filepath.Join(t.TempDir(), "report.json")
			if r := runBin(t, root, env, "apply", "-auto-approve", "--report", rep); r.code != 0 {
				t.Fatalf("apply: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			u := readReport(t, rep).Units[0]
			show := false
			for _, st := range u.Steps {
				show = show || st.Name == "show"
			}
			if show != tc.wantShow || u.Replanned == nil || u.Replanned.Same != tc.wantSame {
				t.Errorf("show step %v, replanned %+v; want show %v, same %v", show, u.Replanned, tc.wantShow, tc.wantSame)
			}
		})
	}
}

// TestGitStartsPerCommand: a command looks at the git work tree once: a
// plan opens it for its history's commit (one `rev-parse`), an apply
// opens it once for what its units deployed and its history both, and
// reads the work tree's changes once; a project outside any work tree
// asks git once, however many units apply.
func TestGitStartsPerCommand(t *testing.T) {
	t.Parallel()
	needTerraform(t)
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	files := map[string]string{"strata.yml": "", "a/main.tf": "resource \"terraform_data\" \"x\" {}\n", "b/main.tf": "resource \"terraform_data\" \"x\" {}\n"}
	inGit := writeRepo(t, files)
	testenv.Git(t, inGit, "init", "-q")
	testenv.Git(t, inGit, "add", "-A")
	testenv.Git(t, inGit, "commit", "-q", "-m", "units")
	outside := writeRepo(t, files)

	bin := t.TempDir()
	log := filepath.Join(bin, "git.log")
	script := "#!/bin/sh\necho \"$1\" >> " + log + "\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := pathFirst(testenv.Env(t), bin)
	starts := func() map[string]int {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		n := map[string]int{}
		for _, l := range strings.Fields(string(b)) {
			n[l]++
		}
		return n
	}
	for _, step := range []struct {
		name string
		root string
		args []string
		want map[string]int
	}{
		{"plan", inGit, []string{"plan"}, map[string]int{"rev-parse": 1}},
		{"apply", inGit, []string{"apply", "-auto-approve"}, map[string]int{"rev-parse": 1, "diff": 1, "ls-files": 1}},
		{"apply outside a work tree", outside, []string{"apply", "-auto-approve"}, map[string]int{"rev-parse": 1}},
	} {
		r := runBin(t, step.root, env, step.args...)
		if r.code != 0 && r.code != 2 {
			t.Fatalf("%s: exit %d\n%s%s", step.name, r.code, r.stdout, r.stderr)
		}
		if got := starts(); !reflect.DeepEqual(got, step.want) {
			t.Errorf("%s: git starts %v, want %v", step.name, got, step.want)
		}
	}
}
