package ci

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/runner"
)

// Check verifies a finished run against what one run on one machine
// guarantees (docs/ci.md#invariants), from what the bucket holds alone:
//   - every unit has a result, under its own key, and no unit started before every unit it
//     waits for had ended;
//   - no unit applied more than once;
//   - a failure skipped exactly the units that wait for it, directly or
//     not, and every skipped unit names a failed root it waits for;
//   - an applied unit applied the digest it planned;
//   - only a reader is recorded as not needed, and one that is applied
//     nothing; a reader that joined names what it reads.
//
// It returns every violation found, nil when there is none.
func Check(ctx context.Context, st *objstore.Store, run string) ([]string, error) {
	m, results, refused, err := readRun(ctx, st, run)
	if err != nil {
		return nil, err
	}
	applies, err := st.List(ctx, appliesPrefix(m.Run))
	if err != nil {
		return nil, err
	}
	appliesOf := map[string]int{}
	for _, k := range applies {
		uk := strings.TrimPrefix(k[:strings.LastIndex(k, "/")], appliesPrefix(m.Run))
		appliesOf[uk]++
	}
	var bad []string
	after := map[string][]string{}
	for _, mu := range m.Units {
		after[mu.ID] = mu.After
	}
	// failedRoots are the failed units each unit waits for, directly or not.
	memo := map[string]map[string]bool{}
	var failedRoots func(id string) map[string]bool
	failedRoots = func(id string) map[string]bool {
		if f, ok := memo[id]; ok {
			return f
		}
		f := map[string]bool{}
		memo[id] = f
		for _, p := range after[id] {
			if r := results[p]; r != nil && r.Unit.Status == runner.StatusFailed {
				f[r.Unit.Name()] = true
			}
			for n := range failedRoots(p) {
				f[n] = true
			}
		}
		return f
	}
	for _, mu := range m.Units {
		r := results[mu.ID]
		if why, ok := refused[mu.ID]; ok {
			bad = append(bad, fmt.Sprintf("%s: %s", mu.ID, why))
			continue
		}
		if r == nil {
			bad = append(bad, fmt.Sprintf("%s: no result", mu.ID))
			continue
		}
		start, _ := r.span()
		for _, p := range mu.After {
			pr := results[p]
			if pr == nil || start.IsZero() {
				continue
			}
			if _, end := pr.span(); !end.IsZero() && start.Before(end) {
				bad = append(bad, fmt.Sprintf("%s started at %s, before %s, which it waits for, ended at %s", mu.ID, start.Format("15:04:05.000000"), p, end.Format("15:04:05.000000")))
			}
		}
		if n := appliesOf[mu.key()]; n > 1 {
			bad = append(bad, fmt.Sprintf("%s applied %d times", mu.ID, n))
		}
		roots := failedRoots(mu.ID)
		mutating := m.Command == runner.CmdApply || m.Command == runner.CmdDestroy
		if len(roots) > 0 && mutating && r.Unit.Status != runner.StatusSkipped {
			bad = append(bad, fmt.Sprintf("%s ended %s though %s, which it waits for, failed", mu.ID, r.Unit.Status, strings.Join(sortedKeys(roots), ", ")))
		}
		switch r.Unit.Status {
		case runner.StatusSkipped:
			if !roots[r.Unit.Cause] {
				bad = append(bad, fmt.Sprintf("%s skipped for %q, which is not a failed unit it waits for", mu.ID, r.Unit.Cause))
			}
		}
		if (r.Unit.Status == runner.StatusApplied || r.Unit.Status == runner.StatusDestroyed) && r.Applied != r.Unit.Digest {
			bad = append(bad, fmt.Sprintf("%s applied digest %q, planned %q", mu.ID, r.Applied, r.Unit.Digest))
		}
		switch {
		case r.NotNeeded && !mu.Reader:
			bad = append(bad, fmt.Sprintf("%s is recorded as not needed, but it is no reader", mu.ID))
		case r.NotNeeded && (appliesOf[mu.key()] > 0 || len(r.Unit.Steps) > 0):
			bad = append(bad, fmt.Sprintf("%s is recorded as not needed, but it ran", mu.ID))
		case mu.Reader && !r.NotNeeded && !strings.HasPrefix(r.Unit.Why, "reads: "):
			bad = append(bad, fmt.Sprintf("%s joined the run as a reader with why %q, not what it reads", mu.ID, r.Unit.Why))
		}
	}
	return bad, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
