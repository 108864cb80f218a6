package job

import (
	"encoding/json"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// Unit is what a unit's jobs work with: its paths, environment, engine
// and what its steps learn along the way. The coordinator fills it before
// the unit's first job and hands it to one job at a time.
type Unit struct {
	Spec   *stacks.Unit
	Vars   *Vars // its stack variables, read once
	Choice stacks.EngineChoice
	Engine *engines.Engine

	Dir, DataDir, PlanFile, VarFile, TmpDir string
	OwnDataDir                              bool
	Env                                     map[string]string
	Masker                                  *console.Masker
	// Display is what the console knows of the unit.
	Display    *console.Unit
	AutoApply  bool
	ForceApply bool // a stale prerequisite: applied even without changes
	UserPlan   bool // PlanFile is the user's (apply FILE): never removed
	// PlanAfter are the units this one plans after, in groups: a saved
	// plan made before one of them was applied is not reused. The units of
	// a stack it plans after are one group, shared by the stack's units.
	PlanAfter [][]*stacks.Unit
	// ChangedOutputs are the outputs its plan changes, when OutputsKnown;
	// set by the coordinator when the plan ends, read by its apply job.
	ChangedOutputs []string
	OutputsKnown   bool

	InputVals map[string]json.RawMessage // input values, set before its plan
	Inited    bool                       // init ran or was found current in this command
	InitArgs  engineargs.InitArgs        // the init arguments of the unit's init step
	// Reviewed is the saved plan a review saw, as the unit's plan job in
	// apply found it (takeReviewed): its apply job compares a plan made
	// again with it, when the review was this apply's (ReviewedHere).
	Reviewed *runstate.PlanRecord
	// ReviewedHere says Reviewed was made for the pull request this apply
	// applies (reviewedFor), AppliesPR ("" when it knows none).
	ReviewedHere bool
	AppliesPR    string
}

// Kind is which job of a unit runs.
type Kind int

const (
	// Plan is the command's first job (Policy.Job): a plan, an init, a
	// validate or an output.
	Plan Kind = iota
	// Apply applies the unit's plan.
	Apply
	// PlanApply plans and applies in one engine call (apply without a
	// plan file) where nobody reviews the plan and nothing needs its file;
	// the job falls back to a plain plan when it finds otherwise.
	PlanApply
)
