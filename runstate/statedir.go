package runstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/internal/tfstate"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// StateDir is the layout of strata's state directory (.strata/ at the root
// unless --state-dir names another). Everything in it uses repo-relative
// paths, so CI may save and restore it between jobs. Directories are 0700,
// files 0600.
type StateDir struct {
	Path string // absolute
	// Warn receives what the user must hear about the state dir itself,
	// such as a corrupt journal moved aside.
	Warn func(string)
	// Scratch says the dir is a copy of state kept elsewhere (a CI job's
	// copy of the bucket's): records are written atomically but not synced
	// to disk, as a job a crash stops is run again from the bucket.
	Scratch bool
	// stateFiles caches each unit's journal path, checked once: a unit's
	// record is read and written several times a run.
	stateFiles sync.Map // *stacks.Unit → string
	// folders holds the folders unit paths are built in, each resolved
	// once (safepath.Base).
	folders sync.Map // string → *safepath.Base
}

// folder is one of the state dir's folders, as a safepath.Base.
func (s *StateDir) folder(name string) (*safepath.Base, error) {
	if b, ok := s.folders.Load(name); ok {
		return b.(*safepath.Base), nil
	}
	b, err := safepath.NewBase(filepath.Join(s.Path, name))
	if err != nil {
		return nil, err
	}
	got, _ := s.folders.LoadOrStore(name, b)
	return got.(*safepath.Base), nil
}

// DefaultPath is the state dir of the repository at root when nothing
// names one: .strata at the root.
func DefaultPath(root string) string { return filepath.Join(root, ".strata") }

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

// unitFileName turns a unit into path elements under one of the state
// dir's folders: dir@workspace#stack with the dir's separators kept as
// directories.
func unitFileName(dir, workspace, stack string, shared bool) []string {
	name := workspace
	if shared {
		name += "#" + stack
	}
	return []string{dir, name}
}

// under builds a path in one of the state dir's folders from a unit's
// names, refusing one that would leave that folder: the names come from
// the repository's config.
func (s *StateDir) under(folder string, elems []string, suffix string) (string, error) {
	elems = append([]string(nil), elems...)
	elems[len(elems)-1] += suffix
	b, err := s.folder(folder)
	if err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	p, err := b.Join(elems...)
	if err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	return p, nil
}

// PlanFile is where a unit's saved plan lives.
func (s *StateDir) PlanFile(dir, workspace, stack string, shared bool) (string, error) {
	return s.under("plans", unitFileName(dir, workspace, stack, shared), ".tfplan")
}

// VarFile is where a unit's input variables file lives (docs/behaviour.md#input-variables).
func (s *StateDir) VarFile(dir, workspace, stack string, shared bool) (string, error) {
	return s.under("vars", unitFileName(dir, workspace, stack, shared), ".tfvars.json")
}

// LockPath is a lock file of the state dir.
func (s *StateDir) LockPath(name string) string {
	return filepath.Join(s.Path, "locks", name+".lock")
}

// DirLockPath is the lock of one unit dir: engine steps in a dir never
// overlap, across strata processes too. The dir becomes one file name,
// its separators escaped, so it cannot leave the locks folder.
func (s *StateDir) DirLockPath(dir string) string {
	return s.LockPath("dir-" + strings.NewReplacer("%", "%25", "/", "%2F", "\\", "%5C", ".", "%2E").Replace(dir))
}

// TmpDir is a scratch dir for one unit's steps (STRATA_TMPDIR).
func (s *StateDir) TmpDir(dir, workspace, stack string, shared bool) (string, error) {
	return s.under("tmp", unitFileName(dir, workspace, stack, shared), "")
}

// UnitState is what the run-state journal records of one unit (docs/behaviour.md#run-state): its
// last successful init, its last plan and its last apply. Each unit has a
// file of its own under state/, so recording one unit never rewrites the
// others, and a large run stays linear.
type UnitState struct {
	Init  *InitRecord  `json:"init,omitempty"`
	Plan  *PlanRecord  `json:"plan,omitempty"`
	Apply *ApplyRecord `json:"apply,omitempty"`
	// Deployed is the commit of the last successful apply.
	Deployed *DeployedRecord `json:"deployed,omitempty"`
	// Outputs are the unit's outputs as they were last read, with the
	// version of the state they were read from
	// (docs/behaviour.md#outputs-without-init).
	Outputs *OutputsRecord `json:"outputs,omitempty"`
	// Took is how long the unit's last jobs took, for the scheduler
	// (docs/architecture.md#ready-queue).
	Took *TookRecord `json:"took,omitempty"`
}

