package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/filelock"
)

// TestReportOnEarlyFailure: --report and --summary are written when the
// command stops before any unit runs, saying why.
func TestReportOnEarlyFailure(t *testing.T) {
	needTerraform(t)
	const tf = "resource \"terraform_data\" \"x\" {}\n"
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		extra []string
		hold  bool // hold the repository apply lock
		want  string
	}{
		{"config error", map[string]string{"strata.yml": "dirs:\n  a: {tags: [a]}\nstacks: {names: {a: {tag_qeury: a}}}\n", "a/main.tf": tf},
			[]string{"plan"}, nil, false, "strata.yml:3:"},
		{"apply lock held", map[string]string{"strata.yml": "dirs:\n  a: {tags: [a]}\n", "a/main.tf": tf},
			[]string{"apply", "-auto-approve"}, nil, true, "another strata holds the repository apply lock"},
		{"engine unobtainable", map[string]string{"strata.yml": "engine: {name: terraform, version: 9.9.9}\ndirs:\n  a: {tags: [a]}\n", "a/main.tf": tf},
			[]string{"plan"}, []string{"STRATA_ENGINES_OFFLINE=1"}, false, "9.9.9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, tc.files)
			if tc.hold {
				if err := os.MkdirAll(filepath.Join(root, ".strata", "locks"), 0o700); err != nil {
					t.Fatal(err)
				}
				l, err := filelock.TryAcquire(filepath.Join(root, ".strata", "locks", "apply.lock"))
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
			}
			out := t.TempDir()
			report, summary := filepath.Join(out, "report.json"), filepath.Join(out, "summary.md")
			args := append(append([]string(nil), tc.args...), "--report", report, "--summary", summary)
			r := runBin(t, root, append(hermeticEnv(t), tc.extra...), args...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			rep := readReport(t, report)
			if rep.OK || rep.ExitCode != 1 || len(rep.Units) != 0 || !strings.Contains(rep.Error, tc.want) {
				t.Errorf("report: ok %t exit %d units %d error %q; want an error with %q", rep.OK, rep.ExitCode, len(rep.Units), rep.Error, tc.want)
			}
			md, err := os.ReadFile(summary)
			if err != nil || !strings.Contains(string(md), "Stopped before any unit ran") || !strings.Contains(string(md), tc.want) {
				t.Errorf("summary: %v\n%s", err, md)
			}
		})
	}
}

// TestPlanFilesArePrivate: saved plans, --plan-json files and the summary
// are 0600; the var file holding TF_VAR_ values from strata's environment
// is gone once the plan ends.
func TestPlanFilesArePrivate(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n",
		"a/main.tf": `variable "token" {
  type      = string
  sensitive = true
}
resource "terraform_data" "x" {
  input = sensitive(var.token)
}
`,
	})
	out := t.TempDir()
	summary := filepath.Join(out, "summary.md")
	r := runBin(t, root, append(hermeticEnv(t), "TF_VAR_token=hunter2-token"), "plan", "--all", "--plan-json", filepath.Join(out, "json"), "--summary", summary)
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{filepath.Join(root, ".strata", "plans", "a", "default.tfplan"), filepath.Join(out, "json", "a", "default.json"), summary} {
		st, err := os.Stat(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", f, st.Mode().Perm())
		}
	}
	wantNoVarValues(t, root)
}

// wantNoVarValues fails unless every var file under root's state dir is
// empty: the values strata gives an engine call are on disk only while it
// runs (docs/behaviour.md#input-variables). It returns how many it found.
func wantNoVarValues(t *testing.T, root string) (files int) {
	t.Helper()
	filepath.WalkDir(filepath.Join(root, ".strata", "vars"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		files++
		if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
			t.Errorf("%s holds %d bytes after the run (%v), want it empty", path, len(b), err)
		}
		return nil
	})
	return files
}
