package runner

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// unitNamed is the unit of p with the name.
func unitNamed(t *testing.T, p *stacks.Project, name string) *stacks.Unit {
	t.Helper()
	for _, u := range p.Units {
		if u.Name() == name {
			return u
		}
	}
	t.Fatalf("no unit %s", name)
	return nil
}

// TestDeniedSkipsDependents: a unit the controls refuse ends denied and
// runs nothing; what waits for it is skipped naming it; the rest runs;
// the run exits 1.
func TestDeniedSkipsDependents(t *testing.T) {
	e := newE2E(t, layerRepo(t, `stacks:
  names:
    base: {tag_query: base}
    dev:
      tag_query: dev
      rules: {plan_after: [base]}
    prod: {tag_query: prod}
`))
	p := e.project()
	asked := 0
	controls := func(units, auto []*stacks.Unit) (map[*stacks.Unit]string, map[*stacks.Unit]string) {
		asked++
		if len(units) != 3 || len(auto) != 0 {
			t.Errorf("asked about %d units, %d to auto-apply; want 3 and 0", len(units), len(auto))
		}
		return map[*stacks.Unit]string{unitNamed(t, p, "base@default"): "bob may not apply base@default"}, nil
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
	controls := func(units, auto []*stacks.Unit) (map[*stacks.Unit]string, map[*stacks.Unit]string) {
		if len(auto) != 2 {
			t.Errorf("asked to auto-apply %d units, want base and dev", len(auto))
		}
		return nil, map[*stacks.Unit]string{unitNamed(t, p, "base@default"): "needs 2 approvals from team:sre, has 1: carol"}
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
