package job

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// A step is a value of one of the kinds in stepKinds
// (docs/architecture.md#a-units-job): the job, or the hooks, prepare a
// stepInput for it, the step's kind runs it and returns a stepOutput, and
// the job folds that output into what the later steps see. A kind's
// build functions (its argv, its environment, its engine call) are apart
// from running them, and are what its tests read.

// stepKind is one kind of step: run takes the prepared input and returns
// what the step did and what it adds for the later steps.
type stepKind interface {
	run(ctx context.Context, in *stepInput) stepOutput
}

// stepKinds are the kinds of step a workflow or a hook runs, by type. A
// type not here (gates, slack, drift_create_issue: Terrateam's own) is
// accepted and ignored.
var stepKinds = map[string]stepKind{
	report.StepInit:     &initStep{},
	report.StepPlan:     &planStep{},
	report.StepApply:    &applyStep{},
	report.StepRun:      &runStep{},
	report.StepEnv:      &envStep{},
	report.StepOIDC:     &oidcStep{},
	report.StepCheckov:  &toolStep{},
	report.StepConftest: &toolStep{},
	report.StepOPA:      &toolStep{},
}

// stepInput is everything a step reads: the step as configured, the
// environment it starts from, what earlier steps set, how names are
// substituted, and what runs the processes and engine calls it builds.
// The job prepares one for the unit (newJob) and copies it per step
// (forStep); the hooks prepare their own (Hook set).
type stepInput struct {
	// Step is the step as configured; Where names it in messages
	// ("plan step 2 (run)", "hooks.all.pre[0]").
	Step  stacks.RunStep
	Where string
	// Name is the step's name in the report, its span and a failure: its
	// type in a unit's workflow, its key in hooks.
	Name string
	// Hook says the step is a hook's (docs/behaviour.md#hooks): it runs
	// in the repository root, its notes and errors name the hook, and its
	// output goes where the engine's stderr goes.
	Hook bool

	// Stack and UnitID are the unit's ("" for hooks); Who is what a note
	// names (the unit, or "hooks").
	Stack, UnitID, Who string
	// Dir is where the step runs, absolute.
	Dir string
	// Env is the environment every step starts from: the unit's
	// (UnitEnv), or the hooks' own.
	Env map[string]string
	// TFVarEnv are the TF_VAR_ values a process step gets beyond Env,
	// under their TF_VAR_ names: strata's and the stack variables'.
	TFVarEnv map[string]string
	// Set is what earlier env and oidc steps set, for the later steps;
	// the job's fold writes it.
	Set map[string]string
	// Vars are the unit's stack variables (nil for hooks).
	Vars *Vars
	// Environ is strata's own environment, credentials included.
	Environ []string
	// EngineArgs are the command's engine arguments, which a step's
	// extra_args are merged with.
	EngineArgs engineargs.EngineArgs
	// InitAlways: the command is init, which runs even when the unit's
	// data dir is current. RetryDelay is the delay before an apply's
	// first retry when its step names none.
	InitAlways bool
	RetryDelay time.Duration

	// Engine is the engine's path, EngineVersion its version as strata
	// resolved it (nil when unknown); PlanFile the unit's saved plan.
	Engine, PlanFile string
	EngineVersion    *version.Version
	Masker           *console.Masker
	Display          *console.Unit
	// Now is the run's clock.
	Now func() time.Time

	// Gates are the gates earlier steps raised, which a saved plan's
	// record keeps (docs/controls.md#gates).
	Gates []report.Gate
	// WithRecord is a change of the job's that the record this step
	// writes when it ends well (a plan's, an apply's) carries as well:
	// for the job's last step, how long the job took (tookWith). Nil for
	// any other step.
	WithRecord func(*runstate.UnitState)
	// last says the step is the job's last: once its plan or apply
	// ended well, nothing of the job starts a process, and the job hands
	// its slot on (handOff).
	last bool
	// slot is the job's worker slot, when its coordinator lets it hand
	// the slot on (Links.HandOff); shared by the job's step inputs.
	slot *slot

	// exec runs the processes and OIDC exchanges a step builds; engine
	// the engine's calls of the engine's kinds (init, plan, apply).
	exec   stepExec
	engine engineSteps
	// run is the run's fixed context and ur the unit, which the engine's
	// kinds (init, plan, apply) read and run their calls in (nil for
	// hooks); memo is the unit's content digest, computed once for the
	// same inputs; reports is where the engine calls' step reports go:
	// the step's own, returned in its output, or for the job's own calls
	// the job's result.
	run     *Run
	ur      *Unit
	memo    *digestMemo
	reports *[]report.StepReport
}

// digestMemo is a unit's content digest and what it was computed from
// (prepareInputsWith).
type digestMemo struct {
	key, digest string
}

