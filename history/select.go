package history

import (
	"fmt"
	"strings"

	"github.com/strata-iac/strata/internal/spell"
	"github.com/strata-iac/strata/report"
)

// The statuses --status selects units by (docs/behaviour.md#history), as
// the flag spells them.
var statusFilters = []struct {
	name  string
	match func(*UnitStatus) bool
}{
	{"drifted", func(us *UnitStatus) bool { return us != nil && us.Drift == StatusDrifted }},
	{"in-sync", func(us *UnitStatus) bool { return us != nil && us.Drift == StatusInSync }},
	{"planned", lastIs(report.StatusPlanned)},
	{"no-changes", lastIs(report.StatusNoChanges)},
	{"applied", lastIs(report.StatusApplied)},
	{"destroyed", lastIs(report.StatusDestroyed)},
	{"failed", lastIs(report.StatusFailed)},
	{"never-applied", func(us *UnitStatus) bool { return us == nil || us.AppliedAt == nil }},
}

func lastIs(s report.Status) func(*UnitStatus) bool {
	return func(us *UnitStatus) bool { return us != nil && us.Status == s }
}

// StatusNames are the statuses --status takes.
func StatusNames() []string {
	out := make([]string, len(statusFilters))
	for i, f := range statusFilters {
		out[i] = f.name
	}
	return out
}

// NeverApplied is the status that also asks the run state: a unit applied
// before the history was kept has a record of its apply there.
const NeverApplied = "never-applied"

// Filter selects units by their last recorded status: a unit matches
// when any of its statuses does.
type Filter struct {
	Names   []string
	matches []func(*UnitStatus) bool
}

// ParseStatuses reads --status values (each may list several, comma
// separated); an unknown one is an error listing those it could be.
func ParseStatuses(values []string) (*Filter, error) {
	f := &Filter{}
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			// "never applied", as people say it, and the report's spelling.
			name = strings.NewReplacer(" ", "-", "_", "-").Replace(strings.ToLower(name))
			found := false
			for _, sf := range statusFilters {
				if sf.name == name {
					f.Names, f.matches, found = append(f.Names, name), append(f.matches, sf.match), true
				}
			}
			if !found {
				mean := ""
				if near := spell.Typo(name, StatusNames()); near != "" {
					mean = fmt.Sprintf("; did you mean %s?", near)
				}
				return nil, fmt.Errorf("--status %s: no such status%s; expected one of: %s", v, mean, strings.Join(StatusNames(), ", "))
			}
		}
	}
	if len(f.Names) == 0 {
		return nil, nil
	}
	return f, nil
}

// Match reports whether a unit with that last status (nil: none
// recorded) is selected.
func (f *Filter) Match(us *UnitStatus) bool {
	for _, m := range f.matches {
		if m(us) {
			return true
		}
	}
	return false
}

// Has says the filter selects by that status.
func (f *Filter) Has(name string) bool {
	for _, n := range f.Names {
		if n == name {
			return true
		}
	}
	return false
}

// Without is the filter less one status.
func (f *Filter) Without(name string) *Filter {
	out := &Filter{}
	for i, n := range f.Names {
		if n != name {
			out.Names, out.matches = append(out.Names, n), append(out.matches, f.matches[i])
		}
	}
	return out
}
