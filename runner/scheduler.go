package runner

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/sourcegraph/conc/panics"
	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/stacks"
)

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
	StatusSkipped   Status = "skipped"
	StatusCancelled Status = "cancelled"
	// StatusMissing is a unit of a run shared by CI jobs that no job
	// recorded a result for, or whose recorded result was refused
	// (docs/ci.md#a-result-that-lies).
	StatusMissing Status = "missing"

	statusPending Status = "pending"
)

// phase is where a unit is in its command.
type phase int

const (
	phaseWaitPlan phase = iota // waiting for its plan gates
	phasePlanning              // plan (or init/validate/output) job running
	phasePlanned               // planned with changes, waiting for approval or apply gates
	phaseApplying              // apply job running
	phaseDone
)

// unitRun is the coordinator's node of one unit in a command: where it is
// (phase, gates, status) and how it ended. Only the coordinator reads or
// writes these fields; a job gets the unit's *unit and nothing else of
// the node.
type unitRun struct {
	*unit
	why         string
	unsupported bool
	role        Role // a member of the run, or outside it: a gate or a producer

	planPreds, applyPreds, succs []*unitRun
	priority                     int
	// out are the gates this unit holds, one per edge; planWaits and
	// applyWaits count the gates of this unit not yet open.
	out                   []gateEdge
	planWaits, applyWaits int
	queued                bool // in the ready queue

	phase    phase
	status   Status
	reason   string
	opened   bool // applied, or planned with no changes, in this command
	approved bool
	denied   bool
	changes  Changes
	digest   string
	// replanned compares the plan apply made in place of the reviewed
	// one with it (reviewed.go).
	replanned *Replanned
	steps     []StepReport
	outputs   map[string]any // output command
	cause     *unitRun       // skipped: the failed unit at the root
	// rootCause names the failed unit at the root of a settled unit that
	// was skipped by another job (RoleSettled); the unit itself otherwise.
	rootCause string

	produced   map[string]tfexec.OutputMeta // outputs read for consumers
	preBlocked string                       // blocked before anything runs, with this reason
	// pulled: a reader that joined the run; lazy: a producer outside the
	// run not read yet, as only readers need it.
	pulled, lazy bool
	// planned are the outputs' values after the unit's plan (its JSON);
	// against are the producers whose plans this unit planned against,
	// before they were applied; unknown says which values a producer's
	// plan left unknown, for the reason should the unit stay blocked.
	planned map[string]plannedOutput
	against []*unitRun
	unknown []string
}

// hidden reports a reader that has not joined the run: it is in no
// listing, report or exit code.
func (ur *unitRun) hidden() bool { return ur.role == RoleReader && !ur.pulled }

// unit is what a unit's jobs work with: its paths, environment, engine and
// what its steps learn along the way. The coordinator fills it before the
// unit's first job and hands it to one job at a time.
type unit struct {
	u      *stacks.Unit
	choice stacks.EngineChoice
	engine *engines.Engine

	dir, dataDir, planFile, varFile, tmpDir string
	ownDataDir                              bool
	env                                     map[string]string
	masker                                  *masker
	autoApply                               bool
	forceApply                              bool // a stale prerequisite: applied even without changes
	userPlan                                bool // planFile is the user's (apply FILE): never removed
	// planAfter are the units this one plans after: a saved plan made
	// before one of them was applied is not reused.
	planAfter []*stacks.Unit
	producer  bool // its outputs feed a unit of the run
	// readers are the outputs of this unit readers read; readerNeedsAll
	// says one of them reads another unit of the run too (linkReaders).
	readers        map[string]bool
	readerNeedsAll bool
	// changedOutputs are the outputs its plan changes, when outputsKnown;
	// set by the coordinator when the plan ends, read by its apply job.
	changedOutputs []string
	outputsKnown   bool

	inputVals map[string]json.RawMessage // input values, set before its plan
	output    strings.Builder            // engine output kept for the summary
	inited    bool                       // init ran or was found current in this command
	initArgs  InitArgs                   // the init arguments of the unit's init step
	warnings  []string                   // Options.Warnings of the unit
	// reviewed is the saved plan a review saw, as the unit's plan job in
	// apply found it (takeReviewed): its apply job compares a plan made
	// again with it.
	reviewed *PlanRecord
}

