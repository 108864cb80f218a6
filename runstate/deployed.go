package runstate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-iac/strata/report"
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

// ReadLocal reads the records of units from the state dir at path; a
// state dir that does not exist records nothing.
func ReadLocal(path string, units []*stacks.Unit, warn func(string)) (map[*stacks.Unit]*UnitState, error) {
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
	return a == nil || !a.Destroy || a.Result != report.StatusDestroyed || a.At.Before(us.Deployed.At)
}
