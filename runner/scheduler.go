package runner

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/sourcegraph/conc/panics"
	"github.com/sourcegraph/conc/pool"
	"go.opentelemetry.io/otel/trace"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
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
	priority                     int64
	// out are the gates this unit holds, one per edge; planWaits and
	// applyWaits count the gates of this unit not yet open.
	out                   []gateEdge
	planWaits, applyWaits int
	queued                bool // in the ready queue

	phase  phase
	status report.Status
	reason string
	opened bool // applied, or planned with no changes, in this command
	// openPending: nothing to change, and its apply gates still shut
	// (openUnchanged); shutBy, once one of those gates will never open,
	// the failed unit at the root: what waits for this one is skipped.
	openPending bool
	shutBy      *unitRun
	approved    bool
	declined    bool // not approved when asked
	changes     report.Changes
	digest      string
	// replanned compares the plan apply made in place of the reviewed
	// one with it (reviewed.go).
	replanned *report.Replanned
	// gates are the gates the unit's plan raised (docs/controls.md#gates),
	// cost its plan's estimated cost.
	gates   []report.Gate
	cost    *report.CostReport
	steps   []report.StepReport
	outputs map[string]any // output command
	cause   *unitRun       // skipped: the failed unit at the root
	// rootCause names the failed unit at the root of a settled unit that
	// was skipped by another job (RoleSettled); the unit itself otherwise.
	// rootDenied says that unit was denied rather than failed.
	rootCause  string
	rootDenied bool

	produced   map[string]tfexec.OutputMeta // outputs read for consumers
	preBlocked string                       // blocked before anything runs, with this reason
	// readAsItStands: a producer outside the run whose outputs were read
	// before anything runs (readProducersNow), not to be read again.
	readAsItStands bool
	// refused: the controls deny the unit, with this reason; it ends
	// denied before anything runs. autoApplyRefused: they deny its
	// auto_apply, which plan leaves planned with this reason
	// (docs/controls.md#in-a-run).
	refused, autoApplyRefused string
	// pulled: a reader that joined the run; lazy: a producer outside the
	// run not read yet, as only readers need it.
	pulled, lazy bool
	// planned are the outputs' values after the unit's plan (its JSON);
	// against are the producers whose plans this unit planned against,
	// before they were applied; unknown says which values a producer's
	// plan left unknown, for the reason should the unit stay deferred;
	// deferredOn are those inputs as written ("net.vpc_id"), deferredBy
	// the producers whose plans left them unknown.
	planned map[string]job.PlannedOutput
	// unknownOutputs: the outputs a reused saved plan leaves unknown.
	unknownOutputs []string
	against        []*unitRun
	unknown        []string
	deferredOn     []string
	deferredBy     []*unitRun

	// span is the unit's in the traces, once started (trace.go).
	span      trace.Span
	spanEnded bool

	// barrier is the stack of a barrier (RoleBarrier), which has no
	// unit: the stack's entry barrier when entry, else its exit
	// (barrier.go). prioritized: its priority is computed.
	barrier     *stacks.Stack
	entry       bool
	prioritized bool
	// waiting counts, once asked, the units an exit barrier waits for
	// that are not opened (notOpened); -1 until then.
	waiting int
}

// hidden reports a reader that has not joined the run: it is in no
// listing, report or exit code.
func (ur *unitRun) hidden() bool { return ur.role == RoleReader && !ur.pulled }

