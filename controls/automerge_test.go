package controls

import (
	"testing"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/report"
)

func TestAutomergeMerges(t *testing.T) {
	apply, _ := command.Of(command.Apply)
	plan, _ := command.Of(command.Plan)
	destroy, _ := command.Of(command.Destroy)
	units := func(ss ...report.Status) []*report.UnitReport {
		var out []*report.UnitReport
		for _, s := range ss {
			out = append(out, &report.UnitReport{Status: s})
		}
		return out
	}
	on := Automerge{Enabled: true}
	explicit := Automerge{Enabled: true, RequireExplicitApply: true}
	for _, tc := range []struct {
		name  string
		a     Automerge
		pol   *command.Policy
		units []*report.UnitReport
		want  bool
	}{
		{"off", Automerge{}, apply, units(report.StatusApplied), false},
		{"apply, all applied", on, apply, units(report.StatusApplied, report.StatusNoChanges), true},
		{"apply, nothing to apply", on, apply, units(report.StatusNoChanges), true},
		{"apply, one failed", on, apply, units(report.StatusApplied, report.StatusFailed), false},
		{"apply, one left planned", on, apply, units(report.StatusApplied, report.StatusPlanned), false},
		{"apply, one denied", on, apply, units(report.StatusApplied, report.StatusDenied), false},
		{"apply, no units", on, apply, nil, false},
		{"plan auto-applied everything", on, plan, units(report.StatusApplied, report.StatusNoChanges), true},
		{"plan auto-applied, explicit apply required", explicit, plan, units(report.StatusApplied), false},
		{"plan left one planned", on, plan, units(report.StatusApplied, report.StatusPlanned), false},
		{"plan with no changes", on, plan, units(report.StatusNoChanges), false},
		{"explicit apply", explicit, apply, units(report.StatusApplied), true},
		{"destroy", on, destroy, units(report.StatusDestroyed), false},
	} {
		if got := tc.a.Merges(tc.pol, tc.units); got != tc.want {
			t.Errorf("%s: merges %v, want %v", tc.name, got, tc.want)
		}
	}
}
