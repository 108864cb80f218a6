package runner

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/strata-iac/strata/internal/diagnostics"
	"github.com/strata-iac/strata/internal/diskspace"
	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
)

// How a unit ends: the coordinator moves a unit on as its job ends
// (complete), and settles what waits for it, as it fails, is skipped or
// stays planned (docs/architecture.md#the-scheduler).

// complete records a finished job and moves the unit on.
func (r *runState) complete(ctx context.Context, jr jobResult) {
	ur, res := jr.ur, jr.res
	r.con.JobDone(ur.Display)
	ur.steps = append(ur.steps, res.Steps...)
	if res.Produced != nil {
		ur.produced = res.Produced
	}
	if res.Replan != nil {
		ur.replanned = res.Replan
	}
	if jr.kind != job.Apply {
		ur.gates = res.Gates
		if res.Cost != nil {
			ur.cost = res.Cost
		}
	}
	if res.Refused != "" {
		// --require-reviewed-plan: nothing is applied, and what waits
		// for the unit is skipped, as after a failure.
		ur.changes, ur.digest = res.Changes, res.Digest
		r.fail(ur, res, res.Refused)
		return
	}
	if res.Err != nil {
		if res.Changes != (report.Changes{}) {
			// What the failed step was about to change.
			ur.changes = res.Changes
		}
		switch {
		case res.Interrupted:
			r.finish(ur, report.StatusCancelled, "interrupted during "+res.FailedStep)
		default:
			r.fail(ur, res, "")
		}
		return
	}
	if jr.kind == job.Apply || res.Applied {
		r.completeApply(ur, res)
		return
	}
	if r.policy.ReadsOnly {
		ur.outputs = res.Outputs
		r.finish(ur, report.StatusSucceeded, "")
		r.open(ur)
		return
	}
	ur.changes = res.Changes
	ur.digest = res.Digest
	ur.ChangedOutputs, ur.OutputsKnown = res.ChangedOutputs, res.OutputsKnown
	if cause := deadCause(ur); cause != nil && res.HasChanges {
		// A unit it waits for failed while it was planning: its plan
		// stays, and it goes no further.
		if r.policy.HoldsPlanned {
			r.heldPlanned(ur, cause)
			return
		}
		r.skip(ur, cause)
		return
	}
	if !res.HasChanges && !ur.ForceApply {
		reason := r.againstReason(ur)
		if reason == "" && ur.replanned != nil {
			reason = ur.replanned.Reason("applied")
		}
		r.finish(ur, report.StatusNoChanges, reason)
		r.openUnchanged(ur)
		return
	}
	r.planned(ur, res)
}

