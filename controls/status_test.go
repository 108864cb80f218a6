package controls

import (
	"context"
	"testing"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/report"
)

func TestApplyStatus(t *testing.T) {
	t.Parallel()
	units := func(statuses ...report.Status) []*report.UnitReport {
		out := make([]*report.UnitReport, len(statuses))
		for i, s := range statuses {
			out[i] = &report.UnitReport{Status: s}
		}
		return out
	}
	on, noop := StatusSettings{Pending: true}, StatusSettings{Pending: true, CompletedOnNoop: true}
	plan, apply, drift := command.Must(command.Plan), command.Must(command.Apply), command.Must(command.Drift)
	tests := []struct {
		name  string
		set   StatusSettings
		pol   *command.Policy
		units []*report.UnitReport
		want  string // state: description, or "" when left as it is
	}{
		{"off", StatusSettings{}, plan, units(report.StatusPlanned), ""},
		{"plan with changes", on, plan, units(report.StatusPlanned, report.StatusBlocked, report.StatusNoChanges), "pending: 2 units to apply"},
		{"plan with nothing to apply", on, plan, units(report.StatusNoChanges), ""},
		{"plan with nothing to apply, completed on noop", noop, plan, units(report.StatusNoChanges, report.StatusApplied), "success: nothing to apply"},
		{"plan that failed, nothing to apply", noop, plan, units(report.StatusFailed), ""},
		{"apply of everything", on, apply, units(report.StatusApplied, report.StatusNoChanges), "success: everything applied"},
		{"apply with a denial", on, apply, units(report.StatusApplied, report.StatusDenied, report.StatusSkipped), "failure: 2 units not applied"},
		{"apply with plans left", on, apply, units(report.StatusApplied, report.StatusPlanned), "pending: 1 unit to apply"},
		{"drift", on, drift, units(report.StatusPlanned), ""},
	}
	for _, tt := range tests {
		state, desc, ok := tt.set.ApplyStatus(tt.pol, tt.units)
		got := ""
		if ok {
			got = state + ": " + desc
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestApplyStatusIsNoCheck: the apply status strata keeps pending while
// plans wait does not hold their apply back.
func TestApplyStatusIsNoCheck(t *testing.T) {
	t.Parallel()
	p := project(t, "dirs:\n  app: {tags: [app]}\napply_requirements:\n  checks:\n    - tag_query: ''\n      status_checks: {enabled: true}\n", "app")
	pr := open()
	pr.Checks = []StatusCheck{{Name: ApplyStatusName, State: StatusPending}, {Name: "lint", State: "success"}}
	if denied := Compile(p.Config).Decide(context.Background(), sre(), Request{Op: Apply, Actor: "bob", PR: pr, Units: p.Units}); len(denied) != 0 {
		t.Errorf("denied %v", denied)
	}
	pr.Checks[1].State = "failure"
	if denied := Compile(p.Config).Decide(context.Background(), sre(), Request{Op: Apply, Actor: "bob", PR: pr, Units: p.Units}); len(denied) != 1 {
		t.Errorf("a failed lint: denied %v, want the unit", denied)
	}
}
