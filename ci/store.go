package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// Result is what a job records of one unit of a run, once: the first job
// to record a unit wins, and a retried job finds the record and moves on.
type Result struct {
	Unit *runner.UnitReport `json:"unit"`
	// Log is the unit's engine output for the summary, masked.
	Log   string `json:"log,omitempty"`
	Wave  int    `json:"wave"`
	Shard int    `json:"shard"`
	// Job names the process that recorded it (host, pid, CI job).
	Job string `json:"job"`
	// Applied is the digest of the apply the unit made in this run, as its
	// run state recorded it ("" when it applied nothing).
	Applied string `json:"applied,omitempty"`
	// ChangedOutputs are the outputs that apply changed, when OutputsKnown:
	// the jobs of its readers read them (docs/ci.md#readers).
	ChangedOutputs []string `json:"changed_outputs,omitempty"`
	OutputsKnown   bool     `json:"outputs_known,omitempty"`
	// NotNeeded marks a reader that did not join the run: no apply of the
	// run changed what it reads (or what it waits for did not open, as
	// Unit.Status says). It is in no report and no exit code; the units
	// after it read its status.
	NotNeeded bool `json:"not_needed,omitempty"`
}

// started and finished are the span of the unit's steps (zero when none ran).
func (r *Result) span() (started, finished time.Time) {
	for _, s := range r.Unit.Steps {
		if started.IsZero() || s.StartedAt.Before(started) {
			started = s.StartedAt
		}
		if s.FinishedAt.After(finished) {
			finished = s.FinishedAt
		}
	}
	return started, finished
}

// ApplyRecord is one successful apply a job saw a unit make in a run,
// kept under runs/<id>/applies/: the invariant checker counts them. An
// apply that failed or was interrupted is not one: a retry may apply.
type ApplyRecord struct {
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
	Job    string    `json:"job"`
}

func putJSON(ctx context.Context, st *objstore.Store, key string, v any, create bool) error {
	// Compact: every job reads the manifest, a few hundred bytes a unit.
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if create {
		return st.Create(ctx, key, append(b, '\n'))
	}
	return st.Put(ctx, key, append(b, '\n'))
}

func getJSON(ctx context.Context, st *objstore.Store, key string, v any) (objstore.Version, error) {
	b, ver, err := st.Get(ctx, key)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return "", fmt.Errorf("%s in the state bucket is not what strata wrote: %w", key, err)
	}
	return ver, nil
}

// LoadManifest reads a run's manifest.
func LoadManifest(ctx context.Context, st *objstore.Store, run string) (*Manifest, error) {
	m := &Manifest{}
	if _, err := getJSON(ctx, st, manifestKey(run), m); err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			return nil, fmt.Errorf("run %s: no such run in the state bucket (ci start makes one)", run)
		}
		return nil, fmt.Errorf("reading the manifest of run %s: %w", run, err)
	}
	return m, checkVersion(run, m)
}

// checkVersion refuses a manifest of a layout this strata does not read.
func checkVersion(run string, m *Manifest) error {
	if m.Version != ManifestVersion {
		return fmt.Errorf("run %s: manifest version %d; this strata reads version %d", run, m.Version, ManifestVersion)
	}
	return nil
}

// putWaves stores, for each wave of a manifest, the manifest with that
// wave's units only: every job reads its wave's, a twentieth of the
// manifest on a run of twenty waves. They are made from the manifest once
// it is stored, so a start retried after it stored the manifest writes the
// ones missing from the same manifest.
func putWaves(ctx context.Context, st *objstore.Store, m *Manifest) error {
	byWave := map[int][]ManifestUnit{}
	for _, u := range m.Units {
		byWave[u.Wave] = append(byWave[u.Wave], u)
	}
	keys := m.unitKeys()
	p := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(fetchers)
	for _, w := range m.Waves {
		wm := *m
		wm.Units, wm.Waves = byWave[w.Wave], nil
		wm.Keys = maps.Clone(m.Keys)
		for _, u := range wm.Units {
			for _, id := range u.After {
				if wm.Keys == nil {
					wm.Keys = map[string]string{}
				}
				wm.Keys[id] = keys[id]
			}
		}
		p.Go(func(ctx context.Context) error {
			err := putJSON(ctx, st, waveKey(m.Run, w.Wave), &wm, true)
			if err != nil && !errors.Is(err, objstore.ErrExists) {
				return fmt.Errorf("writing wave %d of run %s: %w", w.Wave, m.Run, err)
			}
			return nil
		})
	}
	return p.Wait()
}

