package runner

import (
	"slices"

	"github.com/strata-iac/strata/stacks"
)

// askControls asks the controls about the units of a command that may
// run (not those outside it), and adds what they refuse, and their
// warnings, to what the caller already knew.
func askControls(opt Options, members []member) (denied, autoApplyDenied map[*stacks.Unit]string, warnings map[*stacks.Unit][]string) {
	var units, auto []*stacks.Unit
	autoApplies := policyOf(opt).AutoApplies && !opt.NoAutoApply
	for _, m := range members {
		if m.role.outside() {
			continue
		}
		units = append(units, m.Unit)
		if autoApplies && m.AutoApplies() {
			auto = append(auto, m.Unit)
		}
	}
	d, a, w := opt.Controls(units, auto)
	return mergeReasons(opt.Denied, d), mergeReasons(opt.AutoApplyDenied, a), mergeWarnings(opt.Warnings, w)
}

// mergeWarnings is a and b in one map, a unit's warnings from a first.
func mergeWarnings(a, b map[*stacks.Unit][]string) map[*stacks.Unit][]string {
	out := make(map[*stacks.Unit][]string, len(a)+len(b))
	for u, ws := range a {
		out[u] = ws
	}
	for u, ws := range b {
		out[u] = append(slices.Clip(out[u]), ws...)
	}
	return out
}

// mergeReasons is a and b in one map; a's reason wins for a unit in both.
func mergeReasons(a, b map[*stacks.Unit]string) map[*stacks.Unit]string {
	out := make(map[*stacks.Unit]string, len(a)+len(b))
	for u, why := range b {
		out[u] = why
	}
	for u, why := range a {
		out[u] = why
	}
	return out
}
