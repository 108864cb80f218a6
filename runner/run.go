package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// Commands the runner executes (their meaning is command's table).
const (
	CmdInit     = command.Init
	CmdPlan     = command.Plan
	CmdApply    = command.Apply
	CmdDestroy  = command.Destroy
	CmdDrift    = command.Drift
	CmdValidate = command.Validate
	CmdOutput   = command.Output
)

// policyOf is the policy of the options' command; an engine command
// passed through has one that does none of a run command's things.
func policyOf(opt Options) *command.Policy {
	p, _ := command.Of(opt.Command)
	return p
}

// takesInputs reports whether a command gives units the values of their
// inputs: the ones that plan, and the passthrough commands that read
// variables.
func takesInputs(opt Options) bool {
	return policyOf(opt).Plans || takesVarFile[opt.Command]
}

const (
	AnswerNo Answer = iota
	AnswerYes
	AnswerAll
)

// Execute runs a command over the units of a run. Config and engine errors
// are returned before anything runs; unit failures are in the report.
func Execute(ctx context.Context, p *stacks.Project, run *stacks.Run, opt Options) (*Result, error) {
	if policyOf(opt).Applies && !opt.AutoApprove && opt.Approve == nil && opt.ApplyFile == "" {
		return nil, &UsageError{fmt.Sprintf("%s needs -auto-approve when it cannot ask (no terminal)", opt.Command)}
	}
	r, err := newRunState(ctx, p, run, opt)
	if err != nil {
		return nil, err
	}
	started := r.opt.Now()
	if opt.ApplyFile != "" {
		if err := r.useSavedPlan(opt.ApplyFile); err != nil {
			return nil, err
		}
	}
	if !opt.DropIn {
		r.header()
	}
	if r.mayApply() {
		lock, err := r.applyLock(ctx)
		if err != nil {
			return nil, err
		}
		defer lock.Release()
	}
	hooks, err := r.preHooks(ctx)
	if err != nil {
		return nil, err
	}
	r.schedule(ctx, r.engineWork())
	rep := r.report(started)
	r.postHooks(ctx, hooks, rep)
	return &Result{Report: rep, ExitCode: rep.ExitCode, Warnings: r.con.Warnings()}, nil
}

// runMembers are the units of a command and their roles: the run's
// units, stale prerequisites, units other jobs settled, gates outside the
// run, the producers of their inputs, then readers (a unit already there
// keeps its role) and their producers, read only once a reader joins.
func runMembers(p *stacks.Project, run *stacks.Run, opt Options, addPre []stacks.RunUnit) []member {
	members := make([]member, 0, len(run.Units)+len(addPre))
	in := map[*stacks.Unit]bool{}
	add := func(ru stacks.RunUnit, role Role) *member {
		if in[ru.Unit] {
			return nil
		}
		in[ru.Unit] = true
		members = append(members, member{RunUnit: ru, role: role, status: report.StatusPending})
		return &members[len(members)-1]
	}
	for _, ru := range run.Units {
		add(ru, RoleMember)
	}
	for _, ru := range addPre {
		add(ru, RolePrerequisite)
	}
	for _, st := range opt.Settled {
		if m := add(stacks.RunUnit{Unit: st.Unit, Why: "settled by an earlier job"}, RoleSettled); m != nil {
			m.status, m.rootCause, m.rootDenied = st.Status, st.Cause, st.CauseDenied
			m.changedOutputs, m.outputsKnown, m.unknownOutputs = st.ChangedOutputs, st.OutputsKnown, st.UnknownUntilApplied
		}
	}
	for _, u := range opt.External {
		add(stacks.RunUnit{Unit: u, Why: "outside the run"}, RoleGate)
	}
	// A settled unit's inputs were read by the job that settled it.
	unsettled := make([]member, 0, len(members))
	for _, m := range members {
		if m.role != RoleSettled {
			unsettled = append(unsettled, m)
		}
	}
	if takesInputs(opt) {
		for _, u := range producersOf(p, unsettled) {
			add(stacks.RunUnit{Unit: u, Why: "producer"}, RoleProducer)
		}
	}
	// Readers come after every other role: a unit already in the run (or
	// a gate) keeps its role. Their producers outside the run are read
	// only once one of them joins.
	start := len(members)
	for _, u := range append(readersOf(p, run, opt, members), opt.Readers...) {
		add(stacks.RunUnit{Unit: u}, RoleReader)
	}
	for _, u := range producersOf(p, members[start:]) {
		if m := add(stacks.RunUnit{Unit: u, Why: "producer"}, RoleProducer); m != nil {
			m.lazy = true
		}
	}
	return members
}

