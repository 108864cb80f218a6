package runner

import (
	"io"
	"os"
	"time"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// Answer is the reply to `Apply N units? [yes/all/no]`.
type Answer int

// Options shape one command, in four groups: what the command does
// (Settings, which a CI manifest carries), where what people read goes
// (Output), what the caller is told or asked as the run goes (Hooks), and
// what the caller composes the run with (Extra). Each group's fields are
// promoted: opt.AutoApprove is opt.Settings.AutoApprove.
type Options struct {
	Settings
	Output
	Hooks
	Extra
}

// Settings are what the command does (job.Settings).
type Settings = job.Settings

// DefaultParallelism is how many units run at once when neither a flag
// nor the config says.
const DefaultParallelism = 4

// AllAtOnce is the parallelism of -j 0: every ready unit at once.
const AllAtOnce = job.AllAtOnce

// Output is where what people read goes, and how.
type Output struct {
	// Console receives what people read; ErrConsole strata's notes and the
	// engine's stderr in drop-in (Console when nil). Terminal says Console
	// is one.
	Console    io.Writer
	ErrConsole io.Writer
	Terminal   bool
	// DropIn streams the engine's output unchanged (one unit, docs/behaviour.md#steps-of-a-unit).
	DropIn bool
	// Colour shows the engine's output in colour: Console is a terminal
	// and nothing said no (docs/behaviour.md#colour). What is kept or
	// read of the output is without colour.
	Colour bool
	// Stream prints every line of the engine's output as it comes,
	// prefixed with its unit, with no status block (--output stream).
	Stream bool
	// Full shows every line of a unit's init and plan at a terminal
	// (--output full), where a successful init is folded to one line and a
	// plan to its change list (docs/behaviour.md#console-output).
	Full bool
	// StillEvery is how often a long step reports it is still running
	// without a terminal (60 s when zero).
	StillEvery time.Duration
}

// Hooks are what the caller is asked or told as the run goes.
type Hooks struct {
	// Approve asks about a wave of plans; nil means no one can be asked.
	Approve func(units []*report.UnitReport) (Answer, error)
	// Kill is closed on a second interrupt: finish at once.
	Kill <-chan struct{}
	// ReaderDone is called as each reader that did not join the run ends,
	// with its report: no_changes when its inputs did not change; skipped,
	// blocked or cancelled as what it waits for ended. CI jobs record it
	// for the jobs of later waves. A reader that joins ends through
	// UnitDone like any unit.
	ReaderDone func(*stacks.Unit, *report.UnitReport)
	// UnitDone is called by the scheduler as each unit of the run ends,
	// with its final report, before the command ends; CI jobs record
	// results there, so a job that dies keeps what it finished.
	UnitDone func(*stacks.Unit, *report.UnitReport)
	// Applying is called as an apply with changes starts, with the digest
	// it applies: before the engine when a saved plan is applied (an error
	// fails the unit, nothing applied), and as the engine prints its plan
	// when one call plans and applies. CI jobs record it, so a retry knows
	// an earlier attempt applied what it could not record
	// (docs/ci.md#an-apply-the-bucket-did-not-take).
	Applying func(u *stacks.Unit, digest string) error
	// ApplyRefused is called when the engine refused, as stale, a saved
	// plan Applying was called for: it changed nothing, and a record
	// Applying made must not make a retry believe otherwise.
	ApplyRefused func(u *stacks.Unit) error
	// MergedPullRequest names the pull request whose merge a CI apply
	// applies ("PR #5"), when its environment names none (a push): ""
	// when there is none or the forge cannot tell. It is asked only when a
	// reviewed plan of a pull request is met, and answers the same each
	// time (docs/behaviour.md#saved-plans).
	MergedPullRequest func() string
	// Repo opens the project's git work tree, once for the command (the
	// caller keeps it for what it records after the run too), for the
	// commit units record as deployed; nil opens it here.
	Repo func() (*git.Repo, error)
}

// Extra is what the caller composes the run with beyond its settings:
// units outside it and settled elsewhere, what is known of them before
// it starts, and the process's environment, installer and clocks.
type Extra struct {
	// External are units outside the run that its gates wait for: under
	// --changed the modified units left out by selection, under --resume
	// the units the report left planned. Each opens only when the run
	// state shows it applied at its current digest.
	External []*stacks.Unit
	// Settled are units of the same CI run settled by earlier jobs,
	// with how each ended (docs/ci.md). They join the graph and never
	// run: one that applied, had no changes or succeeded opens its gates
	// (and feeds its outputs to consumers); one that failed or was
	// skipped skips its dependents, naming the root cause; any other
	// holds them, as in a run on one machine.
	Settled []Settled
	// Readers are the units a CI job's manifest marks as readers
	// (docs/ci.md#readers). They join the graph as the readers of a run on
	// one machine do (RoleReader): each joins the run only when a producer,
	// of this job or settled by an earlier one, applied a change to an
	// output it reads.
	Readers []*stacks.Unit
	// Warnings are what a unit's report must say beyond its status, known
	// before the run (a corrupt record in the state bucket moved aside):
	// printed as the run starts, and kept in the unit's report.
	Warnings map[*stacks.Unit][]string
	// Denied are the units the config's controls refuse to this command,
	// each with why (docs/controls.md#in-a-run): it ends denied and runs
	// nothing, and what waits for it is skipped naming it.
	// AutoApplyDenied are the auto_apply units whose apply they refuse:
	// plan plans each and leaves it planned, saying why.
	Denied, AutoApplyDenied map[*stacks.Unit]string
	// Controls, when set, is asked once the units that may run are known
	// (the run's, stale prerequisites, readers) what the controls refuse
	// of them, added to Denied and AutoApplyDenied.
	Controls ControlsFunc
	// Gates, when set, says why the gates a unit's plan raised still hold
	// its apply ("" once approved; docs/controls.md#gates). Without it a
	// gate holds the apply: its approvals are read from a pull request.
	Gates GateFunc

	// Environ is strata's environment (os.Environ() when nil).
	Environ []string
	// Installer resolves engines (engines.NewInstallerFromEnv when nil).
	Installer *engines.Installer
	// RetryDelay is the first pause between tries of a transient failure
	// (5 s when zero; ×1.5 each try).
	RetryDelay time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	// handedOff, when set, is told of each job that hands its worker
	// slot on, at that moment, from the job's goroutine (tests).
	handedOff func(u *stacks.Unit, kind job.Kind)
}

// ControlsFunc decides what the config's controls refuse of a command:
// the units it may not run at all, and the auto_apply units among
// autoApply whose apply it may not make, each with why, and what each
// unit's report must say of how they were read (warnings)
// (docs/controls.md#in-a-run).
type ControlsFunc func(units, autoApply []*stacks.Unit) (denied, autoApplyDenied map[*stacks.Unit]string, warnings map[*stacks.Unit][]string)

// GateFunc says why a unit's gates still hold its apply, "" when they
// are approved (docs/controls.md#gates).
type GateFunc func(u *stacks.Unit, gates []report.Gate) string

// Settled is a unit settled by another job of a CI run.
type Settled struct {
	Unit   *stacks.Unit
	Status report.Status
	// Cause names the failed unit at the root of a skipped one;
	// CauseDenied says the controls denied it rather than it failed.
	Cause       string
	CauseDenied bool
	// ChangedOutputs are the outputs its apply in the run changed, when
	// OutputsKnown: they decide whether its readers join.
	ChangedOutputs []string
	OutputsKnown   bool
	// UnknownUntilApplied are the outputs its plan in the run left unknown
	// until its apply: its consumers here are deferred on them while it is
	// planned, and say they planned once they were known after it applied
	// (docs/behaviour.md#deferred-units).
	UnknownUntilApplied []string
}

// Result is a finished command.
type Result struct {
	Report   *report.Report
	ExitCode int
	// Warnings are the warnings the run printed, each once.
	Warnings []console.Warning
}

// UsageError is a problem with the command itself, found before anything
// runs (exit 1).
type UsageError struct{ Msg string }

// WithDefaults is the options with every unset field at its default: the
// parallelism (the config's parallel_runs, else DefaultParallelism), the
// clock, the environment, the pull request from the CI's environment, the
// retry delay, how often a long step says it is still running, and a
// console that discards.
func (o Options) WithDefaults(p *stacks.Project) Options {
	if o.Parallelism == 0 && p.Config.ParallelRuns.Set {
		o.Parallelism = p.Config.ParallelRuns.Value
		if o.Parallelism == 0 {
			o.Parallelism = AllAtOnce
		}
	}
	if o.Parallelism == 0 {
		o.Parallelism = DefaultParallelism
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.PullRequest == "" {
		o.PullRequest = job.PullRequestOf(o.Environ)
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = 5 * time.Second
	}
	if o.StillEvery == 0 {
		o.StillEvery = time.Minute
	}
	if o.Console == nil {
		o.Console = io.Discard
	}
	return o
}

func (e *UsageError) Error() string { return e.Msg }
