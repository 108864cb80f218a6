package runstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// Fetchers bounds the requests a job has in flight to the bucket.
// As many as the store keeps connections open between requests.
const Fetchers = objstore.IdleConns

// FetchAll reads one object a unit for units, at most Fetchers at once,
// and returns them in the order of refs.
func FetchAll[T any](ctx context.Context, refs []Ref, fetch func(ctx context.Context, r Ref) (T, error)) ([]T, error) {
	out := make([]T, len(refs))
	p := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(Fetchers)
	for i, r := range refs {
		p.Go(func(ctx context.Context) (err error) {
			out[i], err = fetch(ctx, r)
			return err
		})
	}
	return out, p.Wait()
}

// Ref is a unit as the bucket knows it: its ID, and its key (UnitKey).
type Ref struct{ ID, Key string }

// RefOf is a unit's Ref.
func RefOf(u *stacks.Unit) Ref { return Ref{ID: u.ID(), Key: UnitKey(u)} }

// Mirror keeps the run state of a job's units in step with the bucket
// (docs/ci.md#run-state-in-the-bucket): before the command it writes each
// unit's record and saved plan from the bucket into the job's local state
// dir; as each unit ends, it writes them back, the record by
// compare-and-swap. The init record stays local: an init belongs to a
// machine.
type Mirror struct {
	st *objstore.Store
	sd *StateDir

	mu       sync.Mutex
	versions map[*stacks.Unit]objstore.Version
	before   map[*stacks.Unit]*ApplyRecord
}

func NewMirror(st *objstore.Store, sd *StateDir) *Mirror {
	return &Mirror{st: st, sd: sd, versions: map[*stacks.Unit]objstore.Version{}, before: map[*stacks.Unit]*ApplyRecord{}}
}

func UnitKey(u *stacks.Unit) string { return KeyOf(u.Dir, u.Workspace, u.Stack.Name) }

// Remote is a unit's record and saved plan as the bucket holds them.
type Remote struct {
	State   *UnitState
	Version objstore.Version // "": no record
	Plan    []byte           // nil: no plan the record names
	// Warning says the record was corrupt and moved aside.
	Warning string
}

// GetUnitState reads a unit's record by its key. A record that is not
// one strata wrote is returned empty, with its version and what is wrong
// with it (bad).
func GetUnitState(ctx context.Context, st *objstore.Store, uk string) (us *UnitState, ver objstore.Version, data []byte, bad error, err error) {
	data, ver, err = st.Get(ctx, StateKey(uk))
	if errors.Is(err, objstore.ErrNotFound) {
		return &UnitState{}, "", nil, nil, nil
	}
	if err != nil {
		return nil, "", nil, nil, err
	}
	us = &UnitState{}
	if bad := json.Unmarshal(data, us); bad != nil {
		return &UnitState{}, ver, data, bad, nil
	}
	return us, ver, data, nil, nil
}

// FetchUnit reads a unit's record, and the saved plan it names, by the
// unit's key; name is how errors name the unit. A record naming a plan the
// bucket does not have keeps no plan. A corrupt record is moved aside, as
// a corrupt journal on disk is, and the unit starts afresh
// (docs/ci.md#a-corrupt-record).
func FetchUnit(ctx context.Context, st *objstore.Store, uk, name string) (*Remote, error) {
	state, ver, data, bad, err := GetUnitState(ctx, st, uk)
	if err != nil {
		return nil, fmt.Errorf("reading the run state of %s from the bucket: %w", name, err)
	}
	r := &Remote{State: state, Version: ver}
	if bad != nil {
		key := StateKey(uk)
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
		again, ver, _, bad2, err := GetUnitState(ctx, st, uk)
		if err != nil {
			return nil, fmt.Errorf("reading the run state of %s from the bucket: %w", name, err)
		}
		if bad2 != nil {
			return nil, fmt.Errorf("the run state of %s in the bucket (%s) is corrupt again (%v)", name, key, bad2)
		}
		r.State, r.Version = again, ver
		r.Warning = fmt.Sprintf("its run state in the bucket (%s) was corrupt (%v); moved it to %s and started the unit afresh", key, bad, aside)
	}
	if r.State.Plan != nil {
		b, _, err := st.Get(ctx, PlanKey(uk, r.State.Plan.Digest))
		switch {
		case errors.Is(err, objstore.ErrNotFound):
			r.State.Plan = nil
		case err != nil:
			return nil, fmt.Errorf("reading the saved plan of %s from the bucket: %w", name, err)
		default:
			r.Plan = b
		}
	}
	return r, nil
}

// Warnings are the Warnings of fetched records, for runner.Options.
func Warnings(units []*stacks.Unit, fetched map[string]*Remote) map[*stacks.Unit][]string {
	out := map[*stacks.Unit][]string{}
	for _, u := range units {
		if r := fetched[UnitKey(u)]; r != nil && r.Warning != "" {
			out[u] = append(out[u], r.Warning)
		}
	}
	return out
}

// FetchUnits reads the records of units at once, keyed by unit key.
func FetchUnits(ctx context.Context, st *objstore.Store, refs []Ref) (map[string]*Remote, error) {
	out, err := FetchAll(ctx, refs, func(ctx context.Context, r Ref) (*Remote, error) {
		return FetchUnit(ctx, st, r.Key, r.ID)
	})
	if err != nil {
		return nil, err
	}
	m := make(map[string]*Remote, len(refs))
	for i, r := range refs {
		m[r.Key] = out[i]
	}
	return m, nil
}