// newRunState fills the options' defaults, opens the state dir, builds the
// graph and prepares every unit of the run.
func newRunState(ctx context.Context, p *stacks.Project, run *stacks.Run, opt Options) (*runState, error) {
	opt = opt.WithDefaults(p)
	base, err := job.ProcessEnvOf(opt.Environ)
	if err != nil {
		return nil, err
	}
	stateDirPath := opt.StateDir
	if stateDirPath == "" {
		stateDirPath = runstate.DefaultPath(p.Root)
	}
	sd, err := runstate.OpenStateDir(stateDirPath)
	if err != nil {
		return nil, err
	}
	sd.Scratch = opt.ScratchState
	// Units outside the run that gates wait for join the graph; they never
	// run, and open their gates only when the run state shows them applied
	// at their current digest (docs/behaviour.md#rules).
	addPre, force, preBlocked, err := prerequisites(p, run, opt, sd)
	if err != nil {
		return nil, err
	}
	members := runMembers(p, run, opt, addPre)
	if opt.Controls != nil {
		opt.Denied, opt.AutoApplyDenied, opt.Warnings = askControls(opt, members)
	}
	units := make([]*stacks.Unit, len(members))
	for i, m := range members {
		units[i] = m.Unit
	}
	g, err := p.Graph(units, stacks.GraphOptions{Destroy: opt.Destroying()})
	if err != nil {
		return nil, err
	}
	root, err := safepath.NewBase(p.Root)
	if err != nil {
		return nil, fmt.Errorf("the repository root: %w", err)
	}
	r := &runState{
		p: p, root: root, g: g, opt: opt, policy: policyOf(opt), sd: sd, base: base,
		con: console.New(opt.Console, opt.ErrConsole, opt.Terminal, opt.DropIn),
	}
	r.con.StillEvery, r.con.Now, r.con.Colour = opt.StillEvery, opt.Now, opt.Colour
	if opt.DropIn && len(run.Units) == 1 {
		r.con.Own = run.Units[0].Unit.Name()
	}
	if opt.Full {
		r.con.Full()
	}
	if opt.Stream {
		r.con.Stream()
	}
	r.jobs = r.jobRun()
	sd.Warn = func(msg string) { r.con.Warn("", msg) }
	if err := r.prepare(ctx, members); err != nil {
		return nil, err
	}
	// A warning several units raise is printed once, with how many.
	raisedBy := map[string][]string{}
	var raised []string
	for _, ur := range r.units {
		ur.ForceApply = force[ur.Spec]
		ur.preBlocked = preBlocked[ur.Spec]
		ur.warnings = cutWarnings(opt.Warnings[ur.Spec])
		for _, w := range ur.warnings {
			if raisedBy[w] == nil {
				raised = append(raised, w)
			}
			raisedBy[w] = append(raisedBy[w], ur.Spec.Name())
		}
	}
	for _, w := range raised {
		r.con.WarnUnits(w, raisedBy[w])
	}
	if r.policy.AsItStands || r.destroying() {
		// drift compares with the producers' current state; destroy runs
		// consumers first, so their inputs are the producers' outputs as
		// they stand, read before anything is destroyed.
		r.readProducersNow(ctx)
	}
	return r, nil
}

// jobRun is the run's fixed context for its jobs, from the options.
func (r *runState) jobRun() *job.Run {
	o := r.opt
	return &job.Run{
		Project: r.p, Policy: r.policy, State: r.sd, Console: r.con,
		Exec: job.NewExecutor(o.KillAfter, o.Colour), Procs: &job.Procs{}, TFVars: job.TFVarsFromEnv(o.Environ), Destroying: r.destroying(), DropIn: o.DropIn,
		Settings: o.Settings, RetryDelay: o.RetryDelay, Environ: o.Environ, Now: o.Now, Applying: o.Applying, ApplyRefused: o.ApplyRefused,
		MergedPullRequest: o.MergedPullRequest, Repo: o.Repo, Cost: r.cost(),
	}
}

