package runstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/report"
)

// lastRunFolder is the state dir's folder that keeps, a file per unit,
// the last run each unit took part in (docs/behaviour.md#run-state): a
// run writes its own units' files and reads no other, so a large
// repository's runs stay linear in their own size.
const lastRunFolder = "last"

// LastLogLimit is how much of a unit's engine output the record keeps:
// a longer one keeps its start and says it was cut.
const LastLogLimit = 64 << 10

// LastRun is each unit's last plan, apply, destroy or drift, by unit ID:
// what `graph --format html` shows (docs/behaviour.md#run-state).
type LastRun struct {
	Units map[string]*LastUnit
}

// LastUnit is one unit in the last run it took part in: the command, when
// that run started and ended, the unit's report (status, reason, changes,
// steps) and its engine output, masked as the summary's is.
type LastUnit struct {
	Command    string             `json:"command"`
	StartedAt  time.Time          `json:"started_at"`
	FinishedAt time.Time          `json:"finished_at"`
	Unit       *report.UnitReport `json:"unit"`
	Log        string             `json:"log,omitempty"`
	// LogCut says Log is the start of a longer output.
	LogCut bool `json:"log_cut,omitempty"`
}

// LastRunDir is where the state dir at dir keeps the last runs.
func LastRunDir(dir string) string { return filepath.Join(dir, lastRunFolder) }

// ReadLastRun reads the last runs kept in the state dir at dir; none
// recorded (or no state dir) is an empty record.
func ReadLastRun(dir string) (*LastRun, error) {
	lr := &LastRun{Units: map[string]*LastUnit{}}
	err := filepath.WalkDir(LastRunDir(dir), func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == LastRunDir(dir) {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var u LastUnit
		if err := json.Unmarshal(b, &u); err != nil || u.Unit == nil {
			return fmt.Errorf("%s holds no unit's last run: %v", path, err)
		}
		lr.Units[u.Unit.ID()] = &u
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the last run: %w", err)
	}
	return lr, nil
}

// lastRunWriters is how many units' last runs RecordLastRun writes at
// once: a file a unit, written after the run, while the command waits.
const lastRunWriters = 4

// RecordLastRun keeps rep's units as their last run, each in its own
// file, in place of what an earlier run left of it; other units keep
// theirs. The files are written lastRunWriters at a time (each is a new
// file that takes the old one's place, most of whose cost is the file
// system's: docs/architecture.md#what-a-command-costs); a failure is the
// first unit's in the report's order.
func (s *StateDir) RecordLastRun(rep *report.Report) error {
	errs := make([]error, len(rep.Units))
	p := pool.New().WithMaxGoroutines(lastRunWriters)
	for i, u := range rep.Units {
		p.Go(func() { errs[i] = s.recordLastRunOf(rep, u) })
	}
	p.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// recordLastRunOf writes unit u's last run, the run rep.
func (s *StateDir) recordLastRunOf(rep *report.Report, u *report.UnitReport) error {
	log, cut := u.Log, false
	if len(log) > LastLogLimit {
		log, cut = strings.ToValidUTF8(log[:LastLogLimit], ""), true
	}
	b, err := json.Marshal(&LastUnit{Command: rep.Command, StartedAt: rep.StartedAt, FinishedAt: rep.FinishedAt, Unit: u, Log: log, LogCut: cut})
	if err != nil {
		return err
	}
	path, err := s.under(lastRunFolder, unitFileName(u.Dir, u.Workspace, u.Stack, u.Shared), ".json")
	if err == nil {
		err = WriteFile(path, b, false)
	}
	if err != nil {
		return fmt.Errorf("recording the last run of %s: %w", u.ID(), err)
	}
	return nil
}
