package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/filelock"
)

// StateDir is the layout of strata's state directory (.strata/ at the root
// unless --state-dir names another). Everything in it uses repo-relative
// paths, so CI may save and restore it between jobs. Directories are 0700,
// files 0600.
type StateDir struct {
	Path string // absolute
	// mu keeps this process's goroutines off the journal's file lock one
	// at a time: a file lock contended inside one process waits a whole
	// poll interval.
	mu sync.Mutex
}

// OpenStateDir creates the state directory if needed, with a .gitignore of
// `*` so it is never committed (the user's own .gitignore is never edited).
func OpenStateDir(path string) (*StateDir, error) {
	for _, d := range []string{path, filepath.Join(path, "plans"), filepath.Join(path, "vars"), filepath.Join(path, "locks"), filepath.Join(path, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	gi := filepath.Join(path, ".gitignore")
	if _, err := os.Stat(gi); errors.Is(err, fs.ErrNotExist) {
		if err := writeFileAtomic(gi, []byte("*\n")); err != nil {
			return nil, err
		}
	}
	return &StateDir{Path: path}, nil
}

// unitFileName turns a unit into a file name: dir@workspace#stack with the
// dir's separators kept as directories.
func unitFileName(dir, workspace, stack string, shared bool) string {
	name := workspace
	if shared {
		name += "#" + stack
	}
	return filepath.Join(filepath.FromSlash(dir), name)
}

// PlanFile is where a unit's saved plan lives.
func (s *StateDir) PlanFile(dir, workspace, stack string, shared bool) string {
	return filepath.Join(s.Path, "plans", unitFileName(dir, workspace, stack, shared)+".tfplan")
}

// VarFile is where a unit's input variables file lives (§5.6).
func (s *StateDir) VarFile(dir, workspace, stack string, shared bool) string {
	return filepath.Join(s.Path, "vars", unitFileName(dir, workspace, stack, shared)+".tfvars.json")
}

// LockPath is a lock file of the state dir.
func (s *StateDir) LockPath(name string) string {
	return filepath.Join(s.Path, "locks", name+".lock")
}

// DirLockPath is the lock of one unit dir: engine steps in a dir never
// overlap, across strata processes too.
func (s *StateDir) DirLockPath(dir string) string {
	return s.LockPath("dir-" + strings.NewReplacer("/", "%", ".", "%2E").Replace(dir))
}

// TmpDir is a scratch dir for one unit's steps (STRATA_TMPDIR).
func (s *StateDir) TmpDir(dir, workspace, stack string, shared bool) string {
	return filepath.Join(s.Path, "tmp", unitFileName(dir, workspace, stack, shared))
}

// State is the run-state journal: per unit, the last successful init, the
// last plan and the last apply (§8.6).
type State struct {
	Version int                   `json:"version"`
	Units   map[string]*UnitState `json:"units"` // by unit ID dir@workspace#stack
}

// UnitState is what the journal records of one unit.
type UnitState struct {
	Init  *InitRecord  `json:"init,omitempty"`
	Plan  *PlanRecord  `json:"plan,omitempty"`
	Apply *ApplyRecord `json:"apply,omitempty"`
}

// InitRecord is the last successful init.
type InitRecord struct {
	Fingerprint string    `json:"fingerprint"`
	At          time.Time `json:"at"`
	// DataDir records whether init left a data dir: a module with nothing
	// to install gets none, and is still initialised.
	DataDir bool `json:"data_dir"`
}

// PlanRecord is the last plan.
type PlanRecord struct {
	Digest     string    `json:"digest"`
	File       string    `json:"file"` // relative to the state dir
	HasChanges bool      `json:"has_changes"`
	Changes    Changes   `json:"changes"`
	Destroy    bool      `json:"destroy,omitempty"`
	At         time.Time `json:"at"`
}

// ApplyRecord is the last apply.
type ApplyRecord struct {
	Digest  string    `json:"digest"`
	At      time.Time `json:"at"`
	Result  string    `json:"result"` // applied, destroyed, failed
	Destroy bool      `json:"destroy,omitempty"`
}

// Changes counts a plan's resource changes.
type Changes struct {
	Add     int `json:"add"`
	Change  int `json:"change"`
	Destroy int `json:"destroy"`
}

func (c Changes) String() string {
	return fmt.Sprintf("+%d ~%d -%d", c.Add, c.Change, c.Destroy)
}

const stateVersion = 1

func (s *StateDir) stateFile() string { return filepath.Join(s.Path, "state.json") }

// ReadState reads the journal; a missing journal is empty.
func (s *StateDir) ReadState() (*State, error) {
	st := &State{Version: stateVersion, Units: map[string]*UnitState{}}
	b, err := os.ReadFile(s.stateFile())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("run state %s: %w (delete it to start afresh)", s.stateFile(), err)
	}
	if st.Units == nil {
		st.Units = map[string]*UnitState{}
	}
	return st, nil
}

// UpdateUnit changes one unit's record under the journal's lock, so that
// strata processes working on other units do not lose each other's writes.
func (s *StateDir) UpdateUnit(ctx context.Context, id string, change func(*UnitState)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := filelock.Acquire(ctx, s.LockPath("state"), nil)
	if err != nil {
		return err
	}
	defer l.Release()
	st, err := s.ReadState()
	if err != nil {
		return err
	}
	us := st.Units[id]
	if us == nil {
		us = &UnitState{}
		st.Units[id] = us
	}
	change(us)
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.stateFile(), append(b, '\n'))
}

// writeFileAtomic writes a state file (0600), creating its directory
// (0700): a crash leaves the previous state readable.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}
