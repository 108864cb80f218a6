package report

import "fmt"

// Unit statuses (docs/behaviour.md#report), plus the scheduler's own transient ones.
// Status is how a unit ended a command.
type Status string

const (
	StatusPlanned   Status = "planned"
	StatusNoChanges Status = "no_changes"
	StatusApplied   Status = "applied"
	StatusDestroyed Status = "destroyed"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
	StatusBlocked   Status = "blocked"
	// StatusDeferred is a consumer whose inputs its producer's plan
	// leaves unknown: it plans once that producer is applied, in the
	// apply that applies it (docs/behaviour.md#deferred-units).
	StatusDeferred  Status = "deferred"
	StatusSkipped   Status = "skipped"
	StatusCancelled Status = "cancelled"
	// StatusDenied is a unit the config's controls refused to the person
	// or pull request the command runs for (docs/controls.md): nothing of
	// it ran.
	StatusDenied Status = "denied"
	// StatusMissing is a unit of a run shared by CI jobs that no job
	// recorded a result for, or whose recorded result was refused
	// (docs/ci.md#a-result-that-lies).
	StatusMissing Status = "missing"

	// StatusPending is a unit the scheduler has not settled yet; a
	// report never shows it (a unit still pending when the command ends
	// is cancelled).
	StatusPending Status = "pending"
)

// Dead says a unit ended so that what waits for it can never go on:
// failed, denied, or skipped for one that did.
func (s Status) Dead() bool {
	return s == StatusFailed || s == StatusDenied || s == StatusSkipped
}

// Changes counts a plan's changes: resources to add, change and destroy
// (a replacement is one add and one destroy), and root module outputs
// whose value changes, appears or goes.
type Changes struct {
	Add     int `json:"add"`
	Change  int `json:"change"`
	Destroy int `json:"destroy"`
	Outputs int `json:"outputs"`
}

// String is "+add ~change -destroy", then "~N output(s)" when outputs
// change.
func (c Changes) String() string {
	s := fmt.Sprintf("+%d ~%d -%d", c.Add, c.Change, c.Destroy)
	if c.Outputs > 0 {
		s += " ~" + CountOf(c.Outputs, "output")
	}
	return s
}

// Step names, as the report shows them.
const (
	StepInit      = "init"
	StepWorkspace = "workspace"
	StepPlan      = "plan"
	StepApply     = "apply"
	StepOutput    = "output"
	// StepOutputRecord is reading a unit's outputs from the run state,
	// its state unchanged since they were read (docs/behaviour.md#outputs-without-init).
	StepOutputRecord = "output (recorded)"
	StepValidate     = "validate"
	// StepLock is the engine's providers lock; StepLockShared the lock
	// file another unit's lock command wrote for the same inputs.
	StepLock       = "providers lock"
	StepLockShared = "providers lock (shared)"
	StepRun        = "run"
	StepShow       = "show"
	StepEnv        = "env"
	StepOIDC       = "oidc"
	// The policy tools a step may run from PATH.
	StepCheckov  = "checkov"
	StepConftest = "conftest"
	StepOPA      = "opa"
	// StepState is recording the run state: a failure to write it fails
	// the unit, since a later run would act on a record that is wrong.
	StepState = "state"
)

// Replanned is how the plan an apply made compares with the reviewed plan
// it replaced.
type Replanned struct {
	// ReviewedBy is where the reviewed plan was made: "PR #5", or "the
	// plan run at <time>".
	ReviewedBy string  `json:"reviewed_by"`
	Reviewed   Changes `json:"reviewed"`
	// New are the new plan's changes: what was applied, or would have been.
	New Changes `json:"new"`
	// Same says the new plan makes the changes the reviewed one made: the
	// same resources with the same actions and planned values, and the
	// same outputs.
	Same bool `json:"same"`
	// Reused says the apply applied the reviewed plan itself: nothing was
	// planned again, and New is Reviewed.
	Reused bool `json:"reused,omitempty"`
	// PullRequest is the pull request the reviewed plan was made for
	// ("PR #5"); "" for a plan run outside one.
	PullRequest string `json:"pull_request,omitempty"`
}

// Reason is the unit's reason: Text, save for the reviewed plan of a plan
// run outside a pull request applied as it is, the everyday plan then
// apply at a terminal, which the report's replanned records and the
// console notes.
func (rp *Replanned) Reason(verb string) string {
	if rp.Reused && rp.PullRequest == "" {
		return ""
	}
	return rp.Text(verb)
}

// Text is the comparison as a reason: verb names what happened to the
// new plan's changes ("applied", "new").
func (rp *Replanned) Text(verb string) string {
	if rp.Reused {
		return "applied the reviewed plan from " + rp.ReviewedBy
	}
	if rp.Same {
		return "re-planned: same changes as the reviewed plan, from " + rp.ReviewedBy
	}
	return fmt.Sprintf("re-planned: differs from the reviewed plan, from %s (reviewed %s, %s %s)", rp.ReviewedBy, rp.Reviewed, verb, rp.New)
}
