package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// SliceOptions shape `ci run`.
type SliceOptions struct {
	Run           string
	Wave, Shard   int
	Console       io.Writer
	ErrConsole    io.Writer
	Environ       []string
	Installer     *engines.Installer
	Kill          <-chan struct{}
	KillAfter     time.Duration
	NoPluginCache bool
	// StateDir is the job's local state dir (default
	// <root>/.strata/ci/<run>/<wave>-<shard>): the bucket holds the run
	// state; this dir holds what the engine reads and writes on disk.
	StateDir string
	// Job names this job in what it records (host, pid, CI job).
	Job string
	// Commit is the commit this job has checked out, when known: a job on
	// another commit than the run started on is refused before it runs
	// anything, as what it would plan or apply is not what the run is.
	Commit string
}

// SliceResult is what a job did.
type SliceResult struct {
	// Ran are the units this job ran (the readers that joined the run
	// among them); Done the units of its slice that an
	// earlier attempt had already recorded.
	Ran, Done int
	Report    *runner.Report
	// Held are the units whose engine state another process held (a
	// duplicate job of this shard, most likely), and the units skipped for
	// them: this job recorded nothing for them (docs/ci.md#duplicate-jobs).
	Held []string
}

// RunSlice runs one wave's shard of a run: FetchJob, then Job.Run.
func RunSlice(ctx context.Context, st *objstore.Store, p *stacks.Project, o SliceOptions) (*SliceResult, error) {
	j, err := FetchJob(ctx, st, o)
	if err != nil {
		return nil, err
	}
	return j.Run(ctx, st, p, o)
}

// Job is what one `ci run` job reads from the bucket before it loads the
// project: the run's manifest, the tree its units were found in, and the
// results its slice depends on.
type Job struct {
	// Manifest is the run's manifest with the job's wave's units only.
	Manifest *Manifest
	// slice are the job's units, in manifest order.
	slice []ManifestUnit
	// Tree is the repository's tree as `ci start` read it, on the commit
	// the job has checked out (nil for a run started without one): the job
	// builds its project from it (stacks.LoadFrom).
	Tree *stacks.Tree
	// results are the recorded results of the slice's units (an earlier
	// attempt's) and of their predecessors.
	results map[string]*Result
	// units are the records and saved plans of the slice's units and the
	// run's gates, by unit key, for the job's state dir.
	units map[string]*remoteUnit
	// applying are the applies an earlier attempt started, by unit key
	// (docs/ci.md#an-apply-the-bucket-did-not-take).
	applying map[string]*Applying
}

// Applying records that a job started an apply with changes: a retry
// that finds it, and no result, knows the unit's changes may be in its
// engine state already.
type Applying struct {
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
	Job    string    `json:"job"`
}

