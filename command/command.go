// Package command says what each of strata's run commands means: one
// policy per command in one table, which the scheduler, the report and the
// CLI ask instead of comparing command names
// (docs/architecture.md#command).
package command

// Names of the commands that run over units.
const (
	Init     = "init"
	Plan     = "plan"
	Apply    = "apply"
	Destroy  = "destroy"
	Drift    = "drift"
	Validate = "validate"
	Output   = "output"
	// ProvidersLock is `strata providers lock`.
	ProvidersLock = "providers lock"
)

// Job is what a unit's first job in a command does.
type Job int

const (
	// JobPlan plans (in apply, reusing a current saved plan), and may
	// plan and apply in one engine call.
	JobPlan Job = iota
	// JobInit runs the unit's init workflow, init always running.
	JobInit
	// JobValidate inits without a backend and validates.
	JobValidate
	// JobOutput inits when needed and reads the unit's outputs.
	JobOutput
	// JobProvidersLock completes the unit's lock file for its platforms.
	JobProvidersLock
)

// Policy is what one command does with the units of a run
// (docs/behaviour.md#commands).
type Policy struct {
	Name string
	// Job is what a unit's first job runs.
	Job Job

	// ReadsOnly: every unit runs at once, with no order between them
	// and no input values; a unit that does not end succeeded fails
	// the command.
	ReadsOnly bool
	// Plans: units plan, and get the values of their inputs.
	Plans bool
	// Applies: the command changes infrastructure. It needs
	// -auto-approve where nobody can be asked, holds the repository's
	// apply lock, and a unit left planned or blocked fails it.
	Applies bool
	// Destroys: plans are destroy plans, in destroy order; producers'
	// outputs are read as they stand before anything is destroyed.
	Destroys bool
	// AutoApplies: the units of auto_apply stacks are applied within
	// the command; what waits keeps their name in its reason.
	AutoApplies bool

	// IgnoresGates: every unit starts at once, whatever it waits for.
	IgnoresGates bool
	// WaitsOnlyForPrerequisites: every unit starts at once but one whose
	// stack requires a stale auto_apply prerequisite, which waits for
	// that prerequisite's apply (docs/behaviour.md#prerequisites).
	WaitsOnlyForPrerequisites bool
	// HoldsPlanned: when what a unit waits for fails after the unit
	// planned, the unit ends planned (its apply is what is held) rather
	// than skipped.
	HoldsPlanned bool
	// AsItStands: units are compared with what is deployed now. Inputs
	// are the producers' outputs as they stand, and nothing is read for
	// readers after a plan.
	AsItStands bool
	// FeedsReaders: outputs are read after a plan or apply for the units
	// that read them, consumers outside the run join it when an output
	// they read changes, and a consumer may plan against its producer's
	// plan before that is applied.
	FeedsReaders bool
	// TakesPrerequisites: a stale prerequisite stack joins the run, to
	// be applied first when the command applies or the stack
	// auto-applies; otherwise the units requiring it end blocked.
	TakesPrerequisites bool

	// ReviewsPlans: the saved plans the command makes are what a review
	// sees.
	ReviewsPlans bool
	// ReusesPlans: a current saved plan is applied rather than a new
	// one; a plan made again is compared with the reviewed one, and
	// --require-reviewed-plan may refuse it. A plan with nothing to
	// change records the unit as deployed at its content.
	ReusesPlans bool
	// OneCallApply: a unit nobody reviews may plan and apply in one
	// engine call.
	OneCallApply bool

	// Detailed: the exit code is always the detailed one (2 when
	// anything changed or would change); DetailedOnRequest: so with
	// -detailed-exitcode.
	Detailed, DetailedOnRequest bool
	// HandlesDeleted: units whose dir was deleted are planned for
	// destroy (--destroy-deleted).
	HandlesDeleted bool
	// SavesPlanFile: in a unit's dir, -out FILE writes the saved plan;
	// AppliesPlanFile: in a unit's dir, a FILE argument is a saved plan
	// to apply.
	SavesPlanFile, AppliesPlanFile bool
	// PrintsOutputs: the command prints the units' outputs.
	PrintsOutputs bool
	// Controlled is the access_control operation that governs the
	// command, "plan" or "apply"; "" when the controls leave it alone
	// (docs/controls.md#in-a-run).
	Controlled string
	// Recorded: each run is kept in the history (docs/behaviour.md#history).
	// ChecksDrift: a unit whose plan has changes has drifted from its code,
	// one without is in sync, and the history says so.
	Recorded, ChecksDrift bool
}

var policies = map[string]*Policy{
	Init:          {Name: Init, Job: JobInit, ReadsOnly: true, IgnoresGates: true},
	Validate:      {Name: Validate, Job: JobValidate, ReadsOnly: true, IgnoresGates: true},
	Output:        {Name: Output, Job: JobOutput, ReadsOnly: true, IgnoresGates: true, PrintsOutputs: true},
	ProvidersLock: {Name: ProvidersLock, Job: JobProvidersLock, ReadsOnly: true, IgnoresGates: true},
	Plan: {Name: Plan, Plans: true, AutoApplies: true, HoldsPlanned: true, FeedsReaders: true,
		TakesPrerequisites: true, ReviewsPlans: true, DetailedOnRequest: true, HandlesDeleted: true,
		SavesPlanFile: true, Controlled: "plan", Recorded: true},
	Apply: {Name: Apply, Plans: true, Applies: true, FeedsReaders: true, TakesPrerequisites: true,
		ReusesPlans: true, OneCallApply: true, HandlesDeleted: true, AppliesPlanFile: true, Controlled: "apply", Recorded: true},
	Destroy: {Name: Destroy, Plans: true, Applies: true, Destroys: true, Controlled: "apply", Recorded: true},
	Drift: {Name: Drift, Plans: true, WaitsOnlyForPrerequisites: true, TakesPrerequisites: true, HoldsPlanned: true,
		AsItStands: true, Detailed: true, Recorded: true, ChecksDrift: true},
}

// Of is the policy of a command. A name that is none of the run commands
// (an engine command passed through) gets a policy that does none of
// these things, and ok false.
func Of(name string) (p *Policy, ok bool) {
	if p, ok := policies[name]; ok {
		return p, true
	}
	return &Policy{Name: name}, false
}

// Names are the run commands, in the order the CLI lists them.
func Names() []string {
	return []string{Init, Plan, Apply, Destroy, Drift, Validate, Output, ProvidersLock}
}

// Must is the policy of a run command; it panics on any other name, a
// programming error.
func Must(name string) *Policy {
	p, ok := Of(name)
	if !ok {
		panic("command: no policy for " + name)
	}
	return p
}
