package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// infracostStandIn speaks the part of infracost's CLI strata uses:
// `breakdown --path PLAN --format json` on terraform's plan JSON, printing
// infracost's JSON shape. infracost is in none of the package registries
// this project installs from, so the test stands in for it; the plan it
// reads is real terraform's. It prices each resource the plan creates at
// 1.25 a month over a past cost of 10, and records its arguments.
const infracostStandIn = `#!/bin/sh
echo "$@" >> "$STANDIN_LOG"
[ "$1" = breakdown ] || exit 2
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --path) plan=$2; shift 2 ;;
    --format) [ "$2" = json ] || exit 2; shift 2 ;;
    *) shift ;;
  esac
done
grep -q '"resource_changes"' "$plan" || { echo "not a plan JSON: $plan" >&2; exit 1; }
n=$(grep -o '"actions":\["create"\]' "$plan" | wc -l)
awk -v n="$n" -v cur="$INFRACOST_CURRENCY" 'BEGIN { printf "{\"version\":\"0.2\",\"currency\":\"%s\",\"totalMonthlyCost\":\"%.2f\",\"pastTotalMonthlyCost\":\"10\",\"projects\":[]}\n", cur, 10 + n * 1.25 }'
`

// costRepo is two stacks, each with a unit that creates resources.
func costRepo(t *testing.T, currency string) string {
	return testenv.WriteRepo(t, map[string]string{
		"strata.yml": "cost_estimation:\n  enabled: true\n  provider: infracost\n" + currency +
			"stacks:\n  names:\n    prod: {tag_query: 'dir:prod'}\n    dev: {tag_query: 'dir:dev'}\n",
		"prod/main.tf": "resource \"terraform_data\" \"a\" {}\nresource \"terraform_data\" \"b\" {}\n",
		"dev/main.tf":  "resource \"terraform_data\" \"a\" {}\n",
	})
}

// TestCostEstimation: with cost_estimation, each plan with changes is
// priced by infracost from terraform's plan JSON; the report, the summary
// and the comment have the run's monthly cost and its change, a row per
// stack. Without infracost on PATH the run says once that it estimated
// nothing, and plans as usual.
func TestCostEstimation(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	bin := t.TempDir()
	testenv.WriteFile(t, filepath.Join(bin, "infracost"), infracostStandIn)
	if err := os.Chmod(filepath.Join(bin, "infracost"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "standin.log")
	root := costRepo(t, "  currency: EUR\n")
	env := testenv.Env(t, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "STANDIN_LOG="+log)
	out := t.TempDir()
	r := runBin(t, root, env, "plan", "--all", "--report", filepath.Join(out, "r.json"), "--summary", filepath.Join(out, "s.md"))
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rep report.Report
	data, _ := os.ReadFile(filepath.Join(out, "r.json"))
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if c := rep.Cost; c == nil || c.Units != 2 || c.Currency != "EUR" || c.Monthly != 23.75 || c.Past != 20 {
		t.Fatalf("the run's cost: %+v", rep.Cost)
	}
	summary, _ := os.ReadFile(filepath.Join(out, "s.md"))
	for _, want := range []string{"**Cost:** €23.75 a month, +€3.75 (was €20.00; infracost, 2 units)", "| dev | €11.25 | +€1.25 |", "| prod | €12.50 | +€2.50 |"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("the summary has no %q:\n%s", want, summary)
		}
	}
	calls, _ := os.ReadFile(log)
	if n := strings.Count(string(calls), "breakdown --path "); n != 2 || !strings.Contains(string(calls), "--format json") {
		t.Errorf("infracost was called %d times:\n%s", n, calls)
	}

	// No infracost: said once, the plan as usual.
	root = costRepo(t, "")
	r = runBin(t, root, testenv.Env(t), "plan", "--all", "--summary", filepath.Join(out, "s2.md"))
	if r.code != 0 || strings.Count(r.stdout+r.stderr, "no cost estimated: cost_estimation asks for infracost, which is not on PATH") != 1 {
		t.Errorf("without infracost: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if s, _ := os.ReadFile(filepath.Join(out, "s2.md")); !strings.Contains(string(s), "_Cost not estimated: cost_estimation asks for infracost, which is not on PATH") {
		t.Errorf("the summary does not say:\n%s", s)
	}
}