// unit is a unit of the run as the coordinator sees it: what its jobs
// work with (job.Unit), and what only the coordinator reads.
type unit struct {
	*job.Unit
	producer bool // its outputs feed a unit of the run
	// readers are the outputs of this unit readers read; readerNeedsAll
	// says one of them reads another unit of the run too (linkReaders).
	readers        map[string]bool
	readerNeedsAll bool
	warnings       []string // Options.Warnings of the unit
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
	// producerReads are how the outputs of the producers outside the run
	// were read, for the report.
	producerReads []report.ProducerRead
	// root is the project's root, resolved once for the unit dirs joined
	// onto it.
	root   *safepath.Base
	g      *stacks.Graph
	opt    Options
	policy *command.Policy // what the command means, looked up once
	sd     *runstate.StateDir
	base   map[string]string
	con    *console.Console

	units  []*unitRun
	byUnit map[*stacks.Unit]*unitRun
	// barriers stand for the rules between stacks (barrier.go); they are
	// in no listing.
	barriers []*unitRun
	// stacksBefore memoizes afterStacks.
	stacksBefore map[*stacks.Stack][]string
	// readyQ holds the units that may have a job to start, best first;
	// entries are checked when taken, since a unit can move on meanwhile.
	readyQ readyQueue

	approveAll bool
	stopping   bool // fail-fast or interrupt: start nothing new
	killed     bool

	// jobs is the run's fixed context its jobs read (job.Run).
	jobs *job.Run
	// vars are the stack variables of the run's stacks, read once
	// (setup).
	vars map[*stacks.Stack]*job.Vars
	// pluginDir is the provider plugin cache the units share, "" for none.
	pluginDir string
	// hookFailure fails every unit of the run before it starts: a pre
	// hook failed (docs/behaviour.md#hooks).
	hookFailure string
	// span is the command's in the traces, the units' spans' parent.
	span trace.Span
}

// jobResult is what a job sends its coordinator: while it runs, that it
// handed its worker slot on (handOff); then its result, and whether it
// had handed its slot on (handed).
type jobResult struct {
	ur              *unitRun
	kind            job.Kind
	res             job.Result
	handOff, handed bool
}

// schedule runs the units over the graph: a unit's plan starts the moment
// its plan gates are open and a worker is free, its apply the moment it is
// approved and its apply gates are open; among ready units the one with
// the longest remaining path goes first (cmd/go's action graph, with
// sourcegraph/conc's pool as the workers). The coordinator alone submits
// jobs, so a full pool never deadlocks, and a panicking job fails its unit
// with the stack trace in the log.
func (r *runState) schedule(ctx context.Context, w work) {
	visible := 0
	for _, ur := range r.units {
		if !ur.role.outside() && !ur.hidden() {
			visible++
		}
	}
	r.con.AddUnits(visible)
	r.span = trace.SpanFromContext(ctx)
	r.settleBeforeStart(ctx, w)
	r.countGates()
	limit := r.workerLimit()
	s := &dispatch{
		r: r, w: w,
		limit:    limit,
		maxJobs:  limit,
		handsOff: r.handsOff(limit),
		// A job sends at most two: its hand-off and its result.
		results: make(chan jobResult, 4*len(r.units)+1),
		busyDir: map[string]bool{},
	}
	if s.handsOff {
		s.maxJobs = 2 * limit
	}
	s.workers = pool.New().WithMaxGoroutines(s.maxJobs)
	var killed <-chan struct{} = r.opt.Kill
	for {
		if ctx.Err() != nil && !r.stopping {
			r.stopping = true
		}
		if !r.stopping {
			s.startReady(ctx)
		}
		if s.inflight == 0 {
			if !r.stopping && r.askWave() {
				continue
			}
			break
		}
		select {
		case jr := <-s.results:
			if jr.handOff {
				s.busy--
				continue
			}
			s.inflight--
			if !jr.handed {
				s.busy--
			}
			s.busyDir[jr.ur.Spec.Dir] = false
			r.complete(ctx, jr)
		case <-killed:
			r.killNow()
			return
		}
	}
	s.workers.Wait()
	r.finalize()
}