// planned moves on a unit whose plan has changes: reported (drift),
// left planned or auto-applied (plan), or approved when nobody is asked
// (apply); one not approved yet lets its readers plan against its plan.
func (r *runState) planned(ur *unitRun, res job.Result) {
	ur.phase = phasePlanned
	ur.status = report.StatusPlanned
	ur.planned, ur.unknownOutputs = res.PlannedOutputs, res.UnknownOutputs
	r.markDeferred(ur)
	if r.gateHolds(ur) {
		return
	}
	switch {
	case ur.ForceApply && !r.policy.Applies && !r.policy.AutoApplies:
		// drift: a stale auto_apply prerequisite is applied before the
		// units requiring it are checked (docs/behaviour.md#prerequisites).
		r.approve(ur)
	case !r.policy.Applies && !r.policy.AutoApplies:
		// drift: a plan with changes is what it reports.
		r.finish(ur, report.StatusPlanned, "")
		return
	case r.policy.AutoApplies:
		switch {
		case ur.autoApplyRefused != "" && !r.opt.NoAutoApply:
			r.finish(ur, report.StatusPlanned, "auto_apply refused: "+ur.autoApplyRefused)
		case !ur.AutoApply || r.opt.NoAutoApply:
			r.finish(ur, report.StatusPlanned, cmp.Or(r.againstReason(ur), report.GatedReason(ur.gates)))
		case ur.Spec.Stack.AutoApplyIf.Holds(ur.changes.Add, ur.changes.Change, ur.changes.Destroy) != "":
			// docs/behaviour.md#auto-apply-conditions
			r.finish(ur, report.StatusPlanned, ur.Spec.Stack.AutoApplyIf.Holds(ur.changes.Add, ur.changes.Change, ur.changes.Destroy))
		case r.opt.AutoApprove || r.approveAll || !r.opt.Terminal || r.opt.Approve == nil:
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

// gateHolds settles a planned unit whose plan raised gates that are not
// approved (docs/controls.md#gates), when the command would apply it:
// apply and destroy deny it, and skip what waits for it; plan leaves an
// auto_apply unit planned, saying why.
func (r *runState) gateHolds(ur *unitRun) bool {
	applies := r.policy.Applies || (r.policy.AutoApplies && ur.AutoApply && !r.opt.NoAutoApply)
	if len(ur.gates) == 0 || !applies {
		return false
	}
	why := report.GatedReason(ur.gates) + "; its approvals are read from a pull request, in CI"
	if r.opt.Gates != nil {
		why = r.opt.Gates(ur.Spec, ur.gates)
	}
	switch {
	case why == "":
		return false
	case r.policy.Applies:
		r.finish(ur, report.StatusDenied, why)
		r.skipDependents(ur, ur)
	default:
		r.finish(ur, report.StatusPlanned, "auto_apply held: "+why)
	}
	return true
}

// completeApply moves a unit on after its apply job (or a plan and apply
// in one call): applied, destroyed or with nothing to change, or planned
// again when its saved plan was stale.
func (r *runState) completeApply(ur *unitRun, res job.Result) {
	if res.Replanned {
		// The saved plan was stale and was made again; it is applied
		// only when nobody needs to look at it first: asked about
		// again where someone can be asked, else left planned.
		ur.changes, ur.digest = res.Changes, res.Digest
		if r.opt.Approve == nil {
			r.finish(ur, report.StatusPlanned, "plan was stale; re-planned")
			return
		}
		ur.phase, ur.status, ur.reason, ur.approved = phasePlanned, report.StatusPlanned, "plan was stale; re-planned", false
		if r.approveAll {
			r.approve(ur)
		}
		return
	}
	st := report.StatusApplied
	if r.destroying() {
		st = report.StatusDestroyed
	}
	if res.Applied || res.OutputsKnown {
		// Applied in one call, or planned again before the apply.
		ur.ChangedOutputs, ur.OutputsKnown = res.ChangedOutputs, res.OutputsKnown
	}
	if res.Applied || res.Fresh {
		// Applied in one call, or planned again first: the counts
		// are what was applied.
		ur.changes, ur.digest = res.Changes, res.Digest
	}
	if res.Applied && !res.HasChanges && !ur.ForceApply {
		st = report.StatusNoChanges
	}
	reason := ""
	switch {
	case res.AppliedEarlier:
		reason = job.ReasonAppliedEarlier
		if st == report.StatusDestroyed {
			reason = job.ReasonDestroyedEarlier
		}
	case ur.replanned != nil:
		reason = ur.replanned.Reason("applied")
	}
	r.finish(ur, st, reason)
	r.open(ur)
}

// planThrough lets the consumers that wait for a planned unit only for
// its outputs plan now, against its plan, when the plan leaves every
// value they read known (docs/behaviour.md#inputs-between-stacks). Such
// a consumer's gate then holds only its apply, so it still applies after
// the unit. A unit approved at once is applied before long, and its
// consumers plan against what it applied instead: their plans stay
// reusable.
func (r *runState) planThrough(ur *unitRun) {
	if ur.planned == nil || r.destroying() || !r.policy.FeedsReaders {
		return
	}
	for i := range ur.out {
		e := &ur.out[i]
		c := e.to
		if !e.plan || !e.data || e.through || c.phase != phaseWaitPlan || c.hidden() {
			continue
		}
		if slices.Contains(c.deferredBy, ur) {
			// markDeferred found a value it reads unknown in this plan.
			continue
		}
		e.through = true
		c.planWaits--
		c.applyWaits++
		c.against = append(c.against, ur)
		r.consider(c)
	}
}

// unknownFor are the inputs of consumer c (as written: "net.vpc_id")
// that producer ur's plan leaves unknown until it is applied.
func (r *runState) unknownFor(ur, c *unitRun) []string {
	var unknown []string
	for _, in := range r.p.Inputs(c.Spec) {
		if in.Producer != ur.Spec {
			continue
		}
		if ur.planned == nil {
			// A reused saved plan: only which outputs it leaves unknown.
			if slices.Contains(ur.unknownOutputs, in.Output) {
				unknown = append(unknown, in.From)
			}
			continue
		}
		if po, ok := ur.planned[in.Output]; !ok || !po.Known {
			unknown = append(unknown, in.From)
		}
	}
	return unknown
}

// markDeferred notes, on each consumer still waiting for producer ur's
// outputs, the values ur's plan leaves unknown: such a consumer is
// deferred, to plan once ur is applied (docs/behaviour.md#deferred-units),
// and says so when it stays waiting and when it plans after the apply.
func (r *runState) markDeferred(ur *unitRun) { r.noteUnknown(ur, true) }

// markContinued notes, on each consumer waiting for producer ur, which
// of the values it reads ur's plan left unknown until ur's apply by an
// earlier job of the CI run: the consumer, planned now, says it was
// deferred and planned after that apply (docs/behaviour.md#deferred-units).
func (r *runState) markContinued(ur *unitRun) { r.noteUnknown(ur, false) }

// noteUnknown notes on ur's waiting consumers the values they read that
// ur's plan leaves unknown; waiting says ur is not applied yet, so that a
// consumer still waiting at the end is deferred on them.
func (r *runState) noteUnknown(ur *unitRun, waiting bool) {
	if ur.planned == nil && ur.unknownOutputs == nil || r.destroying() || !r.policy.FeedsReaders {
		return
	}
	for _, e := range ur.out {
		c := e.to
		if !e.plan || !e.data || c.phase != phaseWaitPlan || c.hidden() || slices.Contains(c.deferredBy, ur) {
			continue
		}
		unknown := r.unknownFor(ur, c)
		if len(unknown) == 0 {
			continue
		}
		if waiting {
			verb := "is"
			if len(unknown) > 1 {
				verb = "are"
			}
			c.unknown = append(c.unknown, fmt.Sprintf("%s %s unknown until %s is applied", strings.Join(unknown, ", "), verb, ur.Spec.Name()))
		}
		c.deferredOn = append(c.deferredOn, unknown...)
		c.deferredBy = append(c.deferredBy, ur)
	}
}

// deferredReason is the reason of a deferred unit that planned once the
// producers whose plans left its values unknown were applied, in this
// command: "planned after net@default was applied: net.vpc_id was unknown
// until then"; "" for any other unit.
func deferredReason(ur *unitRun) string {
	if len(ur.deferredBy) == 0 || len(ur.against) > 0 {
		return ""
	}
	names := make([]string, len(ur.deferredBy))
	for i, p := range ur.deferredBy {
		names[i] = p.Spec.Name()
	}
	were, was := "was", "was"
	if len(names) > 1 {
		were = "were"
	}
	if len(ur.deferredOn) > 1 {
		was = "were"
	}
	return fmt.Sprintf("planned after %s %s applied: %s %s unknown until then", strings.Join(names, ", "), were, strings.Join(ur.deferredOn, ", "), was)
}

// againstReason is a unit's reason when it planned against plans of
// units not applied since: "planned against network@default's plan".
func (r *runState) againstReason(ur *unitRun) string {
	var names []string
	for _, p := range ur.against {
		if !p.opened {
			names = append(names, p.Spec.Name()+"'s plan")
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

// askWave asks about the plans waiting for approval, once per wave, when
// nothing else can move: the plans that can apply in this wave, their
// gates open or held only by plans asked about with them; one that waits
// for something else (a unit not planned yet, one blocked) is asked about
// once that is done. It reports whether anything changed.
func (r *runState) askWave() bool {
	var wave []*unitRun
	for _, ur := range r.units {
		if ur.phase == phasePlanned && !ur.approved && !ur.declined {
			wave = append(wave, ur)
		}
	}
	wave = applicableTogether(wave)
	if len(wave) == 0 || r.opt.Approve == nil {
		return false
	}
	reports := make([]*report.UnitReport, len(wave))
	for i, ur := range wave {
		reports[i] = r.unitReport(ur)
	}
	ans, err := r.opt.Approve(reports)
	if err != nil {
		r.con.Note("strata: " + err.Error())
		ans = AnswerNo
	}
	for _, ur := range wave {
		switch ans {
		case AnswerYes, AnswerAll:
			r.approve(ur)
		default:
			ur.declined = true
		}
	}
	if ans == AnswerAll {
		// Every plan from here on, and those planned already whose
		// gates are still shut.
		r.approveAll = true
		for _, ur := range r.units {
			if ur.phase == phasePlanned && !ur.approved && !ur.declined {
				r.approve(ur)
			}
		}
	}
	return true
}

// fail marks a unit failed and every unit waiting for it, directly or not,
// skipped with it as the root cause; --fail-fast cancels the rest. The
// reason is the failed step's, unless one is given.
func (r *runState) fail(ur *unitRun, res job.Result, reason string) {
	if res.FailedStep == "internal" {
		// A panic in strata itself: the whole trace goes to the log.
		r.con.UnitNote(ur.Spec.Name(), res.Err.Error())
	}
	if reason == "" {
		errText := job.ErrorText(res.Err)
		reason = fmt.Sprintf("%s failed", res.FailedStep)
		// A full disk is said first: the engine's own error seldom names
		// it (docs/behaviour.md#faults).
		if full := diskspace.Reason(errText, filepath.Join(r.p.Root, ur.Spec.Dir), filepath.Dir(ur.PlanFile), ur.DataDir, ur.TmpDir); full != "" {
			reason += ": " + full
		}
		if msg := diagnostics.FailureReason(ur.Masker.Mask(errText)); msg != "" {
			reason += ": " + msg
		}
	}
	r.finish(ur, report.StatusFailed, reason)
	r.skipDependents(ur, ur)
	if r.opt.FailFast {
		r.stopping = true
	}
}

func (r *runState) skipDependents(ur, cause *unitRun) {
	if r.policy.ReadsOnly {
		// Nothing waits for anything: every unit still runs.
		return
	}
	planOnly := r.policy.HoldsPlanned
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
		case s.openPending:
			// It changed nothing and stays so; what waits for it
			// through it will never see its apply gates open.
			s.openPending, s.shutBy = false, cause
			r.skipDependents(s, cause)
		}
	}
}

// heldPlanned ends a unit whose own plan succeeded in plan, though a unit
// it waits for failed: it is planned, and only its apply is held.
func (r *runState) heldPlanned(ur, cause *unitRun) {
	ur.cause = cause
	reason := ""
	switch {
	case !r.policy.AutoApplies || r.opt.NoAutoApply:
	case ur.autoApplyRefused != "":
		reason = "auto_apply refused: " + ur.autoApplyRefused
	case ur.AutoApply:
		reason = "auto_apply waits for " + cause.rootName() + ", which " + cause.rootEnd()
	}
	r.finish(ur, report.StatusPlanned, reason)
	r.skipDependents(ur, cause)
}

func (r *runState) skip(ur, cause *unitRun) {
	ur.cause = cause
	r.finish(ur, report.StatusSkipped, cause.rootName()+" "+cause.rootEnd())
	r.skipDependents(ur, cause)
}

// rootName names a failed unit at the root of skips: the unit, or for one
// another job settled as skipped, the root that job named.
func (ur *unitRun) rootName() string {
	if ur.rootCause != "" {
		return ur.rootCause
	}
	return ur.Spec.Name()
}

// rootEnd says how the unit at the root of skips ended: "failed", or
// "was denied" by the controls.
func (ur *unitRun) rootEnd() string {
	if ur.status == report.StatusDenied || ur.rootDenied {
		return "was denied"
	}
	return "failed"
}

// deadCause returns the failed unit at the root of a predecessor that will
// never open, or nil.
func deadCause(ur *unitRun) *unitRun {
	for _, preds := range [][]*unitRun{ur.planPreds, ur.applyPreds} {
		for _, p := range preds {
			if p.shutBy != nil {
				return p.shutBy
			}
			switch p.status {
			case report.StatusFailed, report.StatusDenied:
				return p
			case report.StatusSkipped:
				if p.cause != nil {
					return p.cause
				}
				return p
			}
		}
	}
	return nil
}

func (r *runState) finish(ur *unitRun, status report.Status, reason string) {
	ur.phase = phaseDone
	ur.status = status
	// A reason may quote an engine's error, of any size
	// (docs/behaviour.md#text-budgets).
	if reason == "" && (status == report.StatusApplied || status == report.StatusPlanned || status == report.StatusNoChanges) {
		reason = deferredReason(ur)
	}
	reason = textbudget.Cut(reason, textbudget.Error)
	ur.reason = reason
	switch {
	case ur.role.outside():
	case ur.hidden():
		if r.opt.ReaderDone != nil {
			r.opt.ReaderDone(ur.Spec, r.unitReport(ur))
		}
	default:
		r.endUnitSpan(ur)
		shown := status
		if shown == report.StatusPending {
			shown = report.StatusCancelled
		}
		started, finished := report.Span(ur.steps)
		r.con.UnitDone(ur.Display, string(shown), reason, finished.Sub(started))
		if r.opt.UnitDone != nil {
			r.opt.UnitDone(ur.Spec, r.unitReport(ur))
		}
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
				r.finish(ur, report.StatusCancelled, reason)
				continue
			}
			if len(ur.unknown) > 0 {
				r.finish(ur, report.StatusDeferred, strings.Join(ur.unknown, "; "))
				continue
			}
			r.finish(ur, report.StatusBlocked, "waits for "+waitingFor(ur.planPreds)+" to be applied")
		case phasePlanned:
			reason := ""
			switch {
			case r.stopping:
				reason = "not applied: strata was stopped"
			case ur.declined:
				reason = "not approved"
			case r.againstReason(ur) != "":
				reason = r.againstReason(ur)
			case !gatesOpen(ur.applyPreds):
				if r.policy.AutoApplies {
					reason = "auto_apply waits for " + waitingFor(ur.applyPreds)
				} else {
					reason = "waits for " + waitingFor(ur.applyPreds) + " to be applied"
				}
			}
			r.finish(ur, report.StatusPlanned, reason)
		case phasePlanning, phaseApplying:
			r.finish(ur, report.StatusCancelled, reasonKilled)
		}
	}
}

// waitingFor names the units of preds not opened; a reader that stayed
// out of the run and a stack's entry barrier are named by what they wait
// for in turn. A stack's exit barrier names the stack's units not opened
// when they are few, else the stack: "stack staging (1000 units)".
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
			switch {
			case p.hidden() || p.entry:
				walk(p.planPreds)
			case p.barrier != nil:
				if n := p.notOpened(); n > namedUnits {
					names = append(names, fmt.Sprintf("stack %s (%d units)", p.barrier.Name, n))
				} else {
					walk(p.planPreds)
				}
			default:
				names = append(names, p.Spec.Name())
			}
		}
	}
	walk(preds)
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// namedUnits is how many units of a stack a reason names before it names
// the stack instead.
const namedUnits = 3