// reasonKilled is the reason of a unit whose step was killed by a second
// interrupt: as terraform warns, its state may not have been written.
const reasonKilled = "killed: state may be incomplete"

// gateEdge is one edge as a gate: `to` waits for its unit.
type gateEdge struct {
	to   *unitRun
	plan bool
	// data: a plan edge there only because `to` reads this unit's
	// outputs (no plan_after, depends_on or prerequisite between them);
	// through: `to` planned against this unit's plan, and the gate now
	// holds only its apply (planThrough).
	data, through bool
}

// runState is one command's state. What changes while it runs (the units'
// nodes, the ready queue, approveAll, stopping) belongs to the coordinator
// goroutine alone; a job reads only what is fixed before the first job
// starts (options, project, graph, state dir, executor, console, whose
// own parts lock) and works on its unit, and sends its result back.
type runState struct {
	p *stacks.Project
	// root is the project's root, resolved once for the unit dirs joined
	// onto it.
	root   *safepath.Base
	g      *stacks.Graph
	opt    Options
	sd     *StateDir
	base   map[string]string
	tfVars map[string]string
	exec   *executor
	con    *console

	units  []*unitRun
	byUnit map[*stacks.Unit]*unitRun
	// readyQ holds the units that may have a job to start, best first;
	// entries are checked when taken, since a unit can move on meanwhile.
	readyQ readyQueue

	approveAll bool
	stopping   bool // fail-fast or interrupt: start nothing new
	killed     bool

	procs procGroups // run steps' process groups, shared with the jobs

	checkout checkout // the commit units record as deployed
}

type jobKind int

const (
	jobPlan jobKind = iota
	jobApply
	// jobPlanApply plans and applies in one engine call (apply without a
	// plan file) where nobody reviews the plan and nothing needs its file;
	// the job falls back to a plain plan when it finds otherwise.
	jobPlanApply
)

type jobResult struct {
	ur   *unitRun
	kind jobKind
	res  stepsResult
}

