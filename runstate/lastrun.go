package runstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/report"
)

// lastRunFile is the file of the state dir that keeps the last run each
// unit took part in (docs/behaviour.md#run-state).
const lastRunFile = "last-run.json"

// LastLogLimit is how much of a unit's engine output the record keeps:
// a longer one keeps its start and says it was cut.
const LastLogLimit = 64 << 10

// LastRun is each unit's last plan, apply, destroy or drift, by unit ID:
// what `graph --format html` shows (docs/behaviour.md#run-state).
type LastRun struct {
	Version int                  `json:"version"`
	Units   map[string]*LastUnit `json:"units"`
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

// LastRunPath is where the state dir at dir keeps the last runs.
func LastRunPath(dir string) string { return filepath.Join(dir, lastRunFile) }

// ReadLastRun reads the last runs kept in the state dir at dir; none
// recorded (or no state dir) is an empty record.
func ReadLastRun(dir string) (*LastRun, error) {
	lr := &LastRun{Version: 1, Units: map[string]*LastUnit{}}
	b, err := os.ReadFile(LastRunPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return lr, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the last run: %w", err)
	}
	if err := json.Unmarshal(b, lr); err != nil {
		return nil, fmt.Errorf("reading the last run (%s): %w", LastRunPath(dir), err)
	}
	if lr.Units == nil {
		lr.Units = map[string]*LastUnit{}
	}
	return lr, nil
}

// RecordLastRun keeps rep's units as their last run, in place of what an
// earlier run left of them; other units keep theirs. A record that cannot
// be read is started afresh: it only feeds a picture.
func (s *StateDir) RecordLastRun(ctx context.Context, rep *report.Report) error {
	// Runs in other dirs record theirs at the same time: each reads and
	// writes the file under its lock, so none loses another's units.
	lock, err := filelock.Acquire(ctx, s.LockPath("last-run"), nil)
	if err != nil {
		return fmt.Errorf("recording the last run: %w", err)
	}
	defer lock.Release()
	lr, err := ReadLastRun(s.Path)
	if err != nil {
		s.warn(err.Error() + "; starting it afresh")
		lr = &LastRun{Version: 1, Units: map[string]*LastUnit{}}
	}
	for _, u := range rep.Units {
		log, cut := u.Log, false
		if len(log) > LastLogLimit {
			log, cut = strings.ToValidUTF8(log[:LastLogLimit], ""), true
		}
		lr.Units[u.ID()] = &LastUnit{Command: rep.Command, StartedAt: rep.StartedAt, FinishedAt: rep.FinishedAt, Unit: u, Log: log, LogCut: cut}
	}
	b, err := json.MarshalIndent(lr, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFile(LastRunPath(s.Path), append(b, '\n'), false); err != nil {
		return fmt.Errorf("recording the last run: %w", err)
	}
	return nil
}
