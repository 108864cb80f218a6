package report

import (
	"fmt"
	"strings"
)

// Gate is a step's gate a unit's plan raised: the step failed, and the
// unit's apply waits until the people the gate names approve
// (docs/controls.md#gates).
type Gate struct {
	// Step is the step that failed: workflows[0].plan[2] (conftest).
	Step       string   `json:"step"`
	Token      string   `json:"token,omitempty"`
	Name       string   `json:"name,omitempty"`
	AnyOf      []string `json:"any_of,omitempty"`
	AllOf      []string `json:"all_of,omitempty"`
	AnyOfCount int      `json:"any_of_count,omitempty"`
	// Error is how the step failed, masked.
	Error string `json:"error"`
}

// Title names the gate: its name, else its token, else its step.
func (g Gate) Title() string {
	switch {
	case g.Name != "":
		return fmt.Sprintf("gate %q", g.Name)
	case g.Token != "":
		return fmt.Sprintf("gate %s", g.Token)
	}
	return "the gate of " + g.Step
}

// Needs says what approves the gate.
func (g Gate) Needs() string {
	var parts []string
	if len(g.AllOf) > 0 {
		parts = append(parts, "an approval from each of "+strings.Join(g.AllOf, ", "))
	}
	if len(g.AnyOf) > 0 || len(g.AllOf) == 0 {
		who := "anyone"
		if len(g.AnyOf) > 0 {
			who = strings.Join(g.AnyOf, ", ")
		}
		parts = append(parts, fmt.Sprintf("%s from %s", CountOf(max(g.AnyOfCount, 1), "approval"), who))
	}
	how := "approvals of the pull request"
	if g.Token != "" {
		how = fmt.Sprintf("comments `strata gate approve %s`", g.Token)
	}
	return strings.Join(parts, " and ") + " (" + how + ")"
}

// GatedReason is a planned unit's reason when its plan raised gates.
func GatedReason(gates []Gate) string {
	if len(gates) == 0 {
		return ""
	}
	var b strings.Builder
	for i, g := range gates {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "gated: %s failed, so the apply needs %s", g.Step, g.Needs())
	}
	return b.String()
}
