package runstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/stacks"
)

// Deleted root modules put back (docs/behaviour.md#changed-units): a
// deleted unit that may still hold resources is planned or destroyed from
// its dir as it was at a commit, put back in place for the length of the
// command, so that relative paths and a local state left in the dir work
// as they did. The state dir records what was put back before anything
// is, so the next command removes what a killed one left.

// restoredRecord is the state dir's record of what a command put back.
const restoredRecord = "restored.json"

// restoredDir is one dir put back: whether it was there before (then only
// the files listed are removed afterwards), and the files it had at the
// commit.
type restoredDir struct {
	Dir     string   `json:"dir"`
	Existed bool     `json:"existed"`
	Files   []string `json:"files,omitempty"`
}

// RestoreDir is a deleted root module dir to put back, and the commit to
// take it from.
type RestoreDir struct {
	Dir, Commit string
}

// Restored is what a command put back; Remove takes it away again.
type Restored struct {
	root, stateDir string
	repo           *git.Repo
	lock           *filelock.Lock
	dirs           []restoredDir
}

// restoreLock is held while dirs are put back: a command that finds the
// record without being able to take the lock leaves it to its holder.
func restoreLock(stateDir string) string {
	return (&StateDir{Path: stateDir}).LockPath("restored")
}

// Restore puts each dir back into the work tree at root as it was at its
// commit, with the local modules it calls that are gone too, holding the
// state dir's restore lock until Remove. On an error, what was put back
// is taken away again.
func Restore(ctx context.Context, root, stateDir string, repo *git.Repo, dirs []RestoreDir) (*Restored, error) {
	if err := os.MkdirAll(filepath.Dir(restoreLock(stateDir)), 0o700); err != nil {
		return nil, err
	}
	lock, err := filelock.Acquire(ctx, restoreLock(stateDir), nil)
	if err != nil {
		return nil, err
	}
	r := &Restored{root: root, stateDir: stateDir, repo: repo, lock: lock}
	for _, d := range dirs {
		if err := r.restore(d.Commit, d.Dir); err != nil {
			if rerr := r.Remove(); rerr != nil {
				err = fmt.Errorf("%w; and removing what was put back: %v", err, rerr)
			}
			return nil, err
		}
	}
	return r, nil
}

// CleanRestored removes what a command that was killed put back, before a
// project is loaded: those dirs must not be taken for root modules.
func CleanRestored(stateDir, root string, warn func(string)) error {
	record := filepath.Join(stateDir, restoredRecord)
	b, err := os.ReadFile(record)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(restoreLock(stateDir)), 0o700); err != nil {
		return err
	}
	lock, err := filelock.TryAcquire(restoreLock(stateDir))
	if errors.Is(err, filelock.ErrHeld) {
		return nil // its command is still running and cleans up itself
	}
	if err != nil {
		return err
	}
	var dirs []restoredDir
	if err := json.Unmarshal(b, &dirs); err != nil {
		lock.Release()
		return fmt.Errorf("%s: %w", record, err)
	}
	r := &Restored{root: root, stateDir: stateDir, lock: lock, dirs: dirs}
	warn(fmt.Sprintf("removing the deleted dirs a killed command put back: %s", strings.Join(r.Names(), ", ")))
	return r.Remove()
}

// Names are the dirs put back.
func (r *Restored) Names() []string {
	out := make([]string, len(r.dirs))
	for i, d := range r.dirs {
		out[i] = d.Dir
	}
	return out
}

// save writes the record, synced, before anything is put back.
func (r *Restored) save() error {
	b, err := json.Marshal(r.dirs)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(r.stateDir, restoredRecord), b, 0o600)
}

// restore puts a unit's dir back as it was at commit, with the local
// modules it calls that are gone too, recursively.
func (r *Restored) restore(commit, dir string) error {
	todo := []string{dir}
	seen := map[string]bool{}
	for len(todo) > 0 {
		d := todo[0]
		todo = todo[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		abs := filepath.Join(r.root, filepath.FromSlash(d))
		if stacks.HoldsTerraform(abs) {
			continue // still there: a module the change kept
		}
		files, err := r.repo.Files(commit, d)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			continue
		}
		_, statErr := os.Lstat(abs)
		r.dirs = append(r.dirs, restoredDir{Dir: d, Existed: statErr == nil, Files: files})
		if err := r.save(); err != nil {
			return err
		}
		if _, err := r.repo.Restore(commit, []string{d}, r.root); err != nil {
			return fmt.Errorf("putting %s back as it was at %s: %w", d, commit, err)
		}
		mod, err := engines.InspectModule(tfconfig.NewOsFs(), abs)
		if err != nil || mod == nil {
			continue
		}
		for _, call := range mod.ModuleCalls {
			if !strings.HasPrefix(call.Source, "./") && !strings.HasPrefix(call.Source, "../") {
				continue
			}
			m := path.Clean(path.Join(d, call.Source))
			if m == ".." || strings.HasPrefix(m, "../") {
				continue
			}
			todo = append(todo, m)
		}
	}
	return nil
}

// Remove takes away what was put back, and the record, and releases the
// restore lock.
func (r *Restored) Remove() error {
	defer r.lock.Release()
	var errs []error
	for i := len(r.dirs) - 1; i >= 0; i-- {
		d := r.dirs[i]
		// The record is read back from disk: a name becomes a path only
		// inside the root.
		abs, err := safepath.Join(r.root, d.Dir)
		if err != nil || abs == filepath.Clean(r.root) {
			errs = append(errs, fmt.Errorf("restored dir %q: not inside %s", d.Dir, r.root))
			continue
		}
		if !d.Existed {
			errs = append(errs, os.RemoveAll(abs))
			continue
		}
		files := append([]string(nil), d.Files...)
		sort.Sort(sort.Reverse(sort.StringSlice(files)))
		for _, f := range files {
			p, err := safepath.Join(r.root, f)
			if err != nil || !strings.HasPrefix(p, abs+string(filepath.Separator)) {
				errs = append(errs, fmt.Errorf("restored file %q: not inside %s", f, abs))
				continue
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			// Dirs left empty go too; one with anything else in it stays.
			for dir := filepath.Dir(p); dir != abs && strings.HasPrefix(dir, abs); dir = filepath.Dir(dir) {
				if os.Remove(dir) != nil {
					break
				}
			}
		}
	}
	errs = append(errs, os.Remove(filepath.Join(r.stateDir, restoredRecord)))
	var out []error
	for _, err := range errs {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}