// schedule runs the units over the graph: a unit's plan starts the moment
// its plan gates are open and a worker is free, its apply the moment it is
// approved and its apply gates are open; among ready units the one with
// the longest remaining path goes first (cmd/go's action graph, with
// sourcegraph/conc's pool as the workers). The coordinator alone submits
// jobs, so a full pool never deadlocks, and a panicking job fails its unit
// with the stack trace in the log.
func (r *runState) schedule(ctx context.Context, w work) {
	var dead []*unitRun
	for _, ur := range r.units {
		switch {
		case ur.lazy:
			// Read when a reader of it joins the run, if one does.
		case ur.role.outside():
			w.outside(ctx, ur)
			if ur.role == RoleSettled && (ur.status == StatusFailed || ur.status == StatusSkipped) {
				dead = append(dead, ur)
			}
		case ur.preBlocked != "":
			r.finish(ur, StatusBlocked, ur.preBlocked)
		case ur.unsupported:
			r.finish(ur, StatusFailed, fmt.Sprintf("engine %s is not supported", ur.choice.Name))
			r.skipDependents(ur, ur)
		}
	}
	for _, ur := range dead {
		// Settled by another job: its dependents here are skipped as if
		// it had failed in this run.
		r.skipDependents(ur, ur)
	}
	// Gates counted once; from here each opening unit opens its
	// dependents' gates, so finding ready work never scans every unit.
	for _, ur := range r.units {
		for _, p := range ur.planPreds {
			if !p.opened && !p.lazy {
				ur.planWaits++
			}
		}
		for _, p := range ur.applyPreds {
			if !p.opened {
				ur.applyWaits++
			}
		}
		r.consider(ur)
	}
	workers := pool.New().WithMaxGoroutines(r.opt.Parallelism)
	results := make(chan jobResult, 2*len(r.units)+1)
	inflight := 0
	busyDir := map[string]bool{}
	var killed <-chan struct{} = r.opt.Kill
	for {
		if ctx.Err() != nil && !r.stopping {
			r.stopping = true
		}
		if !r.stopping {
			var aside []*unitRun
			for inflight < r.opt.Parallelism && r.readyQ.Len() > 0 {
				ur := heap.Pop(&r.readyQ).(*unitRun)
				ur.queued = false
				kind, ok := r.readyKind(ur)
				if !ok {
					continue
				}
				if busyDir[ur.u.Dir] || (ur.hidden() && r.lazyBusy(ur, busyDir)) {
					// Units sharing a dir never run steps at once.
					aside = append(aside, ur)
					continue
				}
				if ur.hidden() && !r.pullReader(ctx, w, ur) {
					// Its inputs did not change: it stays out of the run,
					// and what waits for it goes on.
					r.finish(ur, StatusNoChanges, "")
					r.open(ur)
					continue
				}
				j := readyJob{ur, kind}
				if kind == jobPlan && r.oneCallApply(ur) {
					j.kind = jobPlanApply
				}
				if j.kind != jobApply && r.opt.Command != CmdDrift && takesInputs(r.opt.Command) {
					vals, missing := r.inputValues(j.ur)
					if missing != "" {
						r.finish(j.ur, StatusBlocked, missing)
						continue
					}
					j.ur.inputVals = vals
				}
				busyDir[j.ur.u.Dir] = true
				inflight++
				if j.kind == jobApply {
					j.ur.phase = phaseApplying
				} else {
					j.ur.phase = phasePlanning
				}
				job := j
				workers.Go(func() {
					var res stepsResult
					if rec := panics.Try(func() { res = w.job(ctx, job.ur.unit, job.kind) }); rec != nil {
						res = stepsResult{err: fmt.Errorf("internal error: %v\n%s", rec.Value, rec.Stack), failedStep: "internal"}
					}
					results <- jobResult{ur: job.ur, kind: job.kind, res: res}
				})
			}
			for _, ur := range aside {
				r.consider(ur)
			}
		}
		if inflight == 0 {
			if !r.stopping && r.askWave() {
				continue
			}
			break
		}
		select {
		case jr := <-results:
			inflight--
			busyDir[jr.ur.u.Dir] = false
			r.complete(ctx, jr)
		case <-killed:
			r.killed = true
			r.killSteps()
			for _, ur := range r.units {
				if ur.phase == phasePlanning || ur.phase == phaseApplying {
					r.finish(ur, StatusCancelled, reasonKilled)
				}
			}
			r.finalize()
			return
		}
	}
	workers.Wait()
	r.finalize()
}

// work is what the scheduler has done: the jobs of the units in the run,
// on the worker pool, and the settling of each unit outside the run (a
// gate's unit or a producer), before anything starts. The coordinator
// alone decides what runs when; tests give it jobs that run no engine.
type work struct {
	job     func(ctx context.Context, u *unit, kind jobKind) stepsResult
	outside func(ctx context.Context, ur *unitRun)
}

// engineWork is the work of a real run: engine steps.
func (r *runState) engineWork() work {
	return work{job: r.runJob, outside: func(ctx context.Context, ur *unitRun) {
		switch ur.role {
		case RoleProducer:
			r.readExternalProducer(ctx, ur)
		case RoleSettled:
			r.settle(ctx, ur)
		default:
			r.openExternal(ctx, ur)
		}
	}}
}

type readyJob struct {
	ur   *unitRun
	kind jobKind
}

// lazyBusy reports whether a producer a reader would have read first
// lives in a dir where a job runs.
func (r *runState) lazyBusy(ur *unitRun, busyDir map[string]bool) bool {
	for _, in := range r.p.Inputs(ur.u) {
		if prod := r.byUnit[in.Producer]; prod != nil && (prod.lazy || prod.hidden() || prod.unreadSettled()) && busyDir[prod.u.Dir] {
			return true
		}
	}
	return false
}

