package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// Result is what a job records of one unit of a run, once: the first job
// to record a unit wins, and a retried job finds the record and moves on.
type Result struct {
	Unit *report.UnitReport `json:"unit"`
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
	return report.Span(r.Unit.Steps)
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
	if m.Version < oldestManifest || m.Version > ManifestVersion {
		return fmt.Errorf("run %s: manifest version %d; this strata reads versions %d to %d", run, m.Version, oldestManifest, ManifestVersion)
	}
	// The manifest comes from the bucket: a command this strata does not
	// run is refused, never looked up as if it were known.
	if _, ok := command.Of(m.Command); !ok {
		return fmt.Errorf("run %s: the manifest's command %q is not one this strata runs; expected one of: %s", run, m.Command, strings.Join(command.Names(), ", "))
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
	stackAt := m.stackIndex()
	p := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(runstate.Fetchers)
	for _, w := range m.Waves {
		wm := *m
		// The waves stay, so a job can tell a wave or shard the run
		// does not have (Manifest.hasSlice).
		wm.Units = byWave[w.Wave]
		wm.Keys = maps.Clone(m.Keys)
		wm.Stacks = waveStacks(wm.Units, stackAt)
		// Each unit waited for once: a stack's units are added once per
		// wave, not once per unit waiting for them.
		for _, id := range predecessors(wm.Units, stackAt) {
			if wm.Keys == nil {
				wm.Keys = map[string]string{}
			}
			wm.Keys[id] = keys[id]
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
	if got := runstate.KeyOf(res.Unit.Dir, res.Unit.Workspace, res.Unit.Stack); got != key {
		return nil, fmt.Sprintf("its result object %s holds the result of %s", resultKey(run, key), res.Unit.Name()), nil
	}
	return res, "", nil
}

// loadResults reads the results of units, fetched at once; a unit with
// none recorded is absent from the map, and one whose result was refused
// is in refused, with why.
func loadResults(ctx context.Context, st *objstore.Store, run string, refs []runstate.Ref) (results map[string]*Result, refused map[string]string, err error) {
	type loaded struct {
		res     *Result
		refused string
	}
	out, err := runstate.FetchAll(ctx, refs, func(ctx context.Context, r runstate.Ref) (loaded, error) {
		res, why, err := loadResult(ctx, st, run, r.Key)
		return loaded{res, why}, err
	})
	if err != nil {
		return nil, nil, err
	}
	results, refused = make(map[string]*Result, len(refs)), map[string]string{}
	for i, r := range refs {
		switch {
		case out[i].refused != "":
			refused[r.ID] = out[i].refused
		case out[i].res != nil:
			results[r.ID] = out[i].res
		}
	}
	return results, refused, nil
}

// waveStacks are the stacks a wave's part of the manifest needs: those
// its units are in and those they wait for, in the manifest's order.
func waveStacks(units []ManifestUnit, stackAt map[string]*ManifestStack) []ManifestStack {
	need := map[string]bool{}
	for _, u := range units {
		if ms := stackAt[u.Stack]; ms != nil && !need[u.Stack] {
			need[u.Stack] = true
			for _, name := range ms.After {
				need[name] = true
			}
		}
	}
	var out []ManifestStack
	for name := range need {
		if ms := stackAt[name]; ms != nil {
			out = append(out, *ms)
		}
	}
	slices.SortFunc(out, func(a, b ManifestStack) int { return strings.Compare(a.Name, b.Name) })
	return out
}