// cost is the run's cost estimator (docs/behaviour.md#cost-estimation):
// nil when the config asks for none or the command plans nothing; it says
// once, as the run starts, when infracost is not there to ask.
func (r *runState) cost() *job.Cost {
	if !r.policy.Plans || r.opt.DropIn {
		return nil
	}
	c := job.NewCost(r.p.Config.CostCurrency())
	if why := c.Skipped(); why != "" {
		r.con.Note("strata: no cost estimated: " + why)
	}
	return c
}

// useSavedPlan makes `apply FILE` apply FILE as terraform does: no plan,
// no question (drop-in, one unit).
func (r *runState) useSavedPlan(file string) error {
	// The unit's producers are in r.units too, read as they stand; they
	// are not units of this run.
	var own []*unitRun
	for _, ur := range r.units {
		if !ur.role.outside() {
			own = append(own, ur)
		}
	}
	if len(own) != 1 {
		return &UsageError{fmt.Sprintf("apply %s applies a saved plan in one unit's dir; this run has %s", file, report.CountOf(len(own), "unit"))}
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return &UsageError{fmt.Sprintf("apply %s: %v", file, err)}
	}
	ur := own[0]
	ur.PlanFile, ur.UserPlan = abs, true
	ur.phase, ur.status, ur.approved = phasePlanned, report.StatusPlanned, true
	return nil
}

// header prints the units in the run per stack, why each is in, and the
// engines (docs/behaviour.md#console-output).
func (r *runState) header() {
	byStack := map[string][]*unitRun{}
	var order []string
	engines := map[string]bool{}
	n := 0
	for _, ur := range r.units {
		if ur.role.outside() || ur.hidden() {
			continue
		}
		n++
		key := strings.Join(ur.Spec.Stack.Path, "/")
		if _, ok := byStack[key]; !ok {
			order = append(order, key)
		}
		byStack[key] = append(byStack[key], ur)
		if ur.Engine != nil {
			engines[ur.Engine.String()] = true
		}
	}
	sort.Strings(order)
	var b strings.Builder
	fmt.Fprintf(&b, "strata %s: %s in %s\n", r.opt.Command, report.CountOf(n, "unit"), report.CountOf(len(order), "stack"))
	for _, key := range order {
		fmt.Fprintf(&b, "  %s\n", key)
		for _, ur := range byStack[key] {
			fmt.Fprintf(&b, "    %s (%s)\n", ur.Spec.Name(), ur.why)
		}
	}
	names := make([]string, 0, len(engines))
	for e := range engines {
		names = append(names, e)
	}
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprintf(&b, "  engines: %s\n", strings.Join(names, ", "))
	}
	r.con.Note(strings.TrimRight(b.String(), "\n"))
}

// mayApply reports whether the command can apply anything, and so needs
// the repository apply lock.
func (r *runState) mayApply() bool {
	switch {
	case r.policy.Applies:
		return true
	case !r.policy.AutoApplies || r.opt.NoAutoApply:
		return false
	}
	for _, ur := range r.units {
		if ur.AutoApply && !ur.role.outside() {
			return true
		}
	}
	return false
}

// applyLock takes the repository apply lock: one apply or destroy (or plan
// that may auto-apply) per repository at a time.
func (r *runState) applyLock(ctx context.Context) (*filelock.Lock, error) {
	path := r.sd.LockPath("apply")
	l, err := filelock.TryAcquire(path)
	if errors.Is(err, filelock.ErrHeld) && r.opt.LockTimeout > 0 {
		wctx, cancel := context.WithTimeout(ctx, r.opt.LockTimeout)
		defer cancel()
		l, err = filelock.Acquire(wctx, path, nil)
	}
	if err != nil {
		if errors.Is(err, filelock.ErrHeld) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("another strata holds the repository apply lock: %s", strings.TrimSpace(filelock.Note(path)))
		}
		return nil, err
	}
	note := fmt.Sprintf("pid %d, %s, started %s", os.Getpid(), "strata "+r.opt.Command, r.opt.Now().Format(time.RFC3339))
	if err := l.SetNote(note); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// prepare resolves every unit's engine (once per distinct engine, in