// oneCallApply reports whether a unit about to plan can plan and apply in
// one engine call: apply without review (-auto-approve, or "all"), its
// apply gates already open, and neither the report's options nor its
// workflow needing the plan file.
func (r *runState) oneCallApply(ur *unitRun) bool {
	// --require-reviewed-plan looks at a plan before it is applied.
	return r.opt.Command == CmdApply && (r.opt.AutoApprove || r.approveAll) && ur.applyWaits == 0 && !r.opt.RequireReviewedPlan &&
		r.opt.PlanJSON == "" && r.opt.PlanOut == "" && r.opt.ApplyFile == "" && !ur.userPlan &&
		engineStepsOnly(r.workflowSteps(ur.unit, StepPlan), StepPlan) && engineStepsOnly(r.workflowSteps(ur.unit, StepApply), StepApply)
}

// readyKind says which job of a unit can start now, if any.
func (r *runState) readyKind(ur *unitRun) (jobKind, bool) {
	switch ur.phase {
	case phaseWaitPlan:
		return jobPlan, r.planGateOpen(ur)
	case phasePlanned:
		return jobApply, ur.approved && ur.planWaits == 0 && ur.applyWaits == 0
	}
	return 0, false
}

// consider queues a unit when it has a job to start.
func (r *runState) consider(ur *unitRun) {
	if _, ok := r.readyKind(ur); ok && !ur.queued {
		ur.queued = true
		heap.Push(&r.readyQ, ur)
	}
}

// open records that a unit's outcome opens the gates it holds: it applied,
// or planned with no changes, or its command's step succeeded.
func (r *runState) open(ur *unitRun) {
	ur.opened = true
	for _, e := range ur.out {
		if e.plan && !e.through {
			e.to.planWaits--
		} else {
			e.to.applyWaits--
		}
		r.consider(e.to)
	}
}

// approve lets a planned unit apply once its gates open.
func (r *runState) approve(ur *unitRun) {
	ur.approved = true
	r.consider(ur)
}

// readyQueue orders units by longest remaining path, then by ID.
type readyQueue []*unitRun

func (q readyQueue) Len() int { return len(q) }
func (q readyQueue) Less(i, j int) bool {
	if q[i].priority != q[j].priority {
		return q[i].priority > q[j].priority
	}
	return q[i].u.ID() < q[j].u.ID()
}
func (q readyQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)   { *q = append(*q, x.(*unitRun)) }
func (q *readyQueue) Pop() any {
	old := *q
	ur := old[len(old)-1]
	*q = old[:len(old)-1]
	return ur
}

func (r *runState) planGateOpen(ur *unitRun) bool {
	switch r.opt.Command {
	case CmdDrift, CmdInit, CmdValidate, CmdOutput:
		// These never wait: drift plans everything at once (docs/behaviour.md#commands).
		return true
	}
	return ur.planWaits == 0
}

func gatesOpen(preds []*unitRun) bool {
	for _, p := range preds {
		if !p.opened {
			return false
		}
	}
	return true
}

// openExternal settles a unit outside the run: its gates open only when
// the run state shows it applied at its current digest.
func (r *runState) openExternal(ctx context.Context, ur *unitRun) {
	ur.phase, ur.status = phaseDone, StatusBlocked
	if ur.engine == nil {
		return
	}
	j := &job{r: r, ur: ur.unit}
	if _, err := j.prepareInputs(); err != nil {
		return
	}
	us, err := r.sd.ReadUnit(ur.u)
	if err != nil {
		return
	}
	if us.Apply != nil && us.Apply.Result == StatusApplied && us.Apply.Digest == j.res.digest {
		ur.opened = true
	}
}

// settle takes a unit another job of the run settled as that job left
// it: it opens its gates when it applied, had no changes or succeeded,
// with its outputs read for the units that consume them.
func (r *runState) settle(ctx context.Context, ur *unitRun) {
	ur.phase = phaseDone
	switch ur.status {
	case StatusApplied, StatusDestroyed, StatusNoChanges, StatusSucceeded:
	default:
		return
	}
	if ur.producer && ur.engine != nil && !r.destroying() && !r.readSettled(ctx, ur) {
		return
	}
	ur.opened = true
}