// FetchJob reads the manifest of a job's wave, refuses a job whose
// checkout is not the run's commit, and then reads at once the run's tree,
// the results the slice depends on, and the records of its units and of
// the run's gates. It needs no project, so a job fetches while its config
// is read.
func FetchJob(ctx context.Context, st *objstore.Store, o SliceOptions) (*Job, error) {
	m, err := loadWave(ctx, st, o.Run, o.Wave)
	if err != nil {
		return nil, err
	}
	if m.Commit != "" && o.Commit != "" && m.Commit != o.Commit {
		return nil, fmt.Errorf("run %s started on commit %s; this job has %s checked out: check out the run's commit", m.Run, m.Commit, o.Commit)
	}
	j := &Job{Manifest: m, slice: m.Slice(o.Wave, o.Shard)}
	// Every result this job reads: its own units' (an earlier attempt may
	// have recorded them) and their predecessors'.
	var ids []string
	seen := map[string]bool{}
	for _, mu := range j.slice {
		for _, id := range append([]string{mu.ID}, mu.After...) {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	results, err := m.refs(ids)
	if err != nil {
		return nil, err
	}
	pulls := append([]string(nil), m.Gates...)
	for _, mu := range j.slice {
		pulls = append(pulls, mu.ID)
	}
	records, err := m.refs(pulls)
	if err != nil {
		return nil, err
	}
	g := pool.New().WithErrors().WithContext(ctx)
	if m.Tree != "" {
		g.Go(func(ctx context.Context) (err error) {
			j.Tree, err = loadTree(ctx, st, m.Run, m.Tree)
			return err
		})
	}
	g.Go(func(ctx context.Context) (err error) {
		// A refused result is as none: the unit is not done, and the
		// units after it do not take it as settled.
		j.results, _, err = loadResults(ctx, st, m.Run, results)
		return err
	})
	g.Go(func(ctx context.Context) (err error) {
		j.units, err = fetchUnits(ctx, st, records)
		return err
	})
	g.Go(func(ctx context.Context) (err error) {
		j.applying, err = loadApplying(ctx, st, m.Run)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return j, nil
}

// loadApplying reads the applies jobs of a run started, by unit key: one
// listing, and an object for each (few: one per unit an apply changed).
func loadApplying(ctx context.Context, st *objstore.Store, run string) (map[string]*Applying, error) {
	keys, err := st.List(ctx, applyingPrefix(run))
	if err != nil {
		return nil, err
	}
	out := map[string]*Applying{}
	for _, k := range keys {
		a := &Applying{}
		if _, err := getJSON(ctx, st, k, a); err != nil {
			// Unreadable, it says nothing: the unit runs as any.
			continue
		}
		out[strings.TrimSuffix(strings.TrimPrefix(k, applyingPrefix(run)), ".json")] = a
	}
	return out, nil
}

// Fetching is a FetchJob under way.
type Fetching struct {
	done chan struct{}
	job  *Job
	err  error
}

// Fetch starts FetchJob and returns at once: a job fetches while its
// config is read, then builds its project from the run's tree (Tree is the
// tree func of stacks.LoadFrom).
func Fetch(ctx context.Context, st *objstore.Store, o SliceOptions) *Fetching {
	f := &Fetching{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.job, f.err = FetchJob(ctx, st, o)
	}()
	return f
}

// Wait returns what FetchJob returned.
func (f *Fetching) Wait() (*Job, error) {
	<-f.done
	return f.job, f.err
}

// Tree waits for the fetch and returns the run's tree.
func (f *Fetching) Tree() (*stacks.Tree, error) {
	j, err := f.Wait()
	if err != nil {
		return nil, err
	}
	return j.Tree, nil
}

// Run runs the job's slice (docs/ci.md#a-job) with the
// one-machine runner: the units of earlier waves that its units wait for
// are settled by their recorded results, so gates, skips and auto_apply
// behave as on one machine; each unit's result is recorded in the bucket
// as it ends, once. Unit failures are in the results; an error means
// strata itself could not do its part.
func (j *Job) Run(ctx context.Context, st *objstore.Store, p *stacks.Project, o SliceOptions) (*SliceResult, error) {
	m, results := j.Manifest, j.results
	byID := make(map[string]*stacks.Unit, len(p.Units))
	for _, u := range p.Units {
		byID[u.ID()] = u
	}
	unitOf := func(id string) (*stacks.Unit, error) {
		u := byID[id]
		if u == nil {
			return nil, fmt.Errorf("run %s has unit %s, which this checkout does not have; expected the commit the run started on (%s)", m.Run, id, orUnknown(m.Commit))
		}
		return u, nil
	}
	res := &SliceResult{}
	run := &stacks.Run{}
	var readers []*stacks.Unit
	settled := map[string]bool{}
	var settle []runner.Settled
	for _, mu := range j.slice {
		u, err := unitOf(mu.ID)
		if err != nil {
			return nil, err
		}
		if results[mu.ID] != nil {
			res.Done++
			continue
		}
		if mu.Reader {
			readers = append(readers, u)
		} else {
			run.Units = append(run.Units, stacks.RunUnit{Unit: u, Why: mu.Why})
		}
		for _, id := range mu.After {
			if settled[id] {
				continue
			}
			settled[id] = true
			pu, err := unitOf(id)
			if err != nil {
				return nil, err
			}
			s := runner.Settled{Unit: pu, Status: runner.StatusCancelled}
			if pr := results[id]; pr != nil {
				// A skipped unit's result names its root cause; an applied
				// one what its apply changed, for the readers here.
				s.Status, s.Cause = pr.Unit.Status, pr.Unit.Cause
				s.ChangedOutputs, s.OutputsKnown = pr.ChangedOutputs, pr.OutputsKnown
			}
			settle = append(settle, s)
		}
	}
	if len(run.Units) == 0 && len(readers) == 0 {
		return res, nil
	}
	sdPath := o.StateDir
	if sdPath == "" {
		sdPath = filepath.Join(p.Root, ".strata", "ci", escapeSegment(m.Run), fmt.Sprintf("%d-%d", o.Wave, o.Shard))
	}
	sd, err := runner.OpenStateDir(sdPath)
	if err != nil {
		return nil, fmt.Errorf("opening the job's state dir: %w", err)
	}
	mir := newMirror(st, sd, o.Job)
	var gates []*stacks.Unit
	for _, id := range m.Gates {
		u, err := unitOf(id)
		if err != nil {
			return nil, err
		}
		gates = append(gates, u)
	}
	pulls := make([]*stacks.Unit, 0, len(run.Units)+len(readers)+len(gates))
	for _, ru := range run.Units {
		pulls = append(pulls, ru.Unit)
	}
	pulls = append(pulls, readers...)
	if err := mir.pull(append(pulls, gates...), j.units); err != nil {
		return nil, err
	}
	ea, err := runner.ParseEngineArgs(m.Command, m.Options.EngineArgs, p.Root)
	if err != nil {
		return nil, fmt.Errorf("the run's engine arguments: %w", err)
	}
	parallelism := m.Options.Parallelism
	if parallelism == 0 {
		parallelism = p.Config.ParallelRuns.Value
	}
	// What a unit did is recorded even as the job is interrupted; a unit
	// the interrupt cancelled gets no result, so a retried job runs it.
	w, wctx := newWriter(), context.WithoutCancel(ctx)
	put := func(u *stacks.Unit, r *Result) error {
		err := putJSON(wctx, st, resultKey(m.Run, keyOf(u)), r, true)
		if errors.Is(err, objstore.ErrExists) {
			// Another attempt of this job recorded it first.
			return nil
		}
		if err != nil {
			return fmt.Errorf("recording the result of %s: %w", u.Name(), err)
		}
		return nil
	}
	// A unit whose state lock another process held did not run here: the
	// holder's outcome is the unit's, and this job records nothing for it,
	// nor for the units skipped for it (docs/ci.md#duplicate-jobs).
	var (
		heldMu sync.Mutex
		held   = map[string]bool{}
	)
	heldElsewhere := func(ur *runner.UnitReport) bool {
		heldMu.Lock()
		defer heldMu.Unlock()
		lost := ur.Status == runner.StatusFailed && lockHeld(ur) ||
			ur.Status == runner.StatusSkipped && held[ur.Cause]
		if lost {
			held[ur.Name()] = true
			res.Held = append(res.Held, ur.Name())
		}
		return lost
	}
	record := func(u *stacks.Unit, ur *runner.UnitReport) {
		if heldElsewhere(ur) {
			return
		}
		w.Go(func() error {
			applied, err := mir.push(wctx, u, m.Run)
			if err != nil || ur.Status == runner.StatusCancelled {
				return err
			}
			r := &Result{Unit: ur, Log: ur.Log, Wave: o.Wave, Shard: o.Shard, Job: o.Job}
			if applied != nil {
				r.Applied = applied.Digest
				r.ChangedOutputs, r.OutputsKnown = applied.ChangedOutputs, applied.OutputsKnown
			}
			if err := appliedEarlier(wctx, st, m.Run, u, r, j.applying[keyOf(u)]); err != nil {
				return err
			}
			return put(u, r)
		})
	}
	// A reader that stayed out ran nothing and changed no run state: its
	// result says so, with the status the units after it read. One an
	// interrupt cancelled gets none, so a retried job decides again.
	readerOut := func(u *stacks.Unit, ur *runner.UnitReport) {
		if ur.Status == runner.StatusCancelled {
			return
		}
		w.Go(func() error {
			return put(u, &Result{Unit: ur, Wave: o.Wave, Shard: o.Shard, Job: o.Job, NotNeeded: true})
		})
	}
	// A plan for a pull request is recorded as that pull request's, for
	// the apply that compares what it plans with it.
	pr := ""
	if m.PR != 0 {
		pr = runner.PullRequestName(m.PR, o.Environ)
	}
	out, err := runner.Execute(ctx, p, run, runner.Options{
		Command: m.Command, Parallelism: parallelism, EngineArgs: ea,
		AutoApprove: m.Options.AutoApprove, NoAutoApply: m.Options.NoAutoApply,
		RequireReviewedPlan: m.Options.RequireReviewedPlan, PullRequest: pr,
		StateDir: sdPath, ScratchState: true, Console: o.Console, ErrConsole: o.ErrConsole,
		Environ: o.Environ, Installer: o.Installer, Kill: o.Kill, KillAfter: o.KillAfter, NoPluginCache: o.NoPluginCache,
		External: gates, Settled: settle, UnitDone: record,
		// The manifest fixed the run's units and readers when it started:
		// a job looks for no reader of its own, and decides for those of
		// its slice (docs/ci.md#readers).
		NoPropagate: true, Readers: readers, ReaderDone: readerOut,
		Warnings: warnings(pulls, j.units),
		Applying: func(u *stacks.Unit, digest string) error {
			err := putJSON(wctx, st, applyingKey(m.Run, keyOf(u)), &Applying{Digest: digest, At: time.Now().UTC(), Job: o.Job}, false)
			if err != nil {
				return fmt.Errorf("recording the apply of %s: %w", u.Name(), err)
			}
			return nil
		},
	})
	werr := w.wait()
	if err != nil {
		return nil, err
	}
	res.Ran, res.Report = len(out.Report.Units), out.Report
	return res, werr
}

// appliedEarlier makes the result of a unit an earlier attempt of its
// job started applying (a) and did not record, and that has nothing left
// to apply now, the earlier attempt's apply: its changes are in the
// engine state, and the run's record says who made them, once
// (docs/ci.md#an-apply-the-bucket-did-not-take).
func appliedEarlier(ctx context.Context, st *objstore.Store, run string, u *stacks.Unit, r *Result, a *Applying) error {
	if a == nil || r.Unit.Status != runner.StatusNoChanges {
		return nil
	}
	r.Unit.Status, r.Unit.Digest, r.Applied = runner.StatusApplied, a.Digest, a.Digest
	r.Unit.Reason = fmt.Sprintf("applied by an earlier attempt (%s, at %s), which could not record it: a plan now finds nothing left to apply",
		a.Job, a.At.Format(time.RFC3339))
	uk := keyOf(u)
	recorded, err := st.List(ctx, appliesPrefix(run)+uk+"/")
	if err != nil {
		return fmt.Errorf("reading the applies of %s: %w", u.Name(), err)
	}
	if len(recorded) > 0 {
		return nil
	}
	at := a.At.UTC().Format("20060102T150405.000000000Z")
	err = putJSON(ctx, st, applyKey(run, uk, at), ApplyRecord{Digest: a.Digest, At: a.At, Job: a.Job}, true)
	if err != nil && !errors.Is(err, objstore.ErrExists) {
		return fmt.Errorf("recording the apply of %s: %w", u.Name(), err)
	}
	return nil
}

// lockHeld says a unit failed because another process held its engine
// state lock.
func lockHeld(ur *runner.UnitReport) bool {
	const msg = "Error acquiring the state lock"
	return strings.Contains(ur.Reason, msg) || strings.Contains(ur.Log, msg)
}

func orUnknown(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

// JobName names this process in records: the CI job when the service
// says, else the host and pid.
func JobName(getenv func(string) string) string {
	host, _ := os.Hostname()
	name := fmt.Sprintf("%s/%d", host, os.Getpid())
	switch {
	case getenv("GITHUB_RUN_ID") != "":
		name = fmt.Sprintf("github %s/%s attempt %s (%s)", getenv("GITHUB_RUN_ID"), getenv("GITHUB_JOB"), getenv("GITHUB_RUN_ATTEMPT"), name)
	case getenv("CI_JOB_ID") != "":
		name = fmt.Sprintf("gitlab job %s (%s)", getenv("CI_JOB_ID"), name)
	}
	return name
}