// notOpened counts the units an exit barrier waits for that are not
// opened, once: reasons are written when nothing moves any more, and
// every blocked unit of a stack asks.
func (b *unitRun) notOpened() int {
	if b.waiting < 0 {
		b.waiting = 0
		for _, p := range b.planPreds {
			if !p.opened {
				b.waiting++
			}
		}
	}
	return b.waiting
}

// applicableTogether keeps of the planned units those that can apply once
// the kept ones are approved: every gate still shut is held by a kept
// unit, or by a barrier or an unchanged unit whose own shut gates are
// (the largest such set, found by dropping what fails until nothing does).
func applicableTogether(planned []*unitRun) []*unitRun {
	kept := make(map[*unitRun]bool, len(planned))
	for _, ur := range planned {
		kept[ur] = true
	}
	for changed := true; changed; {
		changed = false
		held := map[*unitRun]bool{} // memo: held only by kept units
		var heldByKept func(p *unitRun) bool
		heldByKept = func(p *unitRun) bool {
			switch {
			case p.opened || kept[p]:
				return true
			case p.role != RoleBarrier && !p.openPending:
				return false
			}
			if v, ok := held[p]; ok {
				return v
			}
			held[p] = false // a cycle never holds
			held[p] = allPreds(p, heldByKept)
			return held[p]
		}
		for _, ur := range planned {
			if kept[ur] && !allPreds(ur, heldByKept) {
				delete(kept, ur)
				changed = true
			}
		}
	}
	out := planned[:0:0]
	for _, ur := range planned {
		if kept[ur] {
			out = append(out, ur)
		}
	}
	return out
}

// allPreds reports whether ok holds for every unit ur waits for, to plan
// or to apply, stopping at the first that fails.
func allPreds(ur *unitRun, ok func(*unitRun) bool) bool {
	for _, preds := range [2][]*unitRun{ur.planPreds, ur.applyPreds} {
		for _, p := range preds {
			if !ok(p) {
				return false
			}
		}
	}
	return true
}