// complete records a finished job and moves the unit on.
func (r *runState) complete(ctx context.Context, jr jobResult) {
	ur, res := jr.ur, jr.res
	ur.steps = append(ur.steps, res.steps...)
	if res.produced != nil {
		ur.produced = res.produced
	}
	if res.replan != nil {
		ur.replanned = res.replan
	}
	if res.refused != "" {
		// --require-reviewed-plan: nothing is applied, and what waits
		// for the unit is skipped, as after a failure.
		ur.changes, ur.digest = res.changes, res.digest
		r.fail(ur, res, res.refused)
		return
	}
	if res.err != nil {
		if res.changes != (Changes{}) {
			// What the failed step was about to change.
			ur.changes = res.changes
		}
		switch {
		case res.interrupted:
			r.finish(ur, StatusCancelled, "interrupted during "+res.failedStep)
		default:
			r.fail(ur, res, "")
		}
		return
	}
	if jr.kind == jobApply || res.applied {
		if res.replanned {
			// The saved plan was stale and was made again; it is applied
			// only when nobody needs to look at it first: asked about
			// again where someone can be asked, else left planned.
			ur.changes, ur.digest = res.changes, res.digest
			if r.opt.Approve == nil {
				r.finish(ur, StatusPlanned, "plan was stale; re-planned")
				return
			}
			ur.phase, ur.status, ur.reason, ur.approved = phasePlanned, StatusPlanned, "plan was stale; re-planned", false
			if r.approveAll {
				r.approve(ur)
			}
			return
		}
		st := StatusApplied
		if r.destroying() {
			st = StatusDestroyed
		}
		if res.applied || res.outputsKnown {
			// Applied in one call, or planned again before the apply.
			ur.changedOutputs, ur.outputsKnown = res.changedOutputs, res.outputsKnown
		}
		if res.applied || res.fresh {
			// Applied in one call, or planned again first: the counts
			// are what was applied.
			ur.changes, ur.digest = res.changes, res.digest
		}
		if res.applied && !res.hasChanges && !ur.forceApply {
			st = StatusNoChanges
		}
		reason := ""
		switch {
		case res.appliedEarlier:
			reason = reasonAppliedEarlier
			if st == StatusDestroyed {
				reason = reasonDestroyedEarlier
			}
		case ur.replanned != nil:
			reason = ur.replanned.text("applied")
		}
		r.finish(ur, st, reason)
		r.open(ur)
		return
	}
	switch r.opt.Command {
	case CmdInit, CmdValidate, CmdOutput:
		ur.outputs = res.outputs
		r.finish(ur, StatusSucceeded, "")
		r.open(ur)
		return
	}
	ur.changes = res.changes
	ur.digest = res.digest
	ur.changedOutputs, ur.outputsKnown = res.changedOutputs, res.outputsKnown
	if cause := deadCause(ur); cause != nil && res.hasChanges {
		// A unit it waits for failed while it was planning: its plan
		// stays, and it goes no further.
		if r.opt.Command == CmdPlan || r.opt.Command == CmdDrift {
			r.heldPlanned(ur, cause)
			return
		}
		r.skip(ur, cause)
		return
	}
	if !res.hasChanges && !(ur.forceApply && r.opt.Command != CmdDrift) {
		reason := r.againstReason(ur)
		if reason == "" && ur.replanned != nil {
			reason = ur.replanned.text("applied")
		}
		r.finish(ur, StatusNoChanges, reason)
		r.open(ur)
		return
	}
	ur.phase = phasePlanned
	ur.status = StatusPlanned
	ur.planned = res.plannedOutputs
	switch r.opt.Command {
	case CmdDrift:
		r.finish(ur, StatusPlanned, "")
		return
	case CmdPlan:
		if !ur.autoApply || r.opt.NoAutoApply {
			r.finish(ur, StatusPlanned, r.againstReason(ur))
		} else if r.opt.AutoApprove || r.approveAll || !r.opt.Terminal || r.opt.Approve == nil {
			r.approve(ur)
		}
	default:
		if r.opt.AutoApprove || r.approveAll {
			r.approve(ur)
		}
	}
	if !ur.approved {
		r.planThrough(ur)
	}
}