// stepOutput is what a step returns: its reports, its failure, and what
// it adds for the later steps.
type stepOutput struct {
	Reports []report.StepReport
	// Err is the step's failure; Failed names the failed step when that is
	// not the step's own name.
	Err    error
	Failed string
	// Set are the variables the step sets for the later steps; Secrets
	// the values to mask from now on.
	Set     map[string]string
	Secrets []string
	// Gate is the gate the step's failure raised (docs/controls.md#gates).
	Gate *report.Gate
	// Note is what the step says once it ended well.
	Note string
	// NoToken: an oidc step skipped, with no token outside CI.
	NoToken bool
	// Plan is what a plan step learnt of its plan; Apply what an apply
	// step's try did, from which the job decides what follows it.
	Plan  *planResult
	Apply *applyResult
}

// stepExec runs what a step built: a process, an OIDC exchange.
type stepExec interface {
	process(ctx context.Context, p process) (report.StepReport, error)
	credentials(ctx context.Context, st *config.OIDCStep, env map[string]string) (*oidc.Credentials, error)
}

// engineSteps runs what the engine's step kinds built (an init, a plan,
// an apply) in the step's input, and returns what each did: an init its
// failure, a plan what it learnt, an apply what it applied and how it
// ended. The step returns that as its output and the job folds it
// (docs/architecture.md#a-units-job); what follows an apply that failed
// (a retry, the stale plan made again) the job decides from it. Its one
// implementation is unitEngine; tests stand in for it.
type engineSteps interface {
	init(ctx context.Context, in *stepInput, req initRequest) error
	plan(ctx context.Context, in *stepInput, req planRequest) *planResult
	apply(ctx context.Context, in *stepInput, req applyRequest) applyResult
}

// unitEngine runs the engine's calls of a unit's steps: each method is in
// its kind's file (step_init.go, step_plan.go, step_apply.go).
type unitEngine struct{}

// credentials exchanges the job's OIDC token for a cloud's credentials.
func (r *Run) credentials(ctx context.Context, st *config.OIDCStep, env map[string]string) (*oidc.Credentials, error) {
	return oidc.Make(ctx, st, env)
}

// forStep is the input of one step: in, with the step, where it stands
// and its name.
func (in *stepInput) forStep(st stacks.RunStep, where, name string) *stepInput {
	c := *in
	c.Step, c.Where, c.Name = st, where, name
	c.reports = new([]report.StepReport)
	return &c
}

// lookup finds a name in a step's env, extra_args and the stack's
// targets (docs/behaviour.md#substitution): the unit's stack variables,
// then what earlier steps set, then strata's environment (credentials
// included, the way to ask for one), then the step's starting
// environment (STRATA_DIR, …).
func (in *stepInput) lookup(name string) (string, bool) {
	if in.Vars != nil {
		if v, ok := in.Vars.Lookup(name); ok {
			return v, true
		}
	}
	if v, ok := in.Set[name]; ok {
		return v, true
	}
	if v, ok := environ.Lookup(in.Environ, name); ok {
		return v, true
	}
	v, ok := in.Env[name]
	return v, ok
}

// cmdLookup finds a name in a step's cmd: the unit's stack variables,
// then the values strata itself sets from the config and its own paths
// (substituteCmd says why nothing else).
func (in *stepInput) cmdLookup(name string) (string, bool) {
	if in.Vars != nil {
		if v, ok := in.Vars.Lookup(name); ok {
			return v, true
		}
		if v, ok := in.Vars.LookupExported(name); ok {
			return v, true
		}
	}
	if strataValue(name) {
		v, ok := in.Env[name]
		return v, ok
	}
	return "", false
}

// unknown is the error of a name no lookup finds, at where it was
// written.
func (in *stepInput) unknown(name, at string, inCmd bool) error {
	switch {
	case in.Hook && inCmd:
		return fmt.Errorf("unknown variable %q in %s: a hook's cmd takes only strata's own values (STRATA_ROOT, STRATA_TMPDIR and their TERRATEAM_ names); "+
			"read any other variable in a shell, where it is data: ['sh', '-c', 'echo \"$%s\"']", name, at, name)
	case in.Hook:
		return fmt.Errorf("unknown variable %q in %s: not set by a hook nor in the environment; write $$ for a literal $", name, at)
	}
	return &SubstitutionError{Name: name, Stack: in.Stack, Where: at, InCmd: inCmd}
}

// subst substitutes s, written at at.
func (in *stepInput) subst(s, at string) (string, error) {
	out, name, ok := substitute(s, in.lookup)
	if !ok {
		return "", in.unknown(name, at, false)
	}
	return out, nil
}