// TookRecord is how long a unit's last successful plan job (init, plan and
// what its workflow runs) and apply job took, in milliseconds.
type TookRecord struct {
	PlanMS  int64 `json:"plan_ms,omitempty"`
	ApplyMS int64 `json:"apply_ms,omitempty"`
}

// OutputsRecord is a unit's outputs as the engine read them from a state
// at a version: a later read finds the state at the same version and
// takes them from here, without init or the engine.
type OutputsRecord struct {
	State     tfstate.Version              `json:"state"`
	Workspace string                       `json:"workspace"`
	Outputs   map[string]tfexec.OutputMeta `json:"outputs"`
	At        time.Time                    `json:"at"`
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
	Digest     string         `json:"digest"`
	File       string         `json:"file"` // relative to the state dir
	HasChanges bool           `json:"has_changes"`
	Changes    report.Changes `json:"changes"`
	Destroy    bool           `json:"destroy,omitempty"`
	// Partial says the plan covers part of the unit (targeted or
	// refresh-only): applying it deploys no commit.
	Partial bool      `json:"partial,omitempty"`
	At      time.Time `json:"at"`
	// ChangedOutputs names the root module outputs the plan changes, and
	// OutputsKnown says the plan was read for them (a record written
	// before strata read plans as JSON does not say).
	ChangedOutputs []string `json:"changed_outputs,omitempty"`
	OutputsKnown   bool     `json:"outputs_known,omitempty"`
	// Command is the command that made the plan (plan, apply, drift,
	// destroy): only a plan made by plan counts as reviewed
	// (docs/behaviour.md#saved-plans).
	Command string `json:"command,omitempty"`
	// Review names where the plan was made for review, when known: the
	// pull request of the CI run that made it ("PR #5").
	Review string `json:"review,omitempty"`
	// ChangeSet is a digest of what the plan changes, "" when it changes
	// nothing: two plans with the same one make the same changes. One
	// read from the plan file starts "f1:"; one read from show -json (as
	// strata recorded before it read plan files) has no prefix, and a plan
	// compared with it is read the same way
	// (docs/behaviour.md#saved-plans).
	ChangeSet string `json:"change_set,omitempty"`
	// NoSecrets says the plan was read and marks nothing sensitive:
	// showing the plan again needs nothing masked beyond the unit's
	// sensitive inputs, so it is not read again (docs/behaviour.md#what-is-masked).
	NoSecrets bool `json:"no_secrets,omitempty"`
	// Gates are the gates the plan raised: its apply waits for their
	// approval (docs/controls.md#gates).
	Gates []report.Gate `json:"gates,omitempty"`
}

// ApplyRecord is the last apply.
type ApplyRecord struct {
	Digest  string        `json:"digest"`
	At      time.Time     `json:"at"`
	Result  report.Status `json:"result"` // applied, destroyed, failed
	Destroy bool          `json:"destroy,omitempty"`
	// ChangedOutputs names the root module outputs the apply changed, and
	// OutputsKnown says its plan was read for them: a CI job of a later
	// wave reads them to decide whether a reader joins the run
	// (docs/ci.md#readers).
	ChangedOutputs []string `json:"changed_outputs,omitempty"`
	OutputsKnown   bool     `json:"outputs_known,omitempty"`
}

// unitStateFile is a unit's journal file: state/<dir>/<workspace>#<stack>.json.
func (s *StateDir) unitStateFile(u *stacks.Unit) (string, error) {
	if p, ok := s.stateFiles.Load(u); ok {
		return p.(string), nil
	}
	p, err := s.under("state", []string{u.Dir, u.Workspace + "#" + u.Stack.Name}, ".json")
	if err == nil {
		s.stateFiles.Store(u, p)
	}
	return p, err
}

// ReadUnit reads a unit's record; a unit never recorded has an empty one.
// A journal file that cannot be read as one (truncated, empty, garbage) is
// moved aside, with a warning naming both files, and the unit has no
// history: strata then plans and inits again rather than trust it.
func (s *StateDir) ReadUnit(u *stacks.Unit) (*UnitState, error) {
	us, _, _, err := s.readUnit(u)
	return us, err
}