// planThrough lets the consumers that wait for a planned unit only for
// its outputs plan now, against its plan, when the plan leaves every
// value they read known (docs/behaviour.md#inputs-between-stacks). Such
// a consumer's gate then holds only its apply, so it still applies after
// the unit. A unit approved at once is applied before long, and its
// consumers plan against what it applied instead: their plans stay
// reusable.
func (r *runState) planThrough(ur *unitRun) {
	if ur.planned == nil || r.destroying() || (r.opt.Command != CmdPlan && r.opt.Command != CmdApply) {
		return
	}
	for i := range ur.out {
		e := &ur.out[i]
		c := e.to
		if !e.plan || !e.data || e.through || c.phase != phaseWaitPlan || c.hidden() {
			continue
		}
		var unknown []string
		for _, in := range r.p.Inputs(c.u) {
			if in.Producer != ur.u {
				continue
			}
			if po, ok := ur.planned[in.Output]; !ok || !po.Known {
				unknown = append(unknown, in.From)
			}
		}
		if len(unknown) > 0 {
			verb := "is"
			if len(unknown) > 1 {
				verb = "are"
			}
			c.unknown = append(c.unknown, fmt.Sprintf("%s %s unknown until %s is applied", strings.Join(unknown, ", "), verb, ur.u.Name()))
			continue
		}
		e.through = true
		c.planWaits--
		c.applyWaits++
		c.against = append(c.against, ur)
		r.consider(c)
	}
}

