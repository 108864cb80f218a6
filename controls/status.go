package controls

import (
	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks/config"
)

// ApplyStatusName is the commit status strata keeps on a pull request's
// head commit while its plans wait to be applied
// (docs/controls.md#the-apply-status). It is never counted among the
// status checks an apply needs.
const ApplyStatusName = "strata apply"

// StatusSettings are apply_requirements' commit status keys, with
// Terrateam's defaults once the section is written; both off without it.
type StatusSettings struct {
	// Pending: a plan with changes sets the apply status pending, and the
	// apply that applies them all sets it to success.
	Pending bool `json:"pending,omitempty"`
	// CompletedOnNoop: a plan with nothing to apply sets it to success.
	CompletedOnNoop bool `json:"completed_on_noop,omitempty"`
}

// StatusSettingsOf reads the commit status keys of a config.
func StatusSettingsOf(cfg *config.Config) StatusSettings {
	ar := cfg.ApplyRequirements
	if ar == nil {
		return StatusSettings{}
	}
	return StatusSettings{Pending: ar.CreatePendingApplyCheck.Get(true), CompletedOnNoop: ar.CreateCompletedApplyCheckOnNoop.Get(false)}
}

// Apply status states, as GitHub names them.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailure = "failure"
)

// ApplyStatus is what the apply status becomes after a command ended
// with these units, and ok false when it is left as it is: a plan with
// changes makes it pending; an apply makes it success when nothing is
// left to apply, failure when a unit failed, was denied, skipped or
// cancelled, and leaves it pending otherwise; a plan with nothing to
// apply completes it when CompletedOnNoop.
func (s StatusSettings) ApplyStatus(pol *command.Policy, units []*report.UnitReport) (state, description string, ok bool) {
	if !s.Pending {
		return "", "", false
	}
	left, bad := 0, 0
	for _, u := range units {
		switch u.Status {
		case report.StatusPlanned, report.StatusBlocked, report.StatusDeferred:
			left++
		case report.StatusFailed, report.StatusDenied, report.StatusSkipped, report.StatusCancelled, report.StatusMissing:
			bad++
		}
	}
	toApply := report.CountOf(left, "unit") + " to apply"
	switch {
	case pol.Applies && bad > 0:
		return StatusFailure, report.CountOf(bad, "unit") + " not applied", true
	case pol.Applies && left > 0:
		return StatusPending, toApply, true
	case pol.Applies:
		return StatusSuccess, "everything applied", true
	case !pol.ReviewsPlans:
		return "", "", false
	case left > 0:
		return StatusPending, toApply, true
	case bad == 0 && s.CompletedOnNoop:
		return StatusSuccess, "nothing to apply", true
	}
	return "", "", false
}
