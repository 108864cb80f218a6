package job

import (
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/engineargs"
)

// Settings are what one command does, as its flags say it: the command
// and everything that changes what it plans, applies or records. The
// coordinator reads the scheduling ones (Parallelism, FailFast,
// NoPropagate, LockTimeout, the state dir), a unit's job the rest.
//
// The fields tagged for JSON are the settings a CI run fixes for all its
// jobs when it starts (docs/ci.md#waves-and-shards): a manifest carries them
// as they are, and each job runs with them. The others belong to one
// machine (its state dir, files it writes) or are decided by each job.
type Settings struct {
	// Command is the engine command: plan, apply, destroy, drift, …;
	// command.PolicyOf says what it means.
	Command string `json:"-"`
	// Parallelism is how many units run at once (0: the config's
	// parallel_runs, else the default; runner.Options.WithDefaults);
	// AllAtOnce: every ready unit (-j 0, docs/behaviour.md#ordering-and-gates).
	Parallelism int `json:"parallelism,omitempty"`
	// EngineArgs are the engine arguments typed after -- or among
	// strata's flags. A manifest carries them as given; a job reads them
	// again against its own checkout.
	EngineArgs engineargs.EngineArgs `json:"engine_args,omitzero"`
	// AutoApprove is -auto-approve: apply without asking.
	AutoApprove bool `json:"auto_approve,omitempty"`
	// NoAutoApply keeps plan from applying auto_apply units.
	NoAutoApply bool `json:"no_auto_apply,omitempty"`
	// DetailedExitCode is plan's -detailed-exitcode: exit 2 when some
	// unit has changes.
	DetailedExitCode bool `json:"detailed_exitcode,omitempty"`
	// RequireReviewedPlan (apply) applies no changes but those of a
	// reviewed saved plan (docs/behaviour.md#saved-plans).
	RequireReviewedPlan bool `json:"require_reviewed_plan,omitempty"`

	// PullRequest names where this command's plans are made for review
	// ("PR #5"), recorded with each plan; read from the CI's environment
	// when empty.
	PullRequest string `json:"-"`
	// FailFast starts nothing new after the first failure.
	FailFast bool `json:"-"`
	// NoHooks runs none of the config's pre and post hooks
	// (docs/behaviour.md#hooks).
	NoHooks bool `json:"-"`
	// NoPropagate (--no-propagate) keeps the run as selected: no consumer
	// joins it when a producer's apply changes an output it reads.
	NoPropagate bool `json:"-"`
	// StateDir is the state directory (default <root>/.strata).
	StateDir string `json:"-"`
	// ScratchState says the state directory is a copy of state kept
	// elsewhere (StateDir.Scratch): a CI job's.
	ScratchState bool `json:"-"`
	// LockTimeout bounds the wait for the repository apply lock; zero
	// fails at once when another process holds it.
	LockTimeout time.Duration `json:"-"`
	// KillAfter is how long an interrupted engine gets before SIGKILL;
	// zero never kills.
	KillAfter     time.Duration `json:"-"`
	ShowSensitive bool          `json:"-"`
	NoPluginCache bool          `json:"-"`
	// PlanOut also writes the saved plan to this file (drop-in plan -out).
	PlanOut string `json:"-"`
	// ApplyFile applies this saved plan (drop-in apply FILE).
	ApplyFile string `json:"-"`
	// PlanJSON writes `show -json` of every saved plan under this dir.
	PlanJSON string `json:"-"`
}

// Destroying says the command destroys: destroy, or a plan or apply
// with -destroy. Its units are ordered as destroy orders them.
func (s Settings) Destroying() bool {
	pol, ok := command.Of(s.Command)
	return ok && pol.Destroys || s.EngineArgs.Plan.Destroy
}

// AllAtOnce is the Parallelism of `-j 0` (and `parallel_runs: 0`): no
// bound, every ready unit runs at once (docs/behaviour.md#ordering-and-gates).
const AllAtOnce = -1