// againstReason is a unit's reason when it planned against plans of
// units not applied since: "planned against network@default's plan".
func (r *runState) againstReason(ur *unitRun) string {
	var names []string
	for _, p := range ur.against {
		if !p.opened {
			names = append(names, p.u.Name()+"'s plan")
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "planned against " + strings.Join(names, ", ")
}

// plannedAgainst reports whether ur planned against prod's plan.
func (ur *unitRun) plannedAgainst(prod *unitRun) bool {
	return slices.Contains(ur.against, prod)
}

func (r *runState) destroying() bool {
	return r.opt.Command == CmdDestroy || r.opt.EngineArgs.Plan.Destroy
}

// askWave asks about the plans waiting for approval, once per wave, when
// nothing else can move. It reports whether anything changed.
func (r *runState) askWave() bool {
	var wave []*unitRun
	for _, ur := range r.units {
		if ur.phase == phasePlanned && !ur.approved && !ur.denied {
			wave = append(wave, ur)
		}
	}
	if len(wave) == 0 || r.opt.Approve == nil {
		return false
	}
	reports := make([]*UnitReport, len(wave))
	for i, ur := range wave {
		reports[i] = r.unitReport(ur)
	}
	ans, err := r.opt.Approve(reports)
	if err != nil {
		r.con.note("strata: " + err.Error())
		ans = AnswerNo
	}
	for _, ur := range wave {
		switch ans {
		case AnswerYes, AnswerAll:
			r.approve(ur)
		default:
			ur.denied = true
		}
	}
	if ans == AnswerAll {
		r.approveAll = true
	}
	return true
}

// fail marks a unit failed and every unit waiting for it, directly or not,
// skipped with it as the root cause; --fail-fast cancels the rest. The
// reason is the failed step's, unless one is given.
func (r *runState) fail(ur *unitRun, res stepsResult, reason string) {
	if res.failedStep == "internal" {
		// A panic in strata itself: the whole trace goes to the log.
		r.con.note(fmt.Sprintf("[%s] %v", ur.u.Name(), res.err))
	}
	if reason == "" {
		reason = fmt.Sprintf("%s failed", res.failedStep)
		if msg := failureReason(ur.masker.Mask(errorText(res.err))); msg != "" {
			reason += ": " + msg
		}
	}
	r.finish(ur, StatusFailed, reason)
	r.skipDependents(ur, ur)
	if r.opt.FailFast {
		r.stopping = true
	}
}

func (r *runState) skipDependents(ur, cause *unitRun) {
	if readsOnly(r.opt.Command) {
		// Nothing waits for anything: every unit still runs.
		return
	}
	planOnly := r.opt.Command == CmdPlan || r.opt.Command == CmdDrift
	for _, e := range ur.out {
		s := e.to
		switch {
		case planOnly && !e.plan && s.phase == phaseWaitPlan:
			// In plan, an apply edge holds only the apply: the unit
			// still plans, and ends planned (heldPlanned).
		case planOnly && s.phase == phasePlanned && !s.opened:
			r.heldPlanned(s, cause)
		case s.phase == phaseWaitPlan || (s.phase == phasePlanned && !s.opened):
			r.skip(s, cause)
		}
	}
}

// heldPlanned ends a unit whose own plan succeeded in plan, though a unit
// it waits for failed: it is planned, and only its apply is held.
func (r *runState) heldPlanned(ur, cause *unitRun) {
	ur.cause = cause
	reason := ""
	if ur.autoApply && !r.opt.NoAutoApply && r.opt.Command == CmdPlan {
		reason = "auto_apply waits for " + cause.rootName() + ", which failed"
	}
	r.finish(ur, StatusPlanned, reason)
	r.skipDependents(ur, cause)
}

func (r *runState) skip(ur, cause *unitRun) {
	ur.cause = cause
	r.finish(ur, StatusSkipped, cause.rootName()+" failed")
	r.skipDependents(ur, cause)
}

// rootName names a failed unit at the root of skips: the unit, or for one
// another job settled as skipped, the root that job named.
func (ur *unitRun) rootName() string {
	if ur.rootCause != "" {
		return ur.rootCause
	}
	return ur.u.Name()
}

// deadCause returns the failed unit at the root of a predecessor that will
// never open, or nil.
func deadCause(ur *unitRun) *unitRun {
	for _, preds := range [][]*unitRun{ur.planPreds, ur.applyPreds} {
		for _, p := range preds {
			switch p.status {
			case StatusFailed:
				return p
			case StatusSkipped:
				if p.cause != nil {
					return p.cause
				}
				return p
			}
		}
	}
	return nil
}

func (r *runState) finish(ur *unitRun, status Status, reason string) {
	ur.phase = phaseDone
	ur.status = status
	ur.reason = reason
	switch {
	case ur.role.outside():
	case ur.hidden():
		if r.opt.ReaderDone != nil {
			r.opt.ReaderDone(ur.u, r.unitReport(ur))
		}
	case r.opt.UnitDone != nil:
		r.opt.UnitDone(ur.u, r.unitReport(ur))
	}
}

// finalize settles every unit still waiting: a unit waiting for its plan
// gates is blocked (naming what it waits for) or cancelled when strata was
// stopping; a planned unit not applied stays planned, with why.
func (r *runState) finalize() {
	for _, ur := range r.units {
		switch ur.phase {
		case phaseWaitPlan:
			if r.stopping {
				reason := "not started"
				if r.opt.FailFast && !r.killed {
					reason = "not started: --fail-fast after a failure"
				}
				r.finish(ur, StatusCancelled, reason)
				continue
			}
			reason := "waits for " + waitingFor(ur.planPreds) + " to be applied"
			if len(ur.unknown) > 0 {
				reason = strings.Join(ur.unknown, "; ")
			}
			r.finish(ur, StatusBlocked, reason)
		case phasePlanned:
			reason := ""
			switch {
			case r.stopping:
				reason = "not applied: strata was stopped"
			case ur.denied:
				reason = "not approved"
			case r.againstReason(ur) != "":
				reason = r.againstReason(ur)
			case !gatesOpen(ur.applyPreds):
				if r.opt.Command == CmdPlan {
					reason = "auto_apply waits for " + waitingFor(ur.applyPreds)
				} else {
					reason = "waits for " + waitingFor(ur.applyPreds) + " to be applied"
				}
			}
			r.finish(ur, StatusPlanned, reason)
		case phasePlanning, phaseApplying:
			r.finish(ur, StatusCancelled, reasonKilled)
		}
	}
}

// waitingFor names the units of preds not opened; a reader that stayed
// out of the run is named by what it waits for in turn.
func waitingFor(preds []*unitRun) string {
	var names []string
	seen := map[*unitRun]bool{}
	var walk func([]*unitRun)
	walk = func(preds []*unitRun) {
		for _, p := range preds {
			if p.opened || seen[p] {
				continue
			}
			seen[p] = true
			if p.hidden() {
				walk(p.planPreds)
				continue
			}
			names = append(names, p.u.Name())
		}
	}
	walk(preds)
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "│"))
		if line != "" && !strings.HasPrefix(line, "exit status") && line != "╷" {
			return line
		}
	}
	return ""
}