// parallel), checks each module's required_version, and builds each unit's
// environment. Nothing runs when any of it fails.
func (r *runState) prepare(ctx context.Context, members []member) error {
	choices := make([]stacks.EngineChoice, len(members))
	for i, ru := range members {
		c, err := EngineChoice(r.p, ru.Unit, r.opt.Environ)
		if err != nil {
			return err
		}
		choices[i] = c
	}
	var resolved []*engines.Engine
	var errs []error
	if len(members) > 0 {
		in, err := r.installer()
		if err != nil {
			return err
		}
		resolved, errs = ResolveEngines(ctx, in, choices)
	}
	// problems are each member's reason nothing runs, in the members'
	// order; checks are the members whose module's required_version is
	// checked against their engine, which reads the module (in parallel,
	// below).
	problems := make([]string, len(members))
	type check struct {
		i  int // the member's
		ur *unitRun
	}
	var checks []check
	reported := map[string]bool{}
	for i, ru := range members {
		c := choices[i]
		ur := &unitRun{unit: &unit{Unit: &job.Unit{Spec: ru.Unit, Choice: c, ChangedOutputs: ru.changedOutputs, OutputsKnown: ru.outputsKnown}},
			why: ru.Why, status: ru.status, rootCause: ru.rootCause, rootDenied: ru.rootDenied, role: ru.role, lazy: ru.lazy,
			unknownOutputs: ru.unknownOutputs}
		r.units = append(r.units, ur)
		if !c.Supported() {
			// Its units fail as unsupported; the others run.
			ur.unsupported = true
			continue
		}
		if err := errs[i]; err != nil {
			// Nothing runs when an engine cannot be had; each reason once.
			if msg := err.Error(); !reported[msg] {
				reported[msg] = true
				problems[i] = fmt.Sprintf("%s: %v", ru.Name(), err)
			}
			continue
		}
		ur.Engine = resolved[i]
		if !ur.role.outside() {
			checks = append(checks, check{i, ur})
		}
	}
	// Reading a module is most of this work before the first job starts:
	// the modules are read as many at once as there are CPUs.
	checked := pool.New().WithMaxGoroutines(runtime.GOMAXPROCS(0))
	for _, c := range checks {
		i, ur := c.i, c.ur
		checked.Go(func() {
			// A unit's dir is read only once it is known to be inside the
			// root (a CI job's dirs come from the bucket).
			dir, err := r.root.Join(ur.Spec.Dir)
			if err == nil {
				// The module as the project read it, once (a tofu engine
				// reads its .tofu files too).
				err = engines.CheckRequiredVersion(dir, ur.Engine, r.p.ModuleAt)
			}
			if err != nil {
				problems[i] = fmt.Sprintf("%s: %v", members[i].Name(), err)
			}
		})
	}
	checked.Wait()
	if problems = slices.DeleteFunc(problems, func(p string) bool { return p == "" }); len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	if !r.opt.NoPluginCache {
		r.pluginDir = r.pluginCache()
	}
	for _, ur := range r.units {
		if err := r.setup(ur, r.pluginDir); err != nil {
			return err
		}
	}
	r.link()
	return nil
}

// link turns the graph's edges into the units' gates, each stack edge
// through barriers (barrier.go), and orders the units by longest
// remaining path.
func (r *runState) link() {
	r.indexUnits()
	if r.policy.WaitsOnlyForPrerequisites {
		r.linkForcedPrerequisites()
		r.computePriorities()
		return
	}
	for _, ur := range r.units {
		in := r.g.In(ur.Spec)
		edges := make([]stacks.Edge, len(in))
		for i, ei := range in {
			edges[i] = r.g.Edges[ei]
		}
		r.linkUnitEdges(ur, edges)
	}
	r.linkStacks()
	r.computePriorities()
}

