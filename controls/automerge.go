package controls

import (
	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks/config"
)

// Automerge is the config's automerge, defaults applied
// (docs/controls.md#automerge).
type Automerge struct {
	Enabled              bool `json:"enabled,omitempty"`
	DeleteBranch         bool `json:"delete_branch,omitempty"`
	RequireExplicitApply bool `json:"require_explicit_apply,omitempty"`
}

// AutomergeOf reads a config's automerge.
func AutomergeOf(cfg *config.Config) Automerge {
	a := cfg.Automerge
	if a == nil {
		return Automerge{}
	}
	return Automerge{Enabled: a.Enabled.Value, DeleteBranch: a.DeleteBranch.Value, RequireExplicitApply: a.RequireExplicitApply.Value}
}

// Merges says whether a command that ended with these units merges its
// pull request: an apply whose every unit applied or had nothing to
// apply, or, unless RequireExplicitApply, a plan whose auto_apply units
// applied and which left nothing planned. A destroy never merges.
func (a Automerge) Merges(pol *command.Policy, units []*report.UnitReport) bool {
	if !a.Enabled || len(units) == 0 || pol.Destroys {
		return false
	}
	applied := 0
	for _, u := range units {
		switch u.Status {
		case report.StatusApplied:
			applied++
		case report.StatusNoChanges, report.StatusSucceeded:
		default:
			return false
		}
	}
	switch {
	case pol.Applies:
		return true
	case pol.AutoApplies && !a.RequireExplicitApply:
		return applied > 0
	}
	return false
}