// settleBeforeStart settles what is known before any job starts: units
// outside the run (settled by another job, gates, producers), units
// blocked before the run, and units whose engine is not supported, with
// the dependents of those that failed skipped.
func (r *runState) settleBeforeStart(ctx context.Context, w work) {
	// Every unit that ends here ends first, with its own reason; then
	// what waits for the dead ones is skipped, so a unit ends once, with
	// one line, and a unit both denied and after a denied one is denied.
	var dead []*unitRun
	for _, ur := range r.units {
		switch {
		case ur.lazy:
			// Read when a reader of it joins the run, if one does.
		case ur.role.outside():
			w.outside(ctx, ur)
			if ur.role == RoleSettled && ur.status.Dead() {
				// Settled by another job: its dependents here are
				// skipped as if it had failed in this run.
				dead = append(dead, ur)
			}
		case ur.refused != "":
			r.finish(ur, report.StatusDenied, ur.refused)
			dead = append(dead, ur)
		case ur.preBlocked != "":
			r.finish(ur, report.StatusBlocked, ur.preBlocked)
		case ur.unsupported:
			r.finish(ur, report.StatusFailed, fmt.Sprintf("engine %s is not supported", ur.Choice.Name))
			dead = append(dead, ur)
		case r.hookFailure != "" && !ur.hidden():
			r.finish(ur, report.StatusFailed, r.hookFailure)
			dead = append(dead, ur)
		}
	}
	for _, ur := range dead {
		r.skipDependents(ur, ur)
	}
}

// countGates counts each unit's and barrier's closed gates once; from
// here each opening unit opens its dependents' gates, so finding ready
// work never scans every unit. A barrier whose gates are all open settles
// at once, so every count is made before any is considered.
func (r *runState) countGates() {
	for _, nodes := range [][]*unitRun{r.units, r.barriers} {
		for _, ur := range nodes {
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
		}
	}
	for _, nodes := range [][]*unitRun{r.barriers, r.units} {
		for _, ur := range nodes {
			r.consider(ur)
		}
	}
}

// killNow ends the command on a second interrupt: the running steps are
// killed, and their units cancelled.
func (r *runState) killNow() {
	r.killed = true
	r.jobs.Procs.Kill()
	for _, ur := range r.units {
		if ur.phase == phasePlanning || ur.phase == phaseApplying {
			r.finish(ur, report.StatusCancelled, reasonKilled)
		}
	}
	r.finalize()
}

// dispatch is the scheduler's side of the worker pool: the jobs in
// flight, the slots they hold, and the dirs they hold.
//
// A job holds one of limit worker slots from its start. One that may hand
// its slot on (handsOff) does so once its last process ended well, before
// it writes its records (job.Links.HandOff): the next job starts then,
// while the last one's bookkeeping ends beside it, as xargs starts the next
// process the moment one exits. Processes never outnumber the slots;
// jobs, those finishing included, never outnumber maxJobs
// (docs/behaviour.md#ordering-and-gates).
type dispatch struct {
	r       *runState
	w       work
	workers *pool.Pool
	limit   int // how many jobs hold a slot at once
	maxJobs int // how many jobs are in flight at once
	// handsOff: the command's jobs may hand their slots on.
	handsOff bool
	results  chan jobResult
	// inflight counts the jobs started and not yet ended, busy those of
	// them holding a slot.
	inflight, busy int
	busyDir        map[string]bool
}

// handsOff says whether a command's jobs may hand their worker slots on
// before they end: not at -j 1, where a unit's job runs whole before the
// next one starts, nor under --fail-fast, where nothing starts once a
// job failed, nor where every unit starts at once anyway.
func (r *runState) handsOff(limit int) bool {
	return limit > 1 && !r.opt.FailFast && r.opt.Parallelism != AllAtOnce
}

// workerLimit is how many jobs run at once: the parallelism, or with -j 0
// (AllAtOnce) as many as the run has units, so that every ready unit
// starts (docs/behaviour.md#ordering-and-gates).
func (r *runState) workerLimit() int {
	if r.opt.Parallelism == AllAtOnce {
		return max(1, len(r.units))
	}
	return max(1, r.opt.Parallelism)
}