// indexUnits finds each unit's node, and which units produce for others.
func (r *runState) indexUnits() {
	r.byUnit = make(map[*stacks.Unit]*unitRun, len(r.units))
	for _, ur := range r.units {
		r.byUnit[ur.Spec] = ur
	}
	for _, ur := range r.units {
		ur.producer = takesInputs(r.opt) && r.isProducer(ur)
		r.linkReaders(ur)
	}
}

// linkUnitEdges makes ur wait for the units of the edges into it.
func (r *runState) linkUnitEdges(ur *unitRun, in []stacks.Edge) {
	// A plan edge is there only for data when no other plan edge joins
	// the two units and no rule orders their stacks.
	ruled := map[*unitRun]bool{}
	for _, e := range in {
		if e.Kind == stacks.PlanEdge && e.Why != "inputs" {
			ruled[r.byUnit[e.From]] = true
		}
	}
	var planAfter []*stacks.Unit
	for _, e := range in {
		pred := r.byUnit[e.From]
		plan := e.Kind == stacks.PlanEdge
		if plan {
			planAfter = append(planAfter, pred.Spec)
		}
		data := plan && e.Why == "inputs" && !ruled[pred] && !r.destroying() &&
			!ur.Spec.Stack.WaitsToPlanFor(pred.Spec.Stack) && !requires(ur.Spec.Stack, pred.Spec.Stack)
		gate(pred, ur, plan, data)
	}
	if planAfter != nil {
		ur.PlanAfter = append(ur.PlanAfter, planAfter)
	}
}

// gate makes to wait for from: for its plan, or only for its apply.
func gate(from, to *unitRun, plan, data bool) {
	if plan {
		to.planPreds = append(to.planPreds, from)
	} else {
		to.applyPreds = append(to.applyPreds, from)
	}
	from.succs = append(from.succs, to)
	from.out = append(from.out, gateEdge{to: to, plan: plan, data: data})
}

// linkForcedPrerequisites links drift's only gates: a unit whose stack
// requires a stale prerequisite that is applied first waits for that
// prerequisite's units (docs/behaviour.md#prerequisites); nothing else
// waits.
func (r *runState) linkForcedPrerequisites() {
	var forced []*unitRun
	for _, ur := range r.units {
		if ur.ForceApply {
			forced = append(forced, ur)
		}
	}
	if len(forced) == 0 {
		return
	}
	for _, ur := range r.units {
		if ur.ForceApply || ur.role.outside() {
			continue
		}
		for _, f := range forced {
			if requires(ur.Spec.Stack, f.Spec.Stack) {
				gate(f, ur, true, false)
			}
		}
	}
}

// requires reports whether stack s has a prerequisite on stack t.
func requires(s, t *stacks.Stack) bool {
	for _, pr := range s.Prerequisites {
		for _, l := range pr.Stack.Leaves {
			if l == t {
				return true
			}
		}
	}
	return false
}

// installer is the engine installer of the run, made once.
func (r *runState) installer() (*engines.Installer, error) {
	if r.opt.Installer != nil {
		return r.opt.Installer, nil
	}
	in, err := engines.NewInstallerFromLookup(environ.Getenv(r.opt.Environ))
	if err != nil {
		return nil, err
	}
	in.Warn = func(s string) { r.con.Warn("", s) }
	in.Progress = func(s string) { r.con.Note(s) }
	r.opt.Installer = in
	return in, nil
}

// terraformOnPath is the engine of a repository that names none: the
// terraform on PATH, verified to be terraform.
func terraformOnPath(ctx context.Context, in *engines.Installer) (*engines.Engine, error) {
	e, err := in.FindOnPath(ctx, engines.Terraform)
	if err != nil {
		return nil, fmt.Errorf("no engine is configured and no terraform was found (%v): set engine: {name: terraform, version: ...} in the config, or install terraform", err)
	}
	return e, nil
}

