package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/stacks"
)

// What a unit has deployed (docs/behaviour.md#changed-units): the commit
// of its last successful apply, which --changed on a push build compares
// the unit with, so that a push whose CI run was skipped or cancelled is
// applied by the next one.

// DeployedRecord is the commit whose content a unit's last successful
// apply deployed: an apply, or a whole plan with nothing to change in a
// command that applies.
type DeployedRecord struct {
	Commit string    `json:"commit"`
	At     time.Time `json:"at"`
	// Dirty says that tracked files of the unit differed from Commit: what
	// was deployed is in no commit, and --changed treats the unit as
	// never applied until an apply from a clean checkout.
	Dirty bool `json:"dirty,omitempty"`
}

// DeployedCommit is the commit a unit's content was last deployed at, as
// --changed reads it; "" when the record is missing or dirty.
func (us *UnitState) DeployedCommit() string {
	if us == nil || us.Deployed == nil || us.Deployed.Dirty {
		return ""
	}
	return us.Deployed.Commit
}

// checkout is the commit a run works on, found once, the first time a
// unit records what it deployed: commands that apply nothing never ask
// git.
type checkout struct {
	once   sync.Once
	commit string
	dirty  map[*stacks.Unit]bool
}

// deployedNow is the record of a unit deployed now: nil outside a git
// repository (nothing to compare with later).
func (r *runState) deployedNow(ctx context.Context, u *stacks.Unit) *DeployedRecord {
	co := &r.checkout
	co.once.Do(func() {
		// An interrupt after an apply must not lose its record.
		repo, err := git.Open(context.WithoutCancel(ctx), r.p.Root)
		if err != nil {
			return
		}
		tree, err := repo.WorkingTree()
		if err != nil {
			return
		}
		// Tracked files only: an untracked file is most often what a run
		// itself leaves (a lock file init wrote); a lock file that init
		// rewrote likewise.
		var edited []stacks.FileChange
		for _, c := range tree {
			if c.Status != "?" && path.Base(c.Path) != ".terraform.lock.hcl" {
				edited = append(edited, c)
			}
		}
		if len(edited) > 0 {
			// A clean checkout, CI's, needs no index of the project.
			modified, _ := r.p.ModifiedUnits(edited)
			co.dirty = make(map[*stacks.Unit]bool, len(modified))
			for u := range modified {
				co.dirty[u] = true
			}
		}
		co.commit = repo.Head()
	})
	if co.commit == "" {
		return nil
	}
	return &DeployedRecord{Commit: co.commit, At: r.opt.Now().UTC(), Dirty: co.dirty[u]}
}

// wholePlan reports whether a plan covers the whole unit: a targeted,
// refresh-only or destroy plan deploys only part of its content.
func wholePlan(a PlanArgs) bool {
	return len(a.Targets) == 0 && !a.RefreshOnly && !a.Destroy
}

// UnitStates reads the records of units from the state dir at path; a
// state dir that does not exist records nothing.
func UnitStates(path string, units []*stacks.Unit, warn func(string)) (map[*stacks.Unit]*UnitState, error) {
	out := make(map[*stacks.Unit]*UnitState, len(units))
	if _, err := os.Stat(filepath.Join(path, "state")); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	sd := &StateDir{Path: path, Warn: warn}
	for _, u := range units {
		us, err := sd.ReadUnit(u)
		if err != nil {
			return nil, err
		}
		out[u] = us
	}
	return out, nil
}

// DeployedCommits are the commits of units' records (DeployedCommit),
// leaving out units with none.
func DeployedCommits(states map[*stacks.Unit]*UnitState) map[*stacks.Unit]string {
	out := map[*stacks.Unit]string{}
	for u, us := range states {
		if c := us.DeployedCommit(); c != "" {
			out[u] = c
		}
	}
	return out
}

// StillDeployed reports whether the record says an apply deployed the
// unit and no destroy came after: its state may hold resources.
func (us *UnitState) StillDeployed() bool {
	if us == nil || us.Deployed == nil {
		return false
	}
	a := us.Apply
	return a == nil || !a.Destroy || a.Result != StatusDestroyed || a.At.Before(us.Deployed.At)
}