// startReady starts the ready units' jobs, best first, while a worker is
// free; a unit whose dir another job holds waits for the next round.
func (s *dispatch) startReady(ctx context.Context) {
	r := s.r
	var aside []*unitRun
	for s.busy < s.limit && s.inflight < s.maxJobs && r.readyQ.Len() > 0 {
		ur := heap.Pop(&r.readyQ).(*unitRun)
		ur.queued = false
		kind, ok := r.readyKind(ur)
		if !ok {
			continue
		}
		if s.busyDir[ur.Spec.Dir] || (ur.hidden() && r.lazyBusy(ur, s.busyDir)) {
			// Units sharing a dir never run steps at once.
			aside = append(aside, ur)
			continue
		}
		if ur.hidden() && !r.pullReader(ctx, s.w, ur) {
			// Its inputs did not change: it stays out of the run,
			// and what waits for it goes on.
			r.finish(ur, report.StatusNoChanges, "")
			r.open(ur)
			continue
		}
		if j, ok := r.jobFor(ur, kind); ok {
			s.start(ctx, j)
		}
	}
	for _, ur := range aside {
		r.consider(ur)
	}
}

// jobFor is the job a ready unit runs, with its input values; false when
// an input has no value, and the unit is blocked.
func (r *runState) jobFor(ur *unitRun, kind job.Kind) (readyJob, bool) {
	j := readyJob{ur, kind}
	if kind == job.Plan && r.oneCallApply(ur) {
		j.kind = job.PlanApply
	}
	if j.kind != job.Apply && !r.policy.AsItStands && takesInputs(r.opt) {
		vals, missing := r.inputValues(j.ur)
		if missing != "" {
			r.finish(j.ur, report.StatusBlocked, missing)
			return j, false
		}
		j.ur.InputVals = vals
	}
	return j, true
}

// start runs a job on the pool; a panicking job fails its unit with the
// stack trace.
func (s *dispatch) start(ctx context.Context, j readyJob) {
	s.busyDir[j.ur.Spec.Dir] = true
	s.inflight++
	s.busy++
	ctx = s.r.unitContext(ctx, j.ur)
	if j.kind == job.Apply {
		j.ur.phase = phaseApplying
	} else {
		j.ur.phase = phasePlanning
	}
	// handed is the job goroutine's own: handOff runs in it, before its
	// result is sent.
	var (
		handOff func()
		handed  bool
	)
	if s.handsOff && s.r.handsOffUnit(j.ur) {
		seen := s.r.opt.handedOff
		// A job calls it at most once (job.Links.HandOff).
		handOff = func() {
			handed = true
			if seen != nil {
				seen(j.ur.Spec, j.kind)
			}
			s.results <- jobResult{ur: j.ur, kind: j.kind, handOff: true}
		}
	}
	s.workers.Go(func() {
		var res job.Result
		if rec := panics.Try(func() { res = s.w.job(ctx, j.ur.unit, j.kind, handOff) }); rec != nil {
			res = job.Result{Err: fmt.Errorf("internal error: %v\n%s", rec.Value, rec.Stack), FailedStep: "internal"}
		}
		s.results <- jobResult{ur: j.ur, kind: j.kind, res: res, handed: handed}
	})
}

// handsOffUnit says whether a unit's job may hand its slot on: only when
// nothing reads the unit's outputs after its steps (a producer's, a
// reader's), which would start the engine again.
func (r *runState) handsOffUnit(ur *unitRun) bool {
	return !ur.producer && len(ur.readers) == 0
}

// work is what the scheduler has done: the jobs of the units in the run,
// on the worker pool, and the settling of each unit outside the run (a
// gate's unit or a producer), before anything starts. The coordinator
// alone decides what runs when; tests give it jobs that run no engine.
//
// A job given a handOff calls it at most once, from its own goroutine,
// once it starts no more processes (dispatch).
type work struct {
	job     func(ctx context.Context, u *unit, kind job.Kind, handOff func()) job.Result
	outside func(ctx context.Context, ur *unitRun)
}

