package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/report"
)

// TestErrorTextBudget: an engine error that quotes a 2 MB value, and a
// run step that fails printing a 200 KB line, with real terraform. What
// strata shows and keeps of them is cut to a few KiB with a note of how
// much was cut: the console, the report's reasons, the summary and the
// state dir (docs/behaviour.md#text-budgets).
func TestErrorTextBudget(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := writeRepo(t, map[string]string{
		"strata.yml": `stacks:
  names:
    all: {tag_query: ''}
workflows:
  - tag_query: 'dir:step'
    plan:
      - type: run
        cmd: ['sh', '-c', 'head -c 200000 /dev/zero | tr "\0" x >&2; exit 1']
      - type: init
      - type: plan
`,
		"huge/main.tf": `variable "v" {
  default = ""
}

resource "terraform_data" "x" {
  lifecycle {
    precondition {
      condition     = var.v != ""
      error_message = format("huge%02000000d", 0)
    }
  }
}
`,
		"step/main.tf": "resource \"terraform_data\" \"y\" {}\n",
	})
	dir := t.TempDir()
	reportFile, summaryFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "summary.md")
	r := runBin(t, root, hermeticEnv(t), "plan", "--report", reportFile, "--summary", summaryFile)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%.2000s", r.code, r.stderr)
	}
	const most = 64 << 10
	if n := len(r.stdout) + len(r.stderr); n > most || !strings.Contains(r.stdout, textbudget.Marker) {
		t.Errorf("the console printed %d bytes, want the long lines cut (at most %d in all)", n, most)
	}
	rep := readReport(t, reportFile)
	for _, u := range rep.Units {
		if u.Status != report.StatusFailed {
			t.Errorf("%s: %s, want failed", u.Name(), u.Status)
		}
		if len(u.Reason) > textbudget.Error+64 {
			t.Errorf("%s: a reason of %d bytes", u.Name(), len(u.Reason))
		}
	}
	for _, f := range []string{reportFile, summaryFile} {
		if fi, err := os.Stat(f); err != nil || fi.Size() > most {
			t.Errorf("%s: %v, want at most %d bytes", f, fi.Size(), most)
		}
	}
	if s := readFileT(t, summaryFile); !strings.Contains(s, textbudget.Marker) || !strings.Contains(s, "Resource precondition failed") {
		t.Errorf("the summary does not keep the error's start with a note of the cut:\n%.3000s", s)
	}
	filepath.WalkDir(filepath.Join(root, ".strata"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.Size() > most {
			t.Errorf("%s: %d bytes in the state dir", p, fi.Size())
		}
		return nil
	})
}

// TestFailedReportBudget: a command that stops before any unit runs, on a
// config whose unknown key is 100 KB long: the report's error says so in
// a few KiB.
func TestFailedReportBudget(t *testing.T) {
	t.Parallel()
	root := writeRepo(t, map[string]string{
		"strata.yml":  "stacks:\n  names:\n    all:\n      tag_query: ''\n      engine: {name: terraform, version: '" + strings.Repeat("~>", 50000) + "'}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	reportFile := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, hermeticEnv(t), "plan", "--report", reportFile)
	if r.code == 0 {
		t.Fatalf("exit 0 on a config that does not load\n%.2000s", r.stderr)
	}
	rep := readReport(t, reportFile)
	if !strings.Contains(rep.Error, "strata.yml:5:") || len(rep.Error) > textbudget.Error+64 || !strings.Contains(rep.Error, textbudget.Marker) {
		t.Errorf("the report's error: %d bytes, %.300q", len(rep.Error), rep.Error)
	}
}
