// Package history keeps what happened over time (docs/behaviour.md#history):
// one record per plan, apply, destroy and drift run (and per CI run, at
// ci finish), with each unit's status, reason, changes and step times,
// in the state dir or a state bucket, the last N kept; and beside them a
// small index of each unit's last recorded status and drift, which
// selection by status reads instead of the records.
//
// A record or an index read back is untrusted: each has a size budget, a
// malformed record is skipped with a warning naming it, and names become
// paths or keys only once checked. It renders nothing and decides nothing
// of a run: what a run means comes from package command, what it did from
// its report.
package history

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/report"
)

// DefaultKeep is how many runs the history keeps when the config does not
// say (history.keep).
const DefaultKeep = 100

// Budgets of what is read back: a record of a run of 10,000 units is a
// few MiB.
const (
	MaxRecord = 64 << 20
	MaxIndex  = 64 << 20
	// reasonLimit is the most of a unit's reason a record keeps.
	reasonLimit = 1 << 10
)

// The history statuses of a unit beyond the report's: a drift check that
// found changes, or none.
const (
	StatusDrifted report.Status = "drifted"
	StatusInSync  report.Status = "in_sync"
)

// Record is one run as the history keeps it.
type Record struct {
	Version int `json:"version"`
	Header
	Units []Unit `json:"units"`
}

// Header is what a record and the index's summary of it both say of a
// run.
type Header struct {
	// ID names the record: its start time and the run's ID, so names
	// sort by when runs started.
	ID string `json:"id"`
	// Run is the CI run's ID, for a run of CI jobs recorded at ci finish.
	Run        string    `json:"run,omitempty"`
	Command    string    `json:"command"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Commit     string    `json:"commit,omitempty"`
	Actor      string    `json:"actor,omitempty"`
	ExitCode   int       `json:"exit_code"`
	// Destroy: the run destroyed (destroy, or apply -destroy), so its
	// units are not applied by it whatever their status.
	Destroy bool `json:"destroy,omitempty"`
}

// Unit is one unit in a run.
type Unit struct {
	ID        string        `json:"id"`
	Dir       string        `json:"dir"`
	Workspace string        `json:"workspace"`
	Stack     string        `json:"stack"`
	Status    report.Status `json:"status"`
	// Drift is drifted or in_sync in a run that checks drift, when the
	// unit's plan ran.
	Drift  report.Status   `json:"drift,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Change *report.Changes `json:"changes,omitempty"`
	Steps  []Step          `json:"steps,omitempty"`
}

// Step is one step of a unit: its name, when it started after the run
// did, and how long it took, in milliseconds.
type Step struct {
	Name    string `json:"name"`
	StartMS int64  `json:"start_ms"`
	MS      int64  `json:"ms"`
	OK      bool   `json:"ok"`
}

// Meta is what a report does not say of a run: the commit, who ran it,
// and the CI run's ID when its jobs are recorded as one.
type Meta struct {
	Commit, Actor, Run string
	// Destroy: the run destroyed (job.Settings.Destroying).
	Destroy bool
}

// stampLayout is a record name's time: UTC, fixed width, so names sort by
// time.
const stampLayout = "20060102T150405.000000000Z"

// recordName is the pattern of a record's name (without ".json"): its
// stamp, a dash and at most maxRecordSuffix characters, whose bound
// ValidName checks apart (a counted repeat compiles into as many copies
// at every start).
var recordName = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[A-Za-z0-9_.=-]+$`)

const maxRecordSuffix = 120

// ValidName reports whether name can be a record's ID.
func ValidName(name string) bool {
	return len(name) <= len(stampLayout)+1+maxRecordSuffix && recordName.MatchString(name)
}

// FromReport is the record of a run from its report. A report of a
// command the history does not keep is nil.
func FromReport(rep *report.Report, meta Meta) *Record {
	pol, ok := cmdpolicy.Of(rep.Command)
	if !ok || !pol.Recorded {
		return nil
	}
	run := meta.Run
	if run == "" {
		var b [6]byte
		rand.Read(b[:])
		run = hex.EncodeToString(b[:])
	}
	rec := &Record{Version: 1, Header: Header{ID: rep.StartedAt.UTC().Format(stampLayout) + "-" + escape(run), Run: meta.Run, Command: rep.Command,
		StartedAt: rep.StartedAt.UTC(), FinishedAt: rep.FinishedAt.UTC(), Commit: meta.Commit, Actor: meta.Actor, ExitCode: rep.ExitCode, Destroy: meta.Destroy},
		Units: make([]Unit, 0, len(rep.Units))}
	for _, u := range rep.Units {
		hu := Unit{ID: u.ID(), Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack, Status: u.Status,
			Reason: textbudget.Cut(u.Note(), reasonLimit)}
		if c, ok := u.PlanChanges(); ok {
			hu.Change = &c
		}
		if pol.ChecksDrift {
			switch u.Status {
			case report.StatusPlanned:
				hu.Drift = StatusDrifted
			case report.StatusNoChanges:
				hu.Drift = StatusInSync
			}
		}
		for _, s := range u.Steps {
			hu.Steps = append(hu.Steps, Step{Name: s.Name, StartMS: s.StartedAt.Sub(rec.StartedAt).Milliseconds(),
				MS: max(s.FinishedAt.Sub(s.StartedAt).Milliseconds(), 0), OK: s.OK})
		}
		rec.Units = append(rec.Units, hu)
	}
	sort.Slice(rec.Units, func(i, j int) bool { return rec.Units[i].ID < rec.Units[j].ID })
	return rec
}

// escape keeps a run ID to the characters a record's name may hold.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 100; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	if b.Len() == 0 {
		return "="
	}
	return b.String()
}

// check says what is wrong with a record read back under the name, if
// anything.
func (r *Record) check(name string) error {
	switch {
	case r.Version != 1:
		return fmt.Errorf("version %d; expected 1", r.Version)
	case r.ID != name:
		return fmt.Errorf("its id %q is not its name", textbudget.Cut(r.ID, 200))
	case r.StartedAt.IsZero() || r.FinishedAt.IsZero():
		return fmt.Errorf("no start or finish time")
	case r.Command == "":
		return fmt.Errorf("no command")
	}
	for i, u := range r.Units {
		if u.ID == "" || u.Status == "" {
			return fmt.Errorf("unit %d has no id or status", i)
		}
	}
	return nil
}

// Took is how long the unit's steps ran, added up: the time it waited
// between them (at a prompt, for its gates) left out.
func (u *Unit) Took() time.Duration {
	var ms int64
	for _, s := range u.Steps {
		ms += s.MS
	}
	return time.Duration(ms) * time.Millisecond
}

// Counts are how many units of the run ended each history status, a drift
// check's as drifted and in_sync.
func (r *Record) Counts() map[report.Status]int {
	out := map[report.Status]int{}
	for _, u := range r.Units {
		out[u.HistoryStatus()]++
	}
	return out
}

// HistoryStatus is the unit's status as the history says it: a drift
// check's drifted or in_sync, else the report's.
func (u *Unit) HistoryStatus() report.Status {
	if u.Drift != "" {
		return u.Drift
	}
	return u.Status
}