// engineWork is the work of a real run: engine steps.
func (r *runState) engineWork() work {
	return work{job: func(ctx context.Context, ur *unit, kind job.Kind, handOff func()) job.Result {
		return r.jobs.Do(ctx, ur.Unit, kind, job.Links{ReadsOutputs: ur.readsFor, HandOff: handOff})
	}, outside: func(ctx context.Context, ur *unitRun) {
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
	kind job.Kind
}

// lazyBusy reports whether a producer a reader would have read first
// lives in a dir where a job runs.
func (r *runState) lazyBusy(ur *unitRun, busyDir map[string]bool) bool {
	for _, in := range r.p.Inputs(ur.Spec) {
		if prod := r.byUnit[in.Producer]; prod != nil && (prod.lazy || prod.hidden() || prod.unreadSettled()) && busyDir[prod.Spec.Dir] {
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
	return r.policy.OneCallApply && (r.opt.AutoApprove || r.approveAll) && ur.applyWaits == 0 && !r.opt.RequireReviewedPlan &&
		r.opt.PlanJSON == "" && r.opt.PlanOut == "" && r.opt.ApplyFile == "" && !ur.UserPlan &&
		job.EngineStepsOnly(r.p.StepsFor(ur.Spec, report.StepPlan), report.StepPlan) && job.EngineStepsOnly(r.p.StepsFor(ur.Spec, report.StepApply), report.StepApply)
}

// readyKind says which job of a unit can start now, if any.
func (r *runState) readyKind(ur *unitRun) (job.Kind, bool) {
	switch ur.phase {
	case phaseWaitPlan:
		return job.Plan, r.planGateOpen(ur)
	case phasePlanned:
		return job.Apply, ur.approved && ur.planWaits == 0 && ur.applyWaits == 0
	}
	return 0, false
}

// consider queues a unit when it has a job to start, and settles a
// barrier whose gates opened.
func (r *runState) consider(ur *unitRun) {
	if ur.role == RoleBarrier {
		r.settleBarrier(ur)
		return
	}
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
		if e.to.openPending && e.to.applyWaits == 0 {
			e.to.openPending = false
			r.open(e.to)
		}
		r.consider(e.to)
	}
}

// openUnchanged opens the gates of a unit that has nothing to change. An
// apply gate of its own still shut (an apply_after) holds what waits for
// it too: the graph leaves out an edge another path implies, so the
// ordering reaches them through this unit. They plan now, and apply once
// its apply gates open (openPending); one that fails skips them.
func (r *runState) openUnchanged(ur *unitRun) {
	if ur.applyWaits == 0 {
		r.open(ur)
		return
	}
	if cause := deadCause(ur); cause != nil {
		// The gate will never open.
		ur.shutBy = cause
		r.skipDependents(ur, cause)
		return
	}
	ur.openPending = true
	for i := range ur.out {
		if e := &ur.out[i]; e.plan && !e.through {
			e.through = true
			e.to.planWaits--
			e.to.applyWaits++
			r.consider(e.to)
		}
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
	return q[i].Spec.ID() < q[j].Spec.ID()
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
	// init, validate and output never wait; drift waits only for a
	// stale auto_apply prerequisite, the one gate it links
	// (docs/behaviour.md#commands).
	return r.policy.IgnoresGates || ur.planWaits == 0
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
	ur.phase, ur.status = phaseDone, report.StatusBlocked
	if ur.Engine == nil {
		return
	}
	ur.opened = r.jobs.AppliedAsNow(ur.Unit)
}

// settle takes a unit another job of the run settled as that job left
// it: it opens its gates when it applied, had no changes or succeeded,
// with its outputs read for the units that consume them.
func (r *runState) settle(ctx context.Context, ur *unitRun) {
	ur.phase = phaseDone
	switch ur.status {
	case report.StatusApplied, report.StatusDestroyed, report.StatusNoChanges, report.StatusSucceeded:
	case report.StatusPlanned:
		// Its consumers wait for values its plan left unknown: deferred.
		r.markDeferred(ur)
		return
	default:
		return
	}
	if ur.producer && ur.Engine != nil && !r.destroying() && !r.readSettled(ctx, ur) {
		return
	}
	ur.opened = true
	if ur.status == report.StatusApplied {
		r.markContinued(ur)
	}
}

func (r *runState) destroying() bool {
	return r.opt.Destroying()
}
