package ci

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
)

// Lock is a pull request's hold on a dirspace (docs/ci.md#pull-requests):
// taken by its plan, released by `ci unlock` when it is merged or closed.
type Lock struct {
	Unit string    `json:"unit"`
	PR   int       `json:"pr"`
	Run  string    `json:"run"`
	Link string    `json:"link,omitempty"`
	At   time.Time `json:"at"`
}

// LockedError lists the dirspaces another pull request holds.
type LockedError struct {
	PR    int
	Held  []Lock
	Total int
}

func (e *LockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of the run's %d units are locked by other pull requests; PR #%d cannot take them until those are merged or closed (strata ci unlock --pr N):", len(e.Held), e.Total, e.PR)
	for _, l := range e.Held {
		fmt.Fprintf(&b, "\n  %s: PR #%d, run %s", l.Unit, l.PR, l.Run)
		if l.Link != "" {
			fmt.Fprintf(&b, " (%s)", l.Link)
		}
	}
	return b.String()
}

// lockForPR takes the run's PR lock on every unit of the run but its
// readers (docs/ci.md#readers): a lock is
// created only where there is none (the bucket decides between racing
// writers), and one the same PR holds is its own. When another PR holds
// any, the locks taken here are released again and nothing runs.
func lockForPR(ctx context.Context, st *objstore.Store, m *Manifest) error {
	var taken []string
	var held []Lock
	total := 0
	for _, u := range m.Units {
		if u.Reader || u.NoLock {
			// A reader runs only when an apply of the run changes what
			// it reads: the run does not plan it on its own. A unit of
			// lock_policy none is never locked.
			continue
		}
		total++
		key := prLockKey(u.key())
		holder, err := takeLock(ctx, st, key, Lock{Unit: u.ID, PR: m.PR, Run: m.Run, Link: m.Link, At: m.Created})
		switch {
		case err != nil:
			release(ctx, st, taken)
			return fmt.Errorf("locking %s for PR #%d: %w", u.ID, m.PR, err)
		case holder == nil:
			taken = append(taken, key)
		case holder.PR != m.PR:
			held = append(held, *holder)
		}
	}
	if len(held) > 0 {
		release(ctx, st, taken)
		sort.Slice(held, func(i, j int) bool { return held[i].Unit < held[j].Unit })
		return &LockedError{PR: m.PR, Held: held, Total: total}
	}
	return nil
}

// takeLock creates a lock, or returns the lock that holds the key. A
// lock released between the create and the read is created again.
func takeLock(ctx context.Context, st *objstore.Store, key string, l Lock) (*Lock, error) {
	for {
		err := putJSON(ctx, st, key, l, true)
		if err == nil || !errors.Is(err, objstore.ErrExists) {
			return nil, err
		}
		holder := &Lock{}
		if _, err := getJSON(ctx, st, key, holder); !errors.Is(err, objstore.ErrNotFound) {
			return holder, err
		}
	}
}

func release(ctx context.Context, st *objstore.Store, keys []string) {
	for _, k := range keys {
		st.Delete(ctx, k)
	}
}

// Unlock releases the locks a pull request holds, those on the units
// named (unit IDs) or every one, and returns them.
func Unlock(ctx context.Context, st *objstore.Store, pr int, units ...string) ([]Lock, error) {
	keys, err := st.List(ctx, prLocksPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing locks: %w", err)
	}
	var freed []Lock
	for _, k := range keys {
		var l Lock
		if _, err := getJSON(ctx, st, k, &l); err != nil {
			if errors.Is(err, objstore.ErrNotFound) {
				continue
			}
			return freed, err
		}
		if l.PR != pr || (len(units) > 0 && !slices.Contains(units, l.Unit)) {
			continue
		}
		if err := st.Delete(ctx, k); err != nil {
			return freed, fmt.Errorf("releasing the lock on %s: %w", l.Unit, err)
		}
		freed = append(freed, l)
	}
	return freed, nil
}

// Locks lists the locks held, by unit.
func Locks(ctx context.Context, st *objstore.Store) ([]Lock, error) {
	keys, err := st.List(ctx, prLocksPrefix())
	if err != nil {
		return nil, err
	}
	var out []Lock
	for _, k := range keys {
		var l Lock
		if _, err := getJSON(ctx, st, k, &l); err == nil {
			out = append(out, l)
		}
	}
	return out, nil
}