// readUnit is ReadUnit, with the record's path and the bytes read (nil
// when there is no record, or it was moved aside).
func (s *StateDir) readUnit(u *stacks.Unit) (us *UnitState, path string, raw []byte, err error) {
	us = &UnitState{}
	if path, err = s.unitStateFile(u); err != nil {
		return nil, "", nil, err
	}
	raw, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return us, path, nil, nil
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading the run state of %s: %w", u.Name(), err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(us); err != nil || dec.More() {
		if err == nil {
			err = errors.New("data after the record")
		}
		aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000")
		if rerr := os.Rename(path, aside); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, "", nil, fmt.Errorf("the run state of %s (%s) is corrupt (%v) and could not be moved aside: %w", u.Name(), path, err, rerr)
		}
		s.warn(fmt.Sprintf("the run state of %s (%s) was corrupt (%v); moved it to %s and treating the unit as having no history", u.Name(), path, err, aside))
		return &UnitState{}, path, nil, nil
	}
	return us, path, raw, nil
}

func (s *StateDir) warn(msg string) {
	if s.Warn != nil {
		s.Warn(msg)
	}
}

// UpdateUnit changes a unit's record. Engine steps of a unit hold its dir
// lock, across processes, so one writer changes a unit at a time; the
// write is atomic. A change that leaves the record as it was writes
// nothing (clearing a plan that was never recorded, say): each write is a
// new file synced to disk (unless the dir is Scratch).
func (s *StateDir) UpdateUnit(u *stacks.Unit, change func(*UnitState)) error {
	return s.updateUnit(u, change, !s.Scratch)
}

// UpdateUnitUnsynced is UpdateUnit without the sync, for a change that
// records what the engine has just written to disk without syncing it
// either: a new plan (the plan file) or an init (the .terraform dir). Such
// a record is worth no more than the files it describes. After a crash the
// record is the old one or the new one; a plan is applied only when its
// digest matches the content and an init is redone when its fingerprint
// does not match, so the worst a lost record costs is a plan or an init
// made again. A record that decides what must not happen twice (clearing
// the plan an apply consumes, the apply itself) is synced.
func (s *StateDir) UpdateUnitUnsynced(u *stacks.Unit, change func(*UnitState)) error {
	return s.updateUnit(u, change, false)
}

func (s *StateDir) updateUnit(u *stacks.Unit, change func(*UnitState), sync bool) error {
	us, path, raw, err := s.readUnit(u)
	if err != nil {
		return err
	}
	change(us)
	if raw == nil && *us == (UnitState{}) {
		return nil
	}
	b, err := json.MarshalIndent(us, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if bytes.Equal(b, raw) {
		return nil
	}
	if err := WriteFile(path, b, sync); err != nil {
		return fmt.Errorf("recording the run state of %s: %w", u.Name(), err)
	}
	return nil
}

// writeFileAtomic writes a state file (0600), creating its directory
// (0700): a crash leaves the previous state readable.
func writeFileAtomic(path string, data []byte) error {
	return WriteFile(path, data, true)
}

// WriteFile writes a state file atomically, synced to disk or not
// (for files made again after a crash).
func WriteFile(path string, data []byte, sync bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if !sync {
		return atomicfile.WriteUnsynced(path, data, 0o600)
	}
	return atomicfile.Write(path, data, 0o600)
}

// ReviewedBy says where a reviewed plan was made.
func (p *PlanRecord) ReviewedBy() string {
	if p.Review != "" {
		return p.Review
	}
	return "the plan run at " + p.At.UTC().Format(time.RFC3339)
}

// Reviewable reports whether a saved plan is one a review saw: made by
// `plan`, not for a destroy. A plan an apply made and left (not approved,
// or stale and planned again) is not one, as under -auto-approve nobody
// saw it, and a record written before plans said who made them does not
// say.
func (p *PlanRecord) Reviewable() bool {
	if p == nil {
		return false
	}
	pol, _ := command.Of(p.Command)
	return pol.ReviewsPlans && !p.Destroy
}

// KnowsOutputs reports whether the record names every output the plan
// changes: the plan was read for them, or it changes nothing.
func (p *PlanRecord) KnowsOutputs() bool { return p.OutputsKnown || !p.HasChanges }

// Applied is the record of an apply of this plan that ended with result.
func (p *PlanRecord) Applied(result report.Status) ApplyRecord {
	return ApplyRecord{Digest: p.Digest, Result: result, ChangedOutputs: p.ChangedOutputs, OutputsKnown: p.KnowsOutputs()}
}
