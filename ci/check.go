package ci

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
)

// Check verifies a finished run against what one run on one machine
// guarantees (docs/ci.md#invariants), from what the bucket holds alone:
//   - every unit has a result, under its own key, and no unit started before every unit it
//     waits for had ended;
//   - no unit applied more than once;
//   - a failure or a denial skipped exactly the units that wait for it,
//     directly or not, and every skipped unit names such a root it waits
//     for;
//   - a unit ended denied exactly when the run's start denied it;
//   - an applied unit applied the digest it planned;
//   - only a reader is recorded as not needed, and one that is applied
//     nothing; a reader that joined names what it reads.
//
// It returns every violation found, nil when there is none.
func Check(ctx context.Context, st *objstore.Store, run string) ([]string, error) {
	m, results, refused, err := loadRun(ctx, st, run)
	if err != nil {
		return nil, err
	}
	appliesOf, err := countApplies(ctx, st, m)
	if err != nil {
		return nil, err
	}
	var bad []string
	roots := newFailedRoots(m, results)
	stackAt := m.stackIndex()
	last := latestEnds(m, results)
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
		bad = append(bad, orderViolations(mu, r, results, stackAt, last)...)
		bad = append(bad, outcomeViolations(m, mu, r, appliesOf[mu.key()], roots.of(mu.ID))...)
		bad = append(bad, readerViolations(mu, r, appliesOf[mu.key()])...)
	}
	return bad, nil
}

// countApplies counts the applies recorded under a run, by unit key.
func countApplies(ctx context.Context, st *objstore.Store, m *Manifest) (map[string]int, error) {
	applies, err := st.List(ctx, appliesPrefix(m.Run))
	if err != nil {
		return nil, err
	}
	appliesOf := map[string]int{}
	for _, k := range applies {
		uk := strings.TrimPrefix(k[:strings.LastIndex(k, "/")], appliesPrefix(m.Run))
		appliesOf[uk]++
	}
	return appliesOf, nil
}

// failedRoots finds the failed units each unit of a run waits for,
// directly or not.
type failedRoots struct {
	after   map[string][]string
	results map[string]*Result
	memo    map[string]map[string]bool
}

// newFailedRoots reads what each unit of the run waits for: a stack it
// waits for is one node, which waits for the stack's units, so the walk
// stays linear in the units and rules.
func newFailedRoots(m *Manifest, results map[string]*Result) *failedRoots {
	after := map[string][]string{}
	stackAt := m.stackIndex()
	for _, mu := range m.Units {
		after[mu.ID] = mu.After
		if ms := stackAt[mu.Stack]; ms != nil && len(ms.After) > 0 {
			list := append([]string(nil), mu.After...)
			for _, name := range ms.After {
				list = append(list, stackNode+name)
			}
			after[mu.ID] = list
		}
	}
	for _, ms := range m.Stacks {
		after[stackNode+ms.Name] = ms.Units
	}
	return &failedRoots{after: after, results: results, memo: map[string]map[string]bool{}}
}

// stackNode prefixes a stack's name to make its node among the units'
// IDs, which never start with a NUL.
const stackNode = "\x00stack "

// of decides which failed units the unit id waits for, directly or not,
// by name.
func (fr *failedRoots) of(id string) map[string]bool {
	if f, ok := fr.memo[id]; ok {
		return f
	}
	f := map[string]bool{}
	fr.memo[id] = f
	for _, p := range fr.after[id] {
		if r := fr.results[p]; r != nil && (r.Unit.Status == report.StatusFailed || r.Unit.Status == report.StatusDenied) {
			f[r.Unit.Name()] = true
		}
		for n := range fr.of(p) {
			f[n] = true
		}
	}
	return f
}