// loadWave reads the manifest of a run with one wave's units only: the
// wave's own object, or the whole manifest for a run whose start did not
// write them (an older strata, or one that stopped right after storing the
// manifest).
func loadWave(ctx context.Context, st *objstore.Store, run string, wave int) (*Manifest, error) {
	m := &Manifest{}
	_, err := getJSON(ctx, st, waveKey(run, wave), m)
	if errors.Is(err, objstore.ErrNotFound) {
		return LoadManifest(ctx, st, run)
	}
	if err != nil {
		return nil, fmt.Errorf("reading wave %d of run %s: %w", wave, run, err)
	}
	return m, checkVersion(run, m)
}

// unitRef is a unit as the bucket knows it: its ID, and its key (unitKey).
type unitRef struct{ id, key string }

// loadResult reads one unit's result; nil when none is recorded. A
// result that is not one strata wrote, or whose content names another unit
// than its key, is refused: nil, and why (docs/ci.md#a-result-that-lies).
func loadResult(ctx context.Context, st *objstore.Store, run, key string) (*Result, string, error) {
	b, _, err := st.Get(ctx, resultKey(run, key))
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	res := &Result{}
	if err := json.Unmarshal(b, res); err != nil {
		return nil, fmt.Sprintf("its result object %s is not a result strata wrote (%v)", resultKey(run, key), err), nil
	}
	if res.Unit == nil {
		return nil, fmt.Sprintf("its result object %s names no unit", resultKey(run, key)), nil
	}
	if got := unitKey(res.Unit.Dir, res.Unit.Workspace, res.Unit.Stack); got != key {
		return nil, fmt.Sprintf("its result object %s holds the result of %s", resultKey(run, key), res.Unit.Name()), nil
	}
	return res, "", nil
}

// fetchers bounds the requests a job has in flight to the bucket.
const fetchers = 16

// fetchAll reads one object a unit for units, at most fetchers at once,
// and returns them in the order of refs.
func fetchAll[T any](ctx context.Context, refs []unitRef, fetch func(ctx context.Context, r unitRef) (T, error)) ([]T, error) {
	out := make([]T, len(refs))
	p := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(fetchers)
	for i, r := range refs {
		p.Go(func(ctx context.Context) (err error) {
			out[i], err = fetch(ctx, r)
			return err
		})
	}
	return out, p.Wait()
}

// loadResults reads the results of units, fetched at once; a unit with
// none recorded is absent from the map, and one whose result was refused
// is in refused, with why.
func loadResults(ctx context.Context, st *objstore.Store, run string, refs []unitRef) (results map[string]*Result, refused map[string]string, err error) {
	type loaded struct {
		res     *Result
		refused string
	}
	out, err := fetchAll(ctx, refs, func(ctx context.Context, r unitRef) (loaded, error) {
		res, why, err := loadResult(ctx, st, run, r.key)
		return loaded{res, why}, err
	})
	if err != nil {
		return nil, nil, err
	}
	results, refused = make(map[string]*Result, len(refs)), map[string]string{}
	for i, r := range refs {
		switch {
		case out[i].refused != "":
			refused[r.id] = out[i].refused
		case out[i].res != nil:
			results[r.id] = out[i].res
		}
	}
	return results, refused, nil
}

// mirror keeps the run state of a job's units in step with the bucket
// (docs/ci.md#run-state-in-the-bucket): before the command it writes each
// unit's record and saved plan from the bucket into the job's local state
// dir; as each unit ends, it writes them back, the record by
// compare-and-swap. The init record stays local: an init belongs to a
// machine.
type mirror struct {
	st  *objstore.Store
	sd  *runner.StateDir
	job string

	mu       sync.Mutex
	versions map[*stacks.Unit]objstore.Version
	before   map[*stacks.Unit]*runner.ApplyRecord
}

