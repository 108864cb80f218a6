package runner

import (
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// Role is what a unit is to a command: one it runs, or one outside the
// run that the run needs something from.
type Role int

const (
	// RoleMember runs: it was selected, or propagation brought it in.
	RoleMember Role = iota
	// RolePrerequisite runs because a stale prerequisite brings it in.
	RolePrerequisite
	// RoleGate is outside the run; a unit of the run waits for it (under
	// --changed, a modified unit the selection left out; under --resume,
	// one the report left planned). It opens only when the run state shows
	// it applied at its current digest.
	RoleGate
	// RoleProducer is outside the run; its outputs feed a unit of the run
	// and are read as they stand.
	RoleProducer
	// RoleSettled is a unit of the same run that another job of a CI run
	// has already settled (an earlier wave, docs/ci.md): it never runs
	// here, and holds its gates as its recorded status says.
	RoleSettled
	// RoleReader is a consumer outside the run of a producer the command
	// may apply. It joins the run, after its producers, only when an apply
	// of this command (or, in a CI job, of an earlier job of the run)
	// changes an output it reads; otherwise it is dropped unseen: it never
	// runs and is not in the report (docs/behaviour.md#inputs-between-stacks).
	RoleReader
	// RoleBarrier is no unit: it stands for a rule between two stacks
	// (barrier.go), and is never in a listing or the report.
	RoleBarrier
)

// outside reports whether the role never runs.
func (r Role) outside() bool {
	return r == RoleGate || r == RoleProducer || r == RoleSettled || r == RoleBarrier
}

// member is a unit of a command with its role; a settled one also with
// the status and root cause its job recorded.
type member struct {
	stacks.RunUnit
	role       Role
	status     report.Status
	rootCause  string
	rootDenied bool
	// lazy: a producer outside the run that only readers need, read
	// when one of them joins the run.
	lazy bool
	// changedOutputs are what a settled unit's apply changed, when
	// outputsKnown.
	changedOutputs []string
	outputsKnown   bool
	// unknownOutputs are what a settled unit's plan left unknown until
	// its apply.
	unknownOutputs []string
}