// setup computes what a unit's steps share: paths, environment, masking,
// the provider plugin cache ("" for none). Every path made from the unit's
// names is checked to stay where it belongs.
func (r *runState) setup(ur *unitRun, pluginCache string) error {
	u := ur.Spec
	dir, err := r.root.Join(u.Dir)
	if err != nil {
		return fmt.Errorf("%s: %w", u.Name(), err)
	}
	ur.Dir = dir
	if ur.DataDir, ur.OwnDataDir, err = job.DataDirOf(r.p.Root, u); err != nil {
		return err
	}

	if ur.PlanFile, err = r.sd.PlanFile(u.Dir, u.Workspace, u.Stack.Name, u.Shared); err != nil {
		return err
	}
	if ur.VarFile, err = r.sd.VarFile(u.Dir, u.Workspace, u.Stack.Name, u.Shared); err != nil {
		return err
	}
	if ur.TmpDir, err = r.sd.TmpDir(u.Dir, u.Workspace, u.Stack.Name, u.Shared); err != nil {
		return err
	}
	ur.AutoApply = u.AutoApplies()
	if !ur.role.outside() {
		ur.refused = r.opt.Denied[u]
		if why, ok := r.opt.AutoApplyDenied[u]; ok && ur.AutoApply {
			ur.AutoApply, ur.autoApplyRefused = false, why
		}
	}
	if ur.Vars = r.vars[u.Stack]; ur.Vars == nil {
		// Read once per stack: its units share them.
		ur.Vars = job.VarsOf(u.Stack)
		if r.vars == nil {
			r.vars = map[*stacks.Stack]*job.Vars{}
		}
		r.vars[u.Stack] = ur.Vars
	}
	// The credentials strata reads are masked though no step may see
	// them (docs/behaviour.md#credentials).
	ur.Masker = console.NewMasker(append(ur.Vars.Secrets(), environ.CredentialValues(r.opt.Environ)...)...)
	ur.Display = &console.Unit{Name: u.Name(), Masker: ur.Masker, InJobs: !ur.role.outside(), Destroys: r.destroying()}
	r.setEnv(ur, pluginCache)
	return nil
}

// setEnv builds a unit's environment from the run's (r.base): the run's
// plus its stack's variables and strata's own values. Units without an
// engine have none.
func (r *runState) setEnv(ur *unitRun, pluginCache string) {
	if ur.Engine == nil {
		return
	}
	in := job.UnitEnvInput{
		Base: r.base, Unit: ur.Spec, Vars: ur.Vars, Root: r.p.Root, Engine: ur.Engine.Name, Version: ur.Engine.Version.String(),
		EnginePath: ur.Engine.Path, PlanFile: ur.PlanFile, TmpDir: ur.TmpDir, PluginCache: pluginCache,
	}
	if ur.OwnDataDir {
		in.DataDir = ur.DataDir
	}
	ur.Env = job.UnitEnv(in)
	ur.Display.Service = report.ServiceOf(func(k string) string { return ur.Env[k] })
}

// pluginCache is the provider plugin cache: the user's, else strata's own
// under its cache dir, made once a run.
func (r *runState) pluginCache() string {
	if v := r.base["TF_PLUGIN_CACHE_DIR"]; v != "" {
		return v
	}
	cache, err := engines.CacheDirFrom(environ.Getenv(r.opt.Environ))
	if err != nil || cache == "" {
		return ""
	}
	dir := filepath.Join(cache, "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	return dir
}

// computePriorities gives each unit the length of the longest path from it
// to the end of the graph, each unit weighing what its jobs took last
// time: ready units on the critical path go first
// (docs/architecture.md#ready-queue). A barrier weighs nothing.
func (r *runState) computePriorities() {
	weight := r.weights()
	order := r.g.Order()
	for i := len(order) - 1; i >= 0; i-- {
		ur := r.byUnit[order[i]]
		ur.priority = weight[ur] + longestAfter(ur)
	}
	sort.SliceStable(r.units, func(i, j int) bool { return r.units[i].Spec.ID() < r.units[j].Spec.ID() })
}

// longestAfter is the longest remaining path after ur: the highest
// priority of what waits for it. A barrier's is found once, when first
// asked; every unit after a barrier is in a later layer than every unit
// before it, so its priority is known by then.
func longestAfter(ur *unitRun) int64 {
	longest := int64(0)
	for _, s := range ur.succs {
		if s.role == RoleBarrier && !s.prioritized {
			s.priority, s.prioritized = longestAfter(s), true
		}
		longest = max(longest, s.priority)
	}
	return longest
}
