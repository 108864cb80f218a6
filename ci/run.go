package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/strata-iac/strata/job"

	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
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
	// Gates checks the gates the units' plans raised (runner.Extra.Gates).
	Gates runner.GateFunc
	// MergedPullRequest is runner.Hooks'.
	MergedPullRequest func() string
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
	Report    *report.Report
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
	units map[string]*runstate.Remote
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
	if err := m.hasSlice(o.Wave, o.Shard); err != nil {
		return nil, err
	}
	if m.Commit != "" && o.Commit != "" && m.Commit != o.Commit {
		return nil, fmt.Errorf("run %s started on commit %s; this job has %s checked out: check out the run's commit", m.Run, m.Commit, o.Commit)
	}
	j := &Job{Manifest: m, slice: m.Slice(o.Wave, o.Shard)}
	first, err := markJob(ctx, st, m, o)
	if err != nil {
		return nil, err
	}
	// Every result this job reads: its own units' (an earlier attempt may
	// have recorded them, unless this is the first) and their
	// predecessors'.
	var ids []string
	if !first {
		for _, mu := range j.slice {
			ids = append(ids, mu.ID)
		}
	}
	ids = append(ids, predecessors(j.slice, m.stackIndex())...)
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
		j.units, err = runstate.FetchUnits(ctx, st, records)
		return err
	})
	if !first {
		g.Go(func(ctx context.Context) (err error) {
			j.applying, err = loadApplying(ctx, st, m.Run, j.slice)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return j, nil
}

// JobMark is what the first attempt of a job records before it reads
// anything else of the run (docs/ci.md#a-job).
type JobMark struct {
	Job string    `json:"job"`
	At  time.Time `json:"at"`
}

// markJob records that an attempt of the job's shard began, and says
// whether it is the first: no other attempt marked it before, so none can
// have recorded a result or begun an apply of its units. That attempt
// reads neither: one create instead of a read for each of its units and
// a listing of the run's applies begun. A retry, or a duplicate job
// started later, finds the mark and reads them. A run whose manifest
// predates marks (version 5) has none: every attempt reads them.
func markJob(ctx context.Context, st *objstore.Store, m *Manifest, o SliceOptions) (bool, error) {
	if !m.marksJobs() {
		return false, nil
	}
	err := putJSON(ctx, st, jobKey(m.Run, o.Wave, o.Shard), JobMark{Job: o.Job, At: time.Now().UTC()}, true)
	switch {
	case errors.Is(err, objstore.ErrExists):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("marking wave %d shard %d of run %s begun: %w", o.Wave, o.Shard, m.Run, err)
	}
	return true, nil
}

// loadApplying reads the applies an earlier attempt of the job started
// for the slice's units, by unit key: one listing of the run's, and an
// object for each of the slice's units there (few: a retried job's).
func loadApplying(ctx context.Context, st *objstore.Store, run string, slice []ManifestUnit) (map[string]*Applying, error) {
	keys, err := st.List(ctx, applyingPrefix(run))
	if err != nil {
		return nil, err
	}
	mine := make(map[string]string, len(slice))
	for _, mu := range slice {
		mine[applyingKey(run, mu.key())] = mu.key()
	}
	out := map[string]*Applying{}
	for _, k := range keys {
		uk, ok := mine[k]
		if !ok {
			// Another job's unit: not this job's to read.
			continue
		}
		a := &Applying{}
		if _, err := getJSON(ctx, st, k, a); err != nil {
			// Unreadable, it says nothing: the unit runs as any.
			continue
		}
		out[uk] = a
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
	m := j.Manifest
	units := newUnitIndex(m, p)
	sl, err := j.resolve(units)
	if err != nil {
		return nil, err
	}
	res := &SliceResult{Done: sl.done}
	if len(sl.run.Units) == 0 && len(sl.readers) == 0 {
		return res, nil
	}
	sdPath := jobStateDir(p, m, o)
	mir, err := j.pull(st, units, sl, sdPath)
	if err != nil {
		return nil, err
	}
	ea, err := runner.ParseEngineArgs(m.Command, m.Options.EngineArgs.Given, p.Root)
	if err != nil {
		return nil, fmt.Errorf("the run's engine arguments: %w", err)
	}
	rec := newRecorder(ctx, st, mir, j, o, res)
	rec.destroy = runner.Settings{Command: m.Command, EngineArgs: ea}.Destroying()
	out, err := runner.Execute(ctx, p, sl.run, j.runnerOptions(p, o, sl, rec, ea, sdPath))
	werr := rec.w.Wait()
	if err != nil {
		return nil, err
	}
	res.Ran, res.Report = len(out.Report.Units), out.Report
	return res, errors.Join(werr, recordHooks(ctx, st, m.Run, o, out.Report.Hooks))
}

// HooksRecord is what one job's hooks did, for ci finish's report
// (docs/ci.md#a-job): each job runs the hooks around its own units.
type HooksRecord struct {
	Wave  int                 `json:"wave"`
	Shard int                 `json:"shard"`
	Job   string              `json:"job,omitempty"`
	Hooks *report.HooksReport `json:"hooks"`
}

// recordHooks records the job's hooks, when any ran; a retried job's
// record replaces its earlier attempt's.
func recordHooks(ctx context.Context, st *objstore.Store, run string, o SliceOptions, h *report.HooksReport) error {
	if h == nil {
		return nil
	}
	rec := HooksRecord{Wave: o.Wave, Shard: o.Shard, Job: o.Job, Hooks: h}
	if err := putJSON(ctx, st, hooksKey(run, o.Wave, o.Shard), rec, false); err != nil {
		return fmt.Errorf("recording the job's hooks: %w", err)
	}
	return nil
}

// unitIndex finds the project's units by the IDs the manifest names.
type unitIndex struct {
	m    *Manifest
	byID map[string]*stacks.Unit
}

// newUnitIndex indexes the project's units by ID for the run's manifest.
func newUnitIndex(m *Manifest, p *stacks.Project) unitIndex {
	byID := make(map[string]*stacks.Unit, len(p.Units))
	for _, u := range p.Units {
		byID[u.ID()] = u
	}
	return unitIndex{m: m, byID: byID}
}

// unit decides which of the checkout's units an ID of the run names, and
// refuses one the checkout does not have.
func (x unitIndex) unit(id string) (*stacks.Unit, error) {
	u := x.byID[id]
	if u == nil {
		return nil, fmt.Errorf("run %s has unit %s, which this checkout does not have; expected the commit the run started on (%s)", x.m.Run, id, orUnknown(x.m.Commit))
	}
	return u, nil
}

// jobSlice is what the job runs of its slice: the units, the readers,
// the predecessors from earlier waves as settled, the units pulled from
// the bucket, and how many units an earlier attempt had done.
type jobSlice struct {
	run     *stacks.Run
	readers []*stacks.Unit
	settle  []runner.Settled
	gates   []*stacks.Unit
	// pulls are the units and readers whose records the job pulled.
	pulls []*stacks.Unit
	done  int
	// denied and autoApplyDenied are what the controls refuse of the
	// slice's units (ManifestUnit.Denied).
	denied, autoApplyDenied map[*stacks.Unit]string
	// warnings are what the controls said of the slice's units at start
	// (ManifestUnit.Warnings).
	warnings map[*stacks.Unit][]string
}

// resolve decides which of the slice's units run (those with no recorded
// result), which of them are readers, and how each predecessor they wait
// for settled, in manifest order.
func (j *Job) resolve(units unitIndex) (*jobSlice, error) {
	sl := &jobSlice{run: &stacks.Run{}}
	var running []ManifestUnit
	for _, mu := range j.slice {
		u, err := units.unit(mu.ID)
		if err != nil {
			return nil, err
		}
		if j.results[mu.ID] != nil {
			sl.done++
			continue
		}
		sl.refuse(u, mu)
		if mu.Reader {
			sl.readers = append(sl.readers, u)
		} else {
			sl.run.Units = append(sl.run.Units, stacks.RunUnit{Unit: u, Why: mu.Why})
		}
		running = append(running, mu)
	}
	for _, id := range predecessors(running, j.Manifest.stackIndex()) {
		pu, err := units.unit(id)
		if err != nil {
			return nil, err
		}
		sl.settle = append(sl.settle, j.settledAs(pu, id))
	}
	return sl, nil
}

// predecessors are the IDs of the units that units wait for, each once,
// in the order first met: a stack waited for is listed once however many
// of units wait for it.
func predecessors(units []ManifestUnit, stackAt map[string]*ManifestStack) []string {
	var out []string
	seen := map[string]bool{}
	add := func(ids []string) {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	stackDone := map[string]bool{}
	for _, mu := range units {
		add(mu.After)
		if ms := stackAt[mu.Stack]; ms != nil && !stackDone[mu.Stack] {
			stackDone[mu.Stack] = true
			for _, name := range ms.After {
				if t := stackAt[name]; t != nil {
					add(t.Units)
				}
			}
		}
	}
	return out
}

// refuse keeps what the manifest says the controls refuse of a unit of
// the slice.
func (sl *jobSlice) refuse(u *stacks.Unit, mu ManifestUnit) {
	if mu.Denied != "" {
		if sl.denied == nil {
			sl.denied = map[*stacks.Unit]string{}
		}
		sl.denied[u] = mu.Denied
	}
	if mu.AutoApplyDenied != "" {
		if sl.autoApplyDenied == nil {
			sl.autoApplyDenied = map[*stacks.Unit]string{}
		}
		sl.autoApplyDenied[u] = mu.AutoApplyDenied
	}
	if len(mu.Warnings) > 0 {
		if sl.warnings == nil {
			sl.warnings = map[*stacks.Unit][]string{}
		}
		sl.warnings[u] = mu.Warnings
	}
}

// withWarnings is the records' warnings w with the controls' of each
// unit after them.
func (sl *jobSlice) withWarnings(w map[*stacks.Unit][]string) map[*stacks.Unit][]string {
	if len(sl.warnings) == 0 {
		return w
	}
	out := make(map[*stacks.Unit][]string, len(w)+len(sl.warnings))
	for u, ws := range w {
		out[u] = ws
	}
	for u, ws := range sl.warnings {
		out[u] = append(slices.Clip(out[u]), ws...)
	}
	return out
}

// settledAs decides how a predecessor from an earlier wave settled: as
// its recorded result says, or cancelled when it has none.
func (j *Job) settledAs(pu *stacks.Unit, id string) runner.Settled {
	s := runner.Settled{Unit: pu, Status: report.StatusCancelled}
	if pr := j.results[id]; pr != nil {
		// A skipped unit's result names its root cause; an applied
		// one what its apply changed, for the readers here.
		s.Status, s.Cause = pr.Unit.Status, pr.Unit.Cause
		s.ChangedOutputs, s.OutputsKnown = pr.ChangedOutputs, pr.OutputsKnown
		s.UnknownUntilApplied = pr.Unit.UnknownUntilApplied
		s.CauseDenied = s.Status == report.StatusSkipped && j.deniedByName(s.Cause)
	}
	return s
}

// deniedByName says the run's start denied the unit named name.
func (j *Job) deniedByName(name string) bool {
	return slices.Contains(j.Manifest.Denied, name)
}

// jobStateDir decides the job's local state dir: the one the options
// name, else one under the project's .strata for the run, wave and shard.
func jobStateDir(p *stacks.Project, m *Manifest, o SliceOptions) string {
	if o.StateDir != "" {
		return o.StateDir
	}
	return filepath.Join(runstate.DefaultPath(p.Root), "ci", runstate.EscapeSegment(m.Run), fmt.Sprintf("%d-%d", o.Wave, o.Shard))
}

// pull opens the job's state dir and writes into it the records and
// saved plans of the slice's units, its readers and the run's gates, as
// fetched; it fills in the slice's gates and pulls.
func (j *Job) pull(st *objstore.Store, units unitIndex, sl *jobSlice, sdPath string) (*runstate.Mirror, error) {
	sd, err := runstate.OpenStateDir(sdPath)
	if err != nil {
		return nil, fmt.Errorf("opening the job's state dir: %w", err)
	}
	mir := runstate.NewMirror(st, sd)
	for _, id := range j.Manifest.Gates {
		u, err := units.unit(id)
		if err != nil {
			return nil, err
		}
		sl.gates = append(sl.gates, u)
	}
	pulls := make([]*stacks.Unit, 0, len(sl.run.Units)+len(sl.readers)+len(sl.gates))
	for _, ru := range sl.run.Units {
		pulls = append(pulls, ru.Unit)
	}
	sl.pulls = append(pulls, sl.readers...)
	if err := mir.Pull(append(sl.pulls, sl.gates...), j.units); err != nil {
		return nil, err
	}
	return mir, nil
}

// runnerOptions decides how the one-machine runner runs the slice: the
// run's command and options, the job's state dir and console, the gates
// and settled predecessors, and the recorder's hooks.
func (j *Job) runnerOptions(p *stacks.Project, o SliceOptions, sl *jobSlice, rec *recorder, ea runner.EngineArgs, sdPath string) runner.Options {
	m := j.Manifest
	// A plan for a pull request is recorded as that pull request's, for
	// the apply that compares what it plans with it.
	pr := ""
	if m.PR != 0 {
		pr = job.PullRequestName(m.PR, o.Environ)
	}
	set := m.Options
	set.Command, set.EngineArgs, set.PullRequest = m.Command, ea, pr
	set.StateDir, set.ScratchState = sdPath, true
	set.KillAfter, set.NoPluginCache = o.KillAfter, o.NoPluginCache
	// ci finish decides the run's exit code, from every job's record.
	set.DetailedExitCode = false
	// The manifest fixed the run's units and readers when it started: a
	// job looks for no reader of its own, and decides for those of its
	// slice (docs/ci.md#readers).
	set.NoPropagate = true
	return runner.Options{
		Settings: set,
		Output:   runner.Output{Console: o.Console, ErrConsole: o.ErrConsole},
		Hooks: runner.Hooks{
			Kill: o.Kill, UnitDone: rec.record, ReaderDone: rec.readerOut,
			Applying: rec.applying, ApplyRefused: rec.applyRefused, MergedPullRequest: o.MergedPullRequest,
		},
		Extra: runner.Extra{
			Environ: o.Environ, Installer: o.Installer,
			External: sl.gates, Settled: sl.settle, Readers: sl.readers,
			Denied: sl.denied, AutoApplyDenied: sl.autoApplyDenied, Gates: o.Gates,
			Warnings: sl.withWarnings(runstate.Warnings(sl.pulls, j.units)),
		},
	}
}

// recordApply records a unit's successful apply under the run
// (runs/<id>/applies/), for the invariant checker to count; one already
// there is this one.
func recordApply(ctx context.Context, st *objstore.Store, run string, u *stacks.Unit, a ApplyRecord) error {
	at := a.At.UTC().Format("20060102T150405.000000000Z")
	err := putJSON(ctx, st, applyKey(run, runstate.UnitKey(u), at), a, true)
	if err != nil && !errors.Is(err, objstore.ErrExists) {
		return fmt.Errorf("recording the apply of %s: %w", u.Name(), err)
	}
	return nil
}

// appliedEarlier makes the result of a unit an earlier attempt of its
// job started applying (a) and did not record, and that has nothing left
// to apply now, the earlier attempt's apply: its changes are in the
// engine state, and the run's record says who made them, once
// (docs/ci.md#an-apply-the-bucket-did-not-take).
func appliedEarlier(ctx context.Context, st *objstore.Store, run string, u *stacks.Unit, r *Result, a *Applying, destroy bool) error {
	if a == nil || r.Unit.Status != report.StatusNoChanges {
		return nil
	}
	status, verb, left := report.StatusApplied, "applied", "apply"
	if destroy {
		status, verb, left = report.StatusDestroyed, "destroyed", "destroy"
	}
	r.Unit.Status, r.Unit.Digest, r.Applied = status, a.Digest, a.Digest
	r.Unit.Reason = fmt.Sprintf("%s by an earlier attempt (%s, at %s), which could not record it: a plan now finds nothing left to %s",
		verb, a.Job, a.At.Format(time.RFC3339), left)
	recorded, err := st.List(ctx, appliesPrefix(run)+runstate.UnitKey(u)+"/")
	if err != nil {
		return fmt.Errorf("reading the applies of %s: %w", u.Name(), err)
	}
	if len(recorded) > 0 {
		return nil
	}
	return recordApply(ctx, st, run, u, ApplyRecord(*a))
}

// lockHeld says a unit failed because another process held its engine
// state lock.
func lockHeld(ur *report.UnitReport) bool {
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
	ci := ciplatform.From(getenv)
	switch gh, gl := ci.GitHub, ci.GitLab; {
	case gh.RunID != "":
		name = fmt.Sprintf("github %s/%s attempt %s (%s)", gh.RunID, gh.JobID, gh.RunAttempt, name)
	case gl.JobID != "":
		name = fmt.Sprintf("gitlab job %s (%s)", gl.JobID, name)
	}
	return name
}
