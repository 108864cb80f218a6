package report

import (
	"regexp"
	"strings"
)

// planMarker is a line of a plan that marks a change: its indentation,
// then +, -, ~, -/+ or +/-, then a space.
var planMarker = regexp.MustCompile(`^(\s*)(-/\+|\+/-|[-+~<=])( .*)?$`)

// DiffView is a plan's text as a diff block shows it, so a forge colours
// it (docs/behaviour.md#summary): each change's marker moves to the start
// of its line, `+` to add, `-` to destroy, `!` for an update in place
// (`~`) or a replacement (`-/+`, `+/-`); other lines keep their text.
func DiffView(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		m := planMarker.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		mark := m[2]
		switch mark {
		case "+", "-":
		case "<=":
			// A data source read: not a change.
			continue
		default:
			mark = "!"
		}
		lines[i] = mark + m[1] + strings.Repeat(" ", len(m[2])-1) + m[3]
	}
	return strings.Join(lines, "\n")
}

// hasPlan says a unit's log is a plan worth a diff block: the unit
// planned or applied changes.
func (u *UnitReport) hasPlan() bool {
	switch u.Status {
	case StatusPlanned, StatusApplied, StatusDestroyed:
		return true
	}
	return false
}

// fenceFor is the opening fence of a unit's log: a diff block for a plan.
func (u *UnitReport) fenceFor() string {
	if u.hasPlan() {
		return "```diff"
	}
	return "```"
}
