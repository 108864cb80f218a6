package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllAtOnce: -j 0 (and parallel_runs: 0) starts every ready unit at
// once, with real terraform. Each unit's apply waits, in its provisioner,
// until every unit has started its own; under any bound below the number
// of units they never all start and the provisioners give up (after a
// minute: a guard against a hang, not a measure of speed). A negative
// count is refused before anything runs.
func TestAllAtOnce(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	const n = 5
	for _, tc := range []struct {
		name, config string
		args         []string
	}{
		{"flag", "", []string{"-j", "0"}},
		{"config", "parallel_runs: 0\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			config := tc.config + "dirs:\n"
			for i := 0; i < n; i++ {
				d := fmt.Sprintf("u%d", i)
				config += "  " + d + ": {tags: [u]}\n"
				files[d+"/main.tf"] = fmt.Sprintf(`resource "terraform_data" "wait" {
  provisioner "local-exec" {
    command = "touch ../started-%s; i=0; while [ $(ls ../started-* | wc -l) -lt %d ]; do i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.1; done"
  }
}
`, d, n)
			}
			files["strata.yml"] = config
			root := writeRepo(t, files)
			env := hermeticEnv(t)
			reportFile := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"apply", "-auto-approve", "--report", reportFile}, tc.args...)
			r := runBin(t, root, env, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			rep := readReport(t, reportFile)
			if len(rep.Units) != n {
				t.Fatalf("%d units in the report", len(rep.Units))
			}
			for _, u := range rep.Units {
				if u.Status != "applied" {
					t.Errorf("%s: %s (%s)", u.Name(), u.Status, u.Reason)
				}
			}
		})
	}
	t.Run("negative", func(t *testing.T) {
		t.Parallel()
		root := writeRepo(t, map[string]string{"strata.yml": "dirs:\n  a: {tags: [a]}\n", "a/main.tf": ""})
		r := runBin(t, root, hermeticEnv(t), "plan", "--parallelism", "-1")
		want := "--parallelism -1: expected a count of units, at least 0 (0: every ready unit at once)"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, want 1 and %q\n%s%s", r.code, want, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "Initializing") {
			t.Errorf("something ran:\n%s", r.stdout)
		}
	})
}
