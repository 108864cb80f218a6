package runner

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestDeniedSkipsDependents: a unit the controls refuse ends denied and
// runs nothing; what waits for it is skipped naming it; the rest runs;
// the run exits 1.
func TestDeniedSkipsDependents(t *testing.T) {
	e := newE2E(t, layerRepo(t, devAfterBase))
	p := e.project()
	asked := 0
	controls := func(units, auto []*stacks.Unit) (map[*stacks.Unit]string, map[*stacks.Unit]string, map[*stacks.Unit][]string) {
		asked++
		if len(units) != 3 || len(auto) != 0 {
			t.Errorf("asked about %d units, %d to auto-apply; want 3 and 0", len(units), len(auto))
		}
		return map[*stacks.Unit]string{p.UnitsIn("base")[0]: "bob may not apply base@default"}, nil, nil
	}
	res := e.runIn(p, CmdApply, Options{Settings: Settings{AutoApprove: true}, Extra: Extra{Controls: controls}}, stacks.Selection{})
	want := map[string]string{
		"base@default": string(report.StatusDenied) + " (bob may not apply base@default)",
		"dev@default":  string(report.StatusSkipped) + " (base@default was denied)",
		"prod@default": string(report.StatusApplied),
	}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Errorf("apply: %v, want %v\n%s", got, want, e.console.String())
	}
	if base := unitByName(t, res.Report, "base@default"); len(base.Steps) != 0 {
		t.Errorf("the denied unit ran %+v", base.Steps)
	}
	if asked != 1 || res.ExitCode != 1 || res.Report.OK {
		t.Errorf("controls asked %d times; exit %d ok %t, want once, 1, false", asked, res.ExitCode, res.Report.OK)
	}
	md := res.Report.Markdown()
	if !strings.Contains(md, "denied") || !strings.Contains(md, "bob may not apply base@default") {
		t.Errorf("the summary does not say what was denied:\n%s", md)
	}
}

// TestAutoApplyRefusedInPlan: plan plans an auto_apply unit whose apply
// the controls refuse, and leaves it planned saying why; what its apply
// gates stays planned too.
func TestAutoApplyRefusedInPlan(t *testing.T) {
	e := newE2E(t, layerRepo(t, `stacks:
  names:
    base:
      tag_query: base
      auto_apply: true
    dev: {tag_query: dev, auto_apply: true}
    prod:
      tag_query: prod
      rules: {plan_after: [base]}
`))
	p := e.project()
	controls := func(units, auto []*stacks.Unit) (map[*stacks.Unit]string, map[*stacks.Unit]string, map[*stacks.Unit][]string) {
		if len(auto) != 2 {
			t.Errorf("asked to auto-apply %d units, want base and dev", len(auto))
		}
		return nil, map[*stacks.Unit]string{p.UnitsIn("base")[0]: "needs 2 approvals from team:sre, has 1: carol"}, nil
	}
	res := e.runIn(p, CmdPlan, Options{Extra: Extra{Controls: controls}}, stacks.Selection{})
	want := map[string]string{
		"base@default": string(report.StatusPlanned) + " (auto_apply refused: needs 2 approvals from team:sre, has 1: carol)",
		"dev@default":  string(report.StatusApplied),
		"prod@default": string(report.StatusBlocked) + " (waits for base@default to be applied)",
	}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Errorf("plan: %v, want %v\n%s", got, want, e.console.String())
	}
}

// TestAutoApplyConditions: plan auto-applies a plan that holds its
// stack's condition, and leaves one that does not planned, saying the
// condition and the plan's figures; apply applies it whatever the
// condition.
func TestAutoApplyConditions(t *testing.T) {
	tf := func(trigger string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "resource \"terraform_data\" \"r%d\" { triggers_replace = %q }\n", i, trigger)
		}
		return b.String()
	}
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  careful: {tags: [careful]}
  small: {tags: [small]}
stacks:
  names:
    careful:
      tag_query: careful
      auto_apply: {when: no_deletes}
    small:
      tag_query: small
      rules:
        auto_apply: {max_changes: 2}
`,
		"careful/main.tf": tf("v1", 1),
		"small/main.tf":   tf("v1", 2),
	})
	e := newE2E(t, root)
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	want := map[string]string{"careful@default": "applied", "small@default": "applied"}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Fatalf("first plan: %v, want %v\n%s", got, want, e.console.String())
	}
	// A new trigger replaces careful's resource; small gets two more.
	writeFileT(t, filepath.Join(root, "careful", "main.tf"), tf("v2", 1))
	writeFileT(t, filepath.Join(root, "small", "main.tf"), tf("v1", 4))
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	want = map[string]string{
		"careful@default": "planned (auto_apply when no_deletes: the plan destroys 1 (+1 ~0 -1))",
		"small@default":   "applied",
	}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Errorf("second plan: %v, want %v\n%s", got, want, e.console.String())
	}
	// Three more is over the limit.
	writeFileT(t, filepath.Join(root, "small", "main.tf"), tf("v1", 7))
	res = e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"small"}})
	if got := statuses(res.Report)["small@default"]; got != "planned (auto_apply max_changes 2: the plan makes 3 (+3 ~0 -0))" {
		t.Errorf("third plan: %s", got)
	}
	// apply is a person's decision: the condition does not hold it back.
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"careful"}})
	if got := statuses(res.Report)["careful@default"]; got != "applied" {
		t.Errorf("apply: %s", got)
	}
}
