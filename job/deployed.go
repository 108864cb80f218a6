package job

import (
	"context"
	"path"
	"sync"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// What a unit has deployed (docs/behaviour.md#changed-units): the commit
// of its last successful apply, which --changed on a push build compares
// the unit with, so that a push whose CI run was skipped or cancelled is
// applied by the next one.

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
func (r *Run) deployedNow(ctx context.Context, u *stacks.Unit) *runstate.DeployedRecord {
	co := &r.checkout
	co.once.Do(func() {
		var (
			repo *git.Repo
			err  error
		)
		if r.Repo != nil {
			repo, err = r.Repo()
		} else {
			// An interrupt after an apply must not lose its record.
			repo, err = git.Open(context.WithoutCancel(ctx), r.Project.Root)
		}
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
			modified, _ := r.Project.ModifiedUnits(edited)
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
	return &runstate.DeployedRecord{Commit: co.commit, At: r.Now().UTC(), Dirty: co.dirty[u]}
}

// wholePlan reports whether a plan covers the whole unit: a targeted,
// refresh-only or destroy plan deploys only part of its content.
func wholePlan(a engineargs.PlanArgs) bool {
	return len(a.Targets) == 0 && !a.RefreshOnly && !a.Destroy
}
