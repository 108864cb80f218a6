package ci

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// recorder records in the bucket what a job's units did as they end: their
// run state, their applies and their results. What a unit did is recorded
// even as the job is interrupted; a unit the interrupt cancelled gets no
// result, so a retried job runs it.
type recorder struct {
	ctx context.Context // not cancelled with the job's
	st  *objstore.Store
	mir *runstate.Mirror
	w   *runstate.Writer
	run string
	o   SliceOptions
	// earlier are the applies an earlier attempt started, by unit key.
	earlier map[string]*Applying
	// destroy: the run destroys, so an earlier attempt's apply destroyed.
	destroy bool
	res     *SliceResult

	heldMu sync.Mutex
	held   map[string]bool
}

// newRecorder makes the recorder of a job, which notes the units held
// elsewhere in res.
func newRecorder(ctx context.Context, st *objstore.Store, mir *runstate.Mirror, j *Job, o SliceOptions, res *SliceResult) *recorder {
	return &recorder{
		ctx: context.WithoutCancel(ctx), st: st, mir: mir, w: runstate.NewWriter(),
		run: j.Manifest.Run, o: o, earlier: j.applying, res: res, held: map[string]bool{},
	}
}

// put decides that a unit's result is recorded once: the first attempt
// of the job to record it wins.
func (r *recorder) put(u *stacks.Unit, res *Result) error {
	err := putJSON(r.ctx, r.st, resultKey(r.run, runstate.UnitKey(u)), res, true)
	if errors.Is(err, objstore.ErrExists) {
		// Another attempt of this job recorded it first.
		return nil
	}
	if err != nil {
		return fmt.Errorf("recording the result of %s: %w", u.Name(), err)
	}
	return nil
}

// heldElsewhere decides whether a unit did not run here because another
// process held its state lock, or was skipped for one that did: the
// holder's outcome is the unit's, and this job records nothing for it,
// nor for the units skipped for it (docs/ci.md#duplicate-jobs).
func (r *recorder) heldElsewhere(ur *report.UnitReport) bool {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	lost := ur.Status == report.StatusFailed && lockHeld(ur) ||
		ur.Status == report.StatusSkipped && r.held[ur.Cause]
	if lost {
		r.held[ur.Name()] = true
		r.res.Held = append(r.res.Held, ur.Name())
	}
	return lost
}

// record decides what is written back for a unit that ended: its run
// state, its apply, and its result unless an interrupt cancelled it.
func (r *recorder) record(u *stacks.Unit, ur *report.UnitReport) {
	if r.heldElsewhere(ur) {
		return
	}
	r.w.Go(func() error {
		applied, err := r.mir.Push(r.ctx, u)
		if err == nil && applied != nil {
			err = recordApply(r.ctx, r.st, r.run, u, ApplyRecord{Digest: applied.Digest, At: applied.At, Job: r.o.Job})
		}
		if err != nil || ur.Status == report.StatusCancelled {
			return err
		}
		res := &Result{Unit: ur, Log: ur.Log, Wave: r.o.Wave, Shard: r.o.Shard, Job: r.o.Job}
		if applied != nil {
			res.Applied = applied.Digest
			res.ChangedOutputs, res.OutputsKnown = applied.ChangedOutputs, applied.OutputsKnown
		}
		if err := appliedEarlier(r.ctx, r.st, r.run, u, res, r.earlier[runstate.UnitKey(u)], r.destroy); err != nil {
			return err
		}
		return r.put(u, res)
	})
}

// readerOut decides what is recorded for a reader that stayed out: it ran
// nothing and changed no run state, and its result says so, with the
// status the units after it read. One an interrupt cancelled gets none,
// so a retried job decides again.
func (r *recorder) readerOut(u *stacks.Unit, ur *report.UnitReport) {
	if ur.Status == report.StatusCancelled {
		return
	}
	r.w.Go(func() error {
		return r.put(u, &Result{Unit: ur, Wave: r.o.Wave, Shard: r.o.Shard, Job: r.o.Job, NotNeeded: true})
	})
}

// applyRefused withdraws what applying recorded for a unit whose saved
// plan the engine refused as stale: nothing was applied, and a retry that
// finds nothing left to apply must not credit this attempt with it.
func (r *recorder) applyRefused(u *stacks.Unit) error {
	if err := r.st.Delete(r.ctx, applyingKey(r.run, runstate.UnitKey(u))); err != nil {
		return fmt.Errorf("withdrawing the record of the apply of %s: %w", u.Name(), err)
	}
	return nil
}

// applying records, before it starts, that the job applies a unit's
// changes, so a retry knows they may be in its engine state
// (docs/ci.md#an-apply-the-bucket-did-not-take).
func (r *recorder) applying(u *stacks.Unit, digest string) error {
	err := putJSON(r.ctx, r.st, applyingKey(r.run, runstate.UnitKey(u)), &Applying{Digest: digest, At: time.Now().UTC(), Job: r.o.Job}, false)
	if err != nil {
		return fmt.Errorf("recording the apply of %s: %w", u.Name(), err)
	}
	return nil
}
