package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
)

// TestRequireReviewedPlan: apply --require-reviewed-plan (or
// STRATA_REQUIRE_REVIEWED_PLAN) refuses changes without a saved plan made
// by plan, exiting 1 with the reason in the report and the table, and
// applies a plan that was made; it cannot go with --destroy-deleted. ci
// start records it in the manifest of an apply run only.
func TestRequireReviewedPlan(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"app\" {\n  input = \"one\"\n}\n",
	})
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "report.json")
	const reason = "app@default: no reviewed plan for its changes (+1 ~0 -0); not applied (--require-reviewed-plan)"
	for name, args := range map[string][]string{
		"flag":     {"apply", "-auto-approve", "--require-reviewed-plan", "--report", reportFile},
		"variable": {"apply", "-auto-approve", "--report", reportFile},
	} {
		e := env
		if name == "variable" {
			e = append(append([]string(nil), env...), "STRATA_REQUIRE_REVIEWED_PLAN=true")
		}
		r := runBin(t, root, e, args...)
		if r.code != 1 || !strings.Contains(r.stdout, reason) {
			t.Errorf("%s: exit %d, want 1 with %q\n%s%s", name, r.code, reason, r.stdout, r.stderr)
		}
		if u := readReport(t, reportFile).Units[0]; u.Status != report.StatusFailed || u.Reason != reason {
			t.Errorf("%s: report: %s (%s)", name, u.Status, u.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "app", "terraform.tfstate")); err == nil {
		t.Error("a refused apply left a state")
	}
	if r := runBin(t, root, env, "plan"); r.code != 0 {
		t.Fatalf("plan: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "apply", "-auto-approve", "--require-reviewed-plan", "--report", reportFile); r.code != 0 {
		t.Fatalf("apply of the reviewed plan: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if u := readReport(t, reportFile).Units[0]; u.Status != report.StatusApplied {
		t.Errorf("apply of the reviewed plan: %s (%s)", u.Status, u.Reason)
	}
	r := runBin(t, root, env, "apply", "-auto-approve", "--require-reviewed-plan", "--destroy-deleted")
	if r.code != 1 || !strings.Contains(r.stderr, "--require-reviewed-plan cannot go with --destroy-deleted") {
		t.Errorf("with --destroy-deleted: %d\n%s", r.code, r.stderr)
	}

	bucket := t.TempDir()
	for command, want := range map[string]bool{"apply": true, "plan": false} {
		args := []string{command, "--state", "file://" + bucket, "--json", "--require-reviewed-plan"}
		if command == "apply" {
			args = append(args, "--auto-approve")
		}
		started, _ := startRun(t, root, env, args...)
		b := readFileT(t, filepath.Join(bucket, "runs", started.Run, "manifest.json"))
		var m struct {
			Options struct {
				RequireReviewedPlan bool `json:"require_reviewed_plan"`
			} `json:"options"`
		}
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			t.Fatal(err)
		}
		if m.Options.RequireReviewedPlan != want {
			t.Errorf("ci start %s --require-reviewed-plan: the manifest says %v", command, m.Options.RequireReviewedPlan)
		}
	}
}