func newMirror(st *objstore.Store, sd *runner.StateDir, job string) *mirror {
	return &mirror{st: st, sd: sd, job: job, versions: map[*stacks.Unit]objstore.Version{}, before: map[*stacks.Unit]*runner.ApplyRecord{}}
}

func keyOf(u *stacks.Unit) string { return unitKey(u.Dir, u.Workspace, u.Stack.Name) }

// remoteUnit is a unit's record and saved plan as the bucket holds them.
type remoteUnit struct {
	state *runner.UnitState
	ver   objstore.Version // "": no record
	plan  []byte           // nil: no plan the record names
	// warning says the record was corrupt and moved aside.
	warning string
}

// getUnitState reads a unit's record by its key. A record that is not
// one strata wrote is returned empty, with its version and what is wrong
// with it (bad).
func getUnitState(ctx context.Context, st *objstore.Store, uk string) (us *runner.UnitState, ver objstore.Version, data []byte, bad error, err error) {
	data, ver, err = st.Get(ctx, unitStateKey(uk))
	if errors.Is(err, objstore.ErrNotFound) {
		return &runner.UnitState{}, "", nil, nil, nil
	}
	if err != nil {
		return nil, "", nil, nil, err
	}
	us = &runner.UnitState{}
	if bad := json.Unmarshal(data, us); bad != nil {
		return &runner.UnitState{}, ver, data, bad, nil
	}
	return us, ver, data, nil, nil
}

// fetchUnit reads a unit's record, and the saved plan it names, by the
// unit's key; name is how errors name the unit. A record naming a plan the
// bucket does not have keeps no plan. A corrupt record is moved aside, as
// a corrupt journal on disk is, and the unit starts afresh
// (docs/ci.md#a-corrupt-record).
func fetchUnit(ctx context.Context, st *objstore.Store, uk, name string) (*remoteUnit, error) {
	state, ver, data, bad, err := getUnitState(ctx, st, uk)
	if err != nil {
		return nil, fmt.Errorf("reading the run state of %s from the bucket: %w", name, err)
	}
	r := &remoteUnit{state: state, ver: ver}
	if bad != nil {
		key := unitStateKey(uk)
		aside := key + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if err := st.Create(ctx, aside, data); err != nil && !errors.Is(err, objstore.ErrExists) {
			return nil, fmt.Errorf("the run state of %s in the bucket (%s) is corrupt (%v) and could not be moved aside: %w", name, key, bad, err)
		}
		// Start afresh in the bucket too, unless another writer already
		// replaced it: then its record is read again.
		err := st.Update(ctx, key, []byte("{}\n"), ver)
		if err != nil && !errors.Is(err, objstore.ErrChanged) {
			return nil, fmt.Errorf("the run state of %s in the bucket (%s) is corrupt (%v) and could not be replaced: %w", name, key, bad, err)
		}
		again, ver, _, bad2, err := getUnitState(ctx, st, uk)
		if err != nil {
			return nil, fmt.Errorf("reading the run state of %s from the bucket: %w", name, err)
		}
		if bad2 != nil {
			return nil, fmt.Errorf("the run state of %s in the bucket (%s) is corrupt again (%v)", name, key, bad2)
		}
		r.state, r.ver = again, ver
		r.warning = fmt.Sprintf("its run state in the bucket (%s) was corrupt (%v); moved it to %s and started the unit afresh", key, bad, aside)
	}
	if r.state.Plan != nil {
		b, _, err := st.Get(ctx, planKey(uk, r.state.Plan.Digest))
		switch {
		case errors.Is(err, objstore.ErrNotFound):
			r.state.Plan = nil
		case err != nil:
			return nil, fmt.Errorf("reading the saved plan of %s from the bucket: %w", name, err)
		default:
			r.plan = b
		}
	}
	return r, nil
}

// warnings are the warnings of fetched records, for runner.Options.
func warnings(units []*stacks.Unit, fetched map[string]*remoteUnit) map[*stacks.Unit][]string {
	out := map[*stacks.Unit][]string{}
	for _, u := range units {
		if r := fetched[keyOf(u)]; r != nil && r.warning != "" {
			out[u] = append(out[u], r.warning)
		}
	}
	return out
}