// substAll substitutes each of ss, written at at.
func (in *stepInput) substAll(ss []string, at string) ([]string, error) {
	out := make([]string, len(ss))
	for i, s := range ss {
		v, err := in.subst(s, at)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// ownEnv is the step's own env, substituted, under the names written
// (TF_VAR_ ones included).
func (in *stepInput) ownEnv() (map[string]string, error) {
	env := make(map[string]string, len(in.Step.Env))
	for _, e := range in.Step.Env {
		v, err := in.subst(e.Value, in.Where+".env."+e.Key)
		if err != nil {
			return nil, err
		}
		env[e.Key] = v
	}
	return env, nil
}

// tfVarsOf are the TF_VAR_ values of an env, by variable name: they
// reach an engine through the var file.
func tfVarsOf(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if name, ok := strings.CutPrefix(k, "TF_VAR_"); ok {
			out[name] = v
		}
	}
	return out
}

// processEnv is the environment of a process a step runs: as the
// engine's, plus the TF_VAR_ values (a process is no engine call, so
// nothing refuses them), as sorted KEY=VALUE pairs.
func (in *stepInput) processEnv(own map[string]string) []string {
	env := make(map[string]string, len(in.Env)+len(in.TFVarEnv)+len(in.Set)+len(own))
	for _, m := range []map[string]string{in.Env, in.TFVarEnv, in.Set, own} {
		maps.Copy(env, m)
	}
	return EnvList(env)
}

// process is a process the step runs, in its dir, its block in the
// step's display.
func (in *stepInput) process(argv, env []string) process {
	return process{display: in.Display, masker: in.Masker, name: in.Name, where: in.Where, dir: in.Dir, argv: argv, env: env,
		who: in.Who, unitID: in.UnitID, errSide: in.Hook}
}

// engineArgs are an engine step's arguments: its extra_args, substituted
// and read as command's, merged with the command's engine arguments.
func (in *stepInput) engineArgs(command string) (engineargs.EngineArgs, error) {
	extra, err := in.substAll(in.Step.ExtraArgs, in.Where+".extra_args")
	if err != nil {
		return engineargs.EngineArgs{}, err
	}
	ea := in.EngineArgs
	if len(extra) > 0 {
		own, err := engineargs.Parse(command, extra, in.Dir)
		if err != nil {
			return engineargs.EngineArgs{}, fmt.Errorf("%s: extra_args: %w", in.Where, err)
		}
		ea = engineargs.Merge(own, ea)
	}
	return ea, nil
}

// engineStep is an engine step's arguments (engineArgs) and its own env,
// TF_VAR_ values included: these go to the var file (tfVarsOf).
func (in *stepInput) engineStep(command string) (engineargs.EngineArgs, map[string]string, error) {
	own, err := in.ownEnv()
	if err != nil {
		return engineargs.EngineArgs{}, nil, err
	}
	ea, err := in.engineArgs(command)
	if err != nil {
		return engineargs.EngineArgs{}, nil, err
	}
	return ea, own, nil
}

// failed is the output of a step that failed before it ran anything.
func failed(err error) stepOutput { return stepOutput{Err: err} }

// strataValues are the names strata sets in every step's environment from
// the config and its own paths (not from the process environment).
var strataValues = map[string]bool{
	"STRATA_STACK": true, "STRATA_STACK_INSTANCE": true, "STRATA_STACK_PATH": true, "STRATA_DIR": true, "STRATA_WORKSPACE": true, "STRATA_ROOT": true,
	"STRATA_ENGINE": true, "STRATA_ENGINE_VERSION": true, "STRATA_PLAN_FILE": true, "STRATA_TMPDIR": true,
	"TERRATEAM_DIR": true, "TERRATEAM_WORKSPACE": true, "TERRATEAM_ROOT": true, "TERRATEAM_PLAN_FILE": true,
	"TERRATEAM_TMPDIR": true, "TERRATEAM_STACK": true, "TERRATEAM_ENGINE_NAME": true, "TERRATEAM_TF_CMD": true,
}

// strataValue reports whether a name is one strata sets itself.
func strataValue(name string) bool { return strataValues[name] }

// slot is a job's worker slot, which it may hand on to its coordinator
// once its processes have ended (Links.HandOff).
type slot struct {
	handOff func()
	handed  bool
}

// handOff hands the job's worker slot on when this is its last step:
// called once the step's last process ended well, before its records
// are written.
func (in *stepInput) handOff() {
	if in.last && in.slot != nil && !in.slot.handed {
		in.slot.handed = true
		in.slot.handOff()
	}
}

// errAfterHandOff fails a process a job would start after it handed its
// worker slot on: one more than the parallelism would run.
func (in *stepInput) errAfterHandOff(what string) error {
	if in.slot != nil && in.slot.handed {
		return fmt.Errorf("internal error: %s would start after the job handed its worker slot on", what)
	}
	return nil
}
