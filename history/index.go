package history

import (
	"sort"
	"time"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/report"
)

// Index is what a listing of runs and a selection by status read, kept
// beside the records and changed with each one (docs/behaviour.md#history):
// the runs kept, newest first, and each unit's last recorded status and
// drift. It holds nothing a record does not: when it is lost or corrupt it
// is built again from them.
type Index struct {
	Version int                    `json:"version"`
	Runs    []RunSummary           `json:"runs"`
	Units   map[string]*UnitStatus `json:"units"`
}

// RunSummary is one run as `strata history` lists it.
type RunSummary struct {
	Header
	Units  int                   `json:"units"`
	Counts map[report.Status]int `json:"counts"`
}

// UnitStatus is a unit's last recorded status.
type UnitStatus struct {
	// Dir is the unit's dir, by which history UNIT finds a unit no
	// longer in the config.
	Dir string `json:"dir"`
	// Status is the unit's history status in the last run that got to it
	// (a unit skipped, cancelled, blocked, deferred, denied or missing
	// keeps the one it had); At is when that run finished, Run its ID.
	Status  report.Status `json:"status"`
	Command string        `json:"command"`
	At      time.Time     `json:"at"`
	Run     string        `json:"run"`
	// Drift is drifted from the drift check that found changes until a
	// run applies the unit or finds it without changes (in_sync then);
	// "" when no drift check looked at it. DriftedSince is when the first
	// check of an unbroken series found it drifted, Changes what the
	// latest counted.
	Drift        report.Status   `json:"drift,omitempty"`
	DriftedSince *time.Time      `json:"drifted_since,omitempty"`
	DriftChanges *report.Changes `json:"drift_changes,omitempty"`
	// AppliedAt is when a run last applied the unit, with changes or none.
	AppliedAt *time.Time `json:"applied_at,omitempty"`
}

// newIndex is an empty index.
func newIndex() *Index { return &Index{Version: 1, Units: map[string]*UnitStatus{}} }

// Summary is the run as the index lists it.
func (r *Record) Summary() RunSummary {
	return RunSummary{Header: r.Header, Units: len(r.Units), Counts: r.Counts()}
}

// settles says a status tells what the unit is now: a unit that did not
// get to run in a run keeps the status it had.
func settles(s report.Status) bool {
	switch s {
	case report.StatusPlanned, report.StatusNoChanges, report.StatusApplied, report.StatusDestroyed, report.StatusFailed, report.StatusSucceeded:
		return true
	}
	return false
}

// add takes a run into the index: its summary, kept among the newest
// keep, and its units' statuses, each unless the index holds a later
// one (two runs may finish in either order).
func (ix *Index) add(r *Record, keep int) {
	runs := []RunSummary{r.Summary()}
	for _, s := range ix.Runs {
		if s.ID != r.ID {
			runs = append(runs, s)
		}
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].ID > runs[j].ID })
	if len(runs) > keep {
		runs = runs[:keep]
	}
	ix.Runs = runs
	pol, _ := cmdpolicy.Of(r.Command)
	for i := range r.Units {
		u := &r.Units[i]
		if !settles(u.Status) {
			continue
		}
		us := ix.Units[u.ID]
		if us == nil {
			us = &UnitStatus{}
			ix.Units[u.ID] = us
		}
		at := r.FinishedAt
		if pol.Applies && !pol.Destroys && !r.Destroy && (u.Status == report.StatusApplied || u.Status == report.StatusNoChanges) &&
			(us.AppliedAt == nil || us.AppliedAt.Before(at)) {
			us.AppliedAt = &at
		}
		if r.FinishedAt.Before(us.At) {
			continue
		}
		us.Dir, us.Status, us.Command, us.At, us.Run = u.Dir, u.HistoryStatus(), r.Command, r.FinishedAt, r.ID
		switch {
		case u.Drift == StatusDrifted:
			if us.Drift != StatusDrifted || us.DriftedSince == nil {
				us.DriftedSince = &at
			}
			us.Drift, us.DriftChanges = StatusDrifted, u.Change
		case u.Drift == StatusInSync,
			us.Drift != "" && (u.Status == report.StatusApplied || u.Status == report.StatusNoChanges || u.Status == report.StatusDestroyed):
			us.Drift, us.DriftedSince, us.DriftChanges = StatusInSync, nil, nil
		}
	}
}

// build is the index of records, whatever order they come in.
func build(recs []*Record, keep int) *Index {
	sorted := append([]*Record(nil), recs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].FinishedAt.Before(sorted[j].FinishedAt) })
	ix := newIndex()
	for _, r := range sorted {
		ix.add(r, keep)
	}
	return ix
}