// fetchUnits reads the records of units at once, keyed by unit key.
func fetchUnits(ctx context.Context, st *objstore.Store, refs []unitRef) (map[string]*remoteUnit, error) {
	out, err := fetchAll(ctx, refs, func(ctx context.Context, r unitRef) (*remoteUnit, error) {
		return fetchUnit(ctx, st, r.key, r.id)
	})
	if err != nil {
		return nil, err
	}
	m := make(map[string]*remoteUnit, len(refs))
	for i, r := range refs {
		m[r.key] = out[i]
	}
	return m, nil
}

// pull writes units' records and saved plans, as fetched from the bucket,
// into the local state dir. A plan is the one the unit's record names,
// whatever the local disk holds. The records are written unsynced: the
// bucket holds them, and a lost copy is pulled again.
func (m *mirror) pull(units []*stacks.Unit, fetched map[string]*remoteUnit) error {
	for _, u := range units {
		r := fetched[keyOf(u)]
		if r == nil {
			return fmt.Errorf("the run state of %s was not read from the bucket", u.Name())
		}
		planFile, err := m.sd.PlanFile(u.Dir, u.Workspace, u.Stack.Name, u.Shared)
		if err != nil {
			return err
		}
		os.Remove(planFile)
		if r.plan != nil {
			if err := os.MkdirAll(filepath.Dir(planFile), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(planFile, r.plan, 0o600); err != nil {
				return fmt.Errorf("writing the saved plan of %s: %w", u.Name(), err)
			}
		}
		err = m.sd.UpdateUnitUnsynced(u, func(local *runner.UnitState) {
			init := local.Init
			*local = *r.state
			local.Init = init
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.versions[u], m.before[u] = r.ver, r.state.Apply
		m.mu.Unlock()
	}
	return nil
}

// push writes a unit's record back to the bucket, and its saved plan
// under its digest. When another writer changed the record since pull,
// the two are merged, the later plan and the later apply winning, and
// swapped again. It returns the apply the unit made since pull, if any,
// and records it under the run (a CI run; run "" records nothing).
func (m *mirror) push(ctx context.Context, u *stacks.Unit, run string) (*runner.ApplyRecord, error) {
	uk := keyOf(u)
	local, err := m.sd.ReadUnit(u)
	if err != nil {
		return nil, err
	}
	local.Init = nil
	if local.Plan != nil {
		planFile, err := m.sd.PlanFile(u.Dir, u.Workspace, u.Stack.Name, u.Shared)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(planFile)
		if err != nil {
			return nil, fmt.Errorf("reading the saved plan of %s: %w", u.Name(), err)
		}
		// Keyed by content digest: a plan already there is this one.
		if err := m.st.Create(ctx, planKey(uk, local.Plan.Digest), b); err != nil && !errors.Is(err, objstore.ErrExists) {
			return nil, fmt.Errorf("storing the saved plan of %s: %w", u.Name(), err)
		}
	}
	m.mu.Lock()
	ver, before := m.versions[u], m.before[u]
	m.mu.Unlock()
	rec := local
	for tries := 0; ; tries++ {
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		err = m.st.Update(ctx, unitStateKey(uk), append(b, '\n'), ver)
		if err == nil {
			break
		}
		if !errors.Is(err, objstore.ErrChanged) || tries == 20 {
			return nil, fmt.Errorf("storing the run state of %s: %w", u.Name(), err)
		}
		// A record another writer left corrupt is replaced: this job's
		// record is the one it has.
		remote, v, _, _, err := getUnitState(ctx, m.st, uk)
		if err != nil {
			return nil, err
		}
		ver = v
		rec = merge(local, remote)
	}
	var applied *runner.ApplyRecord
	if a := local.Apply; a != nil && (before == nil || a.At.After(before.At)) && run != "" &&
		(a.Result == runner.StatusApplied || a.Result == runner.StatusDestroyed) {
		applied = a
		at := a.At.UTC().Format("20060102T150405.000000000Z")
		if err := putJSON(ctx, m.st, applyKey(run, uk, at), ApplyRecord{Digest: a.Digest, At: a.At, Job: m.job}, true); err != nil && !errors.Is(err, objstore.ErrExists) {
			return nil, fmt.Errorf("recording the apply of %s: %w", u.Name(), err)
		}
	}
	return applied, nil
}

// merge joins this job's record of a unit with one another writer stored
// meanwhile: the later apply, the later plan and the later deployed
// commit win, and a plan made before the winning apply is gone (an apply
// consumes its plan).
func merge(local, remote *runner.UnitState) *runner.UnitState {
	out := &runner.UnitState{Apply: remote.Apply, Plan: remote.Plan}
	if local.Apply != nil && (out.Apply == nil || local.Apply.At.After(out.Apply.At)) {
		out.Apply = local.Apply
	}
	if local.Plan != nil && (out.Plan == nil || local.Plan.At.After(out.Plan.At)) {
		out.Plan = local.Plan
	}
	if out.Plan != nil && out.Apply != nil && !out.Plan.At.After(out.Apply.At) {
		out.Plan = nil
	}
	out.Deployed = remote.Deployed
	if local.Deployed != nil && (out.Deployed == nil || local.Deployed.At.After(out.Deployed.At)) {
		out.Deployed = local.Deployed
	}
	return out
}

// writer writes what units did back to the bucket as they end, off the
// scheduler's goroutine (a slow bucket must not hold up the next unit),
// at most fetchers at once; wait returns once every write is done, with
// what could not be written. A write goes on when the command is
// interrupted: what a unit did is never dropped.
type writer struct {
	p *pool.ErrorPool
}

func newWriter() *writer {
	return &writer{p: pool.New().WithErrors().WithMaxGoroutines(fetchers)}
}

func (w *writer) Go(f func() error) { w.p.Go(f) }
func (w *writer) wait() error       { return w.p.Wait() }

// Attach keeps a run on one machine (`strata apply --state URL`) in step
// with the state bucket (docs/ci.md#run-state-in-the-bucket): the run
// state and saved plans of units are written from the bucket into the
// local state dir now, and each unit's are written back as it ends,
// through opt.UnitDone, which Attach sets, with opt.Warnings. wait
// returns once everything is written back, with what could not be.
func Attach(ctx context.Context, st *objstore.Store, stateDir string, units []*stacks.Unit, job string, opt *runner.Options) (wait func() error, err error) {
	sd, err := runner.OpenStateDir(stateDir)
	if err != nil {
		return nil, err
	}
	refs := make([]unitRef, len(units))
	for i, u := range units {
		refs[i] = unitRef{id: u.ID(), key: keyOf(u)}
	}
	fetched, err := fetchUnits(ctx, st, refs)
	if err != nil {
		return nil, err
	}
	mir := newMirror(st, sd, job)
	if err := mir.pull(units, fetched); err != nil {
		return nil, err
	}
	w, wctx := newWriter(), context.WithoutCancel(ctx)
	opt.UnitDone = func(u *stacks.Unit, _ *runner.UnitReport) {
		w.Go(func() error {
			_, err := mir.push(wctx, u, "")
			return err
		})
	}
	opt.Warnings = warnings(units, fetched)
	return w.wait, nil
}

// UnitStates reads units' records from the bucket; a unit with none, or
// with a corrupt one, has an empty one.
func UnitStates(ctx context.Context, st *objstore.Store, units []*stacks.Unit) (map[*stacks.Unit]*runner.UnitState, error) {
	refs := make([]unitRef, len(units))
	for i, u := range units {
		refs[i] = unitRef{id: u.ID(), key: keyOf(u)}
	}
	got, err := fetchAll(ctx, refs, func(ctx context.Context, r unitRef) (*runner.UnitState, error) {
		// A corrupt record reads as none: the unit is taken as never
		// applied, and the job that runs it moves the record aside.
		us, _, _, _, err := getUnitState(ctx, st, r.key)
		if err != nil {
			return nil, fmt.Errorf("reading the run state of %s from the bucket: %w", r.id, err)
		}
		return us, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[*stacks.Unit]*runner.UnitState, len(units))
	for i, us := range got {
		out[units[i]] = us
	}
	return out, nil
}