// Pull writes units' records and saved plans, as fetched from the bucket,
// into the local state dir. A plan is the one the unit's record names,
// whatever the local disk holds. The records are written unsynced: the
// bucket holds them, and a lost copy is pulled again.
func (m *Mirror) Pull(units []*stacks.Unit, fetched map[string]*Remote) error {
	for _, u := range units {
		r := fetched[UnitKey(u)]
		if r == nil {
			return fmt.Errorf("the run state of %s was not read from the bucket", u.Name())
		}
		planFile, err := m.sd.PlanFile(u.Dir, u.Workspace, u.Stack.Name, u.Shared)
		if err != nil {
			return err
		}
		os.Remove(planFile)
		if r.Plan != nil {
			if err := os.MkdirAll(filepath.Dir(planFile), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(planFile, r.Plan, 0o600); err != nil {
				return fmt.Errorf("writing the saved plan of %s: %w", u.Name(), err)
			}
		}
		err = m.sd.UpdateUnitUnsynced(u, func(local *UnitState) {
			init := local.Init
			*local = *r.State
			local.Init = init
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.versions[u], m.before[u] = r.Version, r.State.Apply
		m.mu.Unlock()
	}
	return nil
}

// Push writes a unit's record back to the bucket, and its saved plan
// under its digest. When another writer changed the record since Pull,
// the two are merged, the later plan and the later apply winning, and
// swapped again. It returns the successful apply the unit made since
// Pull, if any.
func (m *Mirror) Push(ctx context.Context, u *stacks.Unit) (*ApplyRecord, error) {
	uk := UnitKey(u)
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
		if err := m.st.Create(ctx, PlanKey(uk, local.Plan.Digest), b); err != nil && !errors.Is(err, objstore.ErrExists) {
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
		err = m.st.Update(ctx, StateKey(uk), append(b, '\n'), ver)
		if err == nil {
			break
		}
		if !errors.Is(err, objstore.ErrChanged) || tries == 20 {
			return nil, fmt.Errorf("storing the run state of %s: %w", u.Name(), err)
		}
		// A record another writer left corrupt is replaced: this job's
		// record is the one it has.
		remote, v, _, _, err := GetUnitState(ctx, m.st, uk)
		if err != nil {
			return nil, err
		}
		ver = v
		rec = Merge(local, remote)
	}
	var applied *ApplyRecord
	if a := local.Apply; a != nil && (before == nil || a.At.After(before.At)) &&
		(a.Result == report.StatusApplied || a.Result == report.StatusDestroyed) {
		applied = a
	}
	return applied, nil
}

// Merge joins this job's record of a unit with one another writer stored
// meanwhile: the later apply, the later plan and the later deployed
// commit win, and a plan made before the winning apply is gone (an apply
// consumes its plan).
func Merge(local, remote *UnitState) *UnitState {
	out := &UnitState{Apply: remote.Apply, Plan: remote.Plan}
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

// Writer writes what units did back to the bucket as they end, off the
// scheduler's goroutine (a slow bucket must not hold up the next unit),
// at most fetchers at once; wait returns once every write is done, with
// what could not be written. A write goes on when the command is
// interrupted: what a unit did is never dropped.
type Writer struct {
	p *pool.ErrorPool
}

func NewWriter() *Writer {
	return &Writer{p: pool.New().WithErrors().WithMaxGoroutines(Fetchers)}
}

func (w *Writer) Go(f func() error) { w.p.Go(f) }
func (w *Writer) Wait() error       { return w.p.Wait() }

// Attached is a run on one machine kept in step with the state bucket:
// UnitDone writes each unit's record back as it ends, Warnings are what
// the fetched records say of units (for runner.Options), and Wait returns
// once everything is written back, with what could not be.
type Attached struct {
	UnitDone func(*stacks.Unit, *report.UnitReport)
	Warnings map[*stacks.Unit][]string
	Wait     func() error
}

// Attach keeps a run on one machine (`strata apply --state URL`) in step
// with the state bucket (docs/ci.md#run-state-in-the-bucket): the run
// state and saved plans of units are written from the bucket into the
// local state dir now, and each unit's are written back as it ends.
func Attach(ctx context.Context, st *objstore.Store, stateDir string, units []*stacks.Unit) (*Attached, error) {
	sd, err := OpenStateDir(stateDir)
	if err != nil {
		return nil, err
	}
	refs := make([]Ref, len(units))
	for i, u := range units {
		refs[i] = RefOf(u)
	}
	fetched, err := FetchUnits(ctx, st, refs)
	if err != nil {
		return nil, err
	}
	mir := NewMirror(st, sd)
	if err := mir.Pull(units, fetched); err != nil {
		return nil, err
	}
	w, wctx := NewWriter(), context.WithoutCancel(ctx)
	return &Attached{
		UnitDone: func(u *stacks.Unit, _ *report.UnitReport) {
			w.Go(func() error {
				_, err := mir.Push(wctx, u)
				return err
			})
		},
		Warnings: Warnings(units, fetched),
		Wait:     w.Wait,
	}, nil
}

// ReadBucket reads units' records from the bucket; a unit with none, or
// with a corrupt one, has an empty one.
func ReadBucket(ctx context.Context, st *objstore.Store, units []*stacks.Unit) (map[*stacks.Unit]*UnitState, error) {
	refs := make([]Ref, len(units))
	for i, u := range units {
		refs[i] = RefOf(u)
	}
	got, err := FetchAll(ctx, refs, func(ctx context.Context, r Ref) (*UnitState, error) {
		// A corrupt record reads as none: the unit is taken as never
		// applied, and the job that runs it moves the record aside.
		us, _, _, _, err := GetUnitState(ctx, st, r.Key)
		if err != nil {
			return nil, fmt.Errorf("reading the run state of %s from the bucket: %w", r.ID, err)
		}
		return us, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[*stacks.Unit]*UnitState, len(units))
	for i, us := range got {
		out[units[i]] = us
	}
	return out, nil
}
