package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// TestMetacharacterDirsE2E: dirs whose names hold glob metacharacters are
// units like any other: listed, modified by a change to their own files
// (and nothing else is), and planned by the real engine.
func TestMetacharacterDirsE2E(t *testing.T) {
	needTerraform(t)
	res := `resource "terraform_data" "this" {}` + "\n"
	dirs := []string{`c{d}`, `e[1]`, `x${y}`, `*`, `?`, "cd", "e1"}
	files := map[string]string{}
	for _, d := range dirs {
		files[d+"/main.tf"] = res
	}
	root := changedRepo(t, files)

	code, out, errOut := strata(t, "-C", root, "ls", "--all", "--json")
	if code != 0 {
		t.Fatalf("ls: exit %d\n%s", code, errOut)
	}
	var rows []lsRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("ls --json: not JSON: %v\n%s", err, out)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Dir)
	}
	want := append([]string(nil), dirs...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ls --all: units in %q, want %q", got, want)
	}

	testenv.WriteFile(t, filepath.Join(root, "e[1]", "main.tf"), res+"# changed\n")
	gitIn(t, root, "commit", "-q", "-am", "change e[1]")
	if got, want := whys(lsChanged(t, root)), []string{"e[1]@default: modified: e[1]/main.tf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ls --changed after a change in e[1]: %q, want %q", got, want)
	}

	reportFile := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, hermeticEnv(t), "plan", "--dir", "c{d}", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("plan --dir c{d}: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep := readReport(t, reportFile)
	if len(rep.Units) != 1 || rep.Units[0].Dir != "c{d}" || rep.Units[0].Status != report.StatusPlanned {
		t.Fatalf("plan --dir c{d}: units %+v, want c{d} planned", rep.Units)
	}
}