// orderViolations decides whether a unit started before a unit it waits
// for had ended; of a stack it waits for, the unit that ended last.
func orderViolations(mu ManifestUnit, r *Result, results map[string]*Result, stackAt map[string]*ManifestStack, last map[string]unitEnd) []string {
	var bad []string
	start, _ := r.span()
	if start.IsZero() {
		return nil
	}
	check := func(p string, end time.Time) {
		if !end.IsZero() && start.Before(end) {
			bad = append(bad, fmt.Sprintf("%s started at %s, before %s, which it waits for, ended at %s", mu.ID, start.Format("15:04:05.000000"), p, end.Format("15:04:05.000000")))
		}
	}
	for _, p := range mu.After {
		if pr := results[p]; pr != nil {
			_, end := pr.span()
			check(p, end)
		}
	}
	if ms := stackAt[mu.Stack]; ms != nil {
		for _, name := range ms.After {
			if l, ok := last[name]; ok {
				check(l.id, l.end)
			}
		}
	}
	return bad
}

// unitEnd is when a unit's result says it ended.
type unitEnd struct {
	id  string
	end time.Time
}

// latestEnds finds, for each stack a stack waits for, its unit that
// ended last.
func latestEnds(m *Manifest, results map[string]*Result) map[string]unitEnd {
	out := map[string]unitEnd{}
	for _, ms := range m.Stacks {
		for _, id := range ms.Units {
			if r := results[id]; r != nil {
				if _, end := r.span(); end.After(out[ms.Name].end) {
					out[ms.Name] = unitEnd{id, end}
				}
			}
		}
	}
	return out
}

// outcomeViolations decides whether a unit's outcome is one a run on one
// machine allows: applied at most once, skipped when a unit it waits for
// failed under a command that applies, skipped only for a failed unit it
// waits for, and applying the digest it planned.
func outcomeViolations(m *Manifest, mu ManifestUnit, r *Result, applies int, roots map[string]bool) []string {
	var bad []string
	if applies > 1 {
		bad = append(bad, fmt.Sprintf("%s applied %d times", mu.ID, applies))
	}
	pol, _ := command.Of(m.Command)
	mutating := pol.Applies
	if len(roots) > 0 && mutating && r.Unit.Status != report.StatusSkipped {
		bad = append(bad, fmt.Sprintf("%s ended %s though %s, which it waits for, failed", mu.ID, r.Unit.Status, strings.Join(slices.Sorted(maps.Keys(roots)), ", ")))
	}
	switch r.Unit.Status {
	case report.StatusSkipped:
		if !roots[r.Unit.Cause] {
			bad = append(bad, fmt.Sprintf("%s skipped for %q, which is not a failed or denied unit it waits for", mu.ID, r.Unit.Cause))
		}
	}
	if denied := r.Unit.Status == report.StatusDenied; denied != (mu.Denied != "") {
		bad = append(bad, fmt.Sprintf("%s ended %s, but the run's start decided the controls %s it", mu.ID, r.Unit.Status, map[bool]string{true: "deny", false: "allow"}[mu.Denied != ""]))
	}
	if (r.Unit.Status == report.StatusApplied || r.Unit.Status == report.StatusDestroyed) && r.Applied != r.Unit.Digest {
		bad = append(bad, fmt.Sprintf("%s applied digest %q, planned %q", mu.ID, r.Applied, r.Unit.Digest))
	}
	return bad
}

// readerViolations decides whether a unit's result is right about
// readers: only a reader is not needed, one not needed ran nothing, and a
// reader that joined names what it reads.
func readerViolations(mu ManifestUnit, r *Result, applies int) []string {
	switch {
	case r.NotNeeded && !mu.Reader:
		return []string{fmt.Sprintf("%s is recorded as not needed, but it is no reader", mu.ID)}
	case r.NotNeeded && (applies > 0 || len(r.Unit.Steps) > 0):
		return []string{fmt.Sprintf("%s is recorded as not needed, but it ran", mu.ID)}
	case mu.Reader && !r.NotNeeded && !strings.HasPrefix(r.Unit.Why, "reads: "):
		return []string{fmt.Sprintf("%s joined the run as a reader with why %q, not what it reads", mu.ID, r.Unit.Why)}
	}
	return nil
}
