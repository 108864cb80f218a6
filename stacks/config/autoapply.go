package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// AutoApply is `auto_apply` as written: true or false, or a map that
// turns it on with conditions on the plan (docs/behaviour.md#auto-apply-conditions).
type AutoApply struct {
	Pos        Pos
	Enabled    Bool   `yaml:"enabled" doc:"auto_apply is on (default true once the map is written)"`
	When       String `yaml:"when" cfg:"ext" enum:"always,no_deletes" doc:"always (default), or no_deletes: a plan that destroys or replaces a resource is left planned"`
	MaxChanges Int    `yaml:"max_changes" cfg:"ext" doc:"a plan that adds, changes and destroys more resources than this is left planned"`
}

func (a *AutoApply) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind != yaml.MappingNode {
		*a = AutoApply{Pos: posOf(n)}
		a.Enabled.decodeNode(d, n, key)
		return
	}
	d.decodeStruct(n, reflectValue(a), key, nil)
	if !a.Enabled.Set {
		a.Enabled = Bool{Value: true, Pos: posOf(n), Set: true}
	}
	if a.MaxChanges.Set && a.MaxChanges.Value < 0 {
		d.Errorf(a.MaxChanges.Pos, key+".max_changes", "found %d; expected 0 or more", a.MaxChanges.Value)
	}
}

// Set says auto_apply was written.
func (a AutoApply) Set() bool { return a.Enabled.Set }

// On says auto_apply is on.
func (a AutoApply) On() bool { return a.Enabled.Value }

// String is the value as a message shows it: true, false, or true with
// its conditions.
func (a AutoApply) String() string {
	s := fmt.Sprint(a.On())
	if a.On() && a.When.Value == "no_deletes" {
		s += " when no_deletes"
	}
	if a.On() && a.MaxChanges.Set {
		s += fmt.Sprintf(" with max_changes %d", a.MaxChanges.Value)
	}
	return s
}

// AutoApplyCondition is what a plan must hold for auto_apply to apply
// it; the zero value holds for every plan.
type AutoApplyCondition struct {
	NoDeletes bool
	// MaxChanges limits the resources added, changed and destroyed
	// together, when HasMax.
	MaxChanges int
	HasMax     bool
}

// Condition is the condition a written auto_apply sets.
func (a AutoApply) Condition() AutoApplyCondition {
	return AutoApplyCondition{NoDeletes: a.When.Value == "no_deletes", MaxChanges: a.MaxChanges.Value, HasMax: a.MaxChanges.Set}
}

// Holds says why a plan that adds, changes and destroys these many
// resources is not auto-applied under the condition, or "" when it is.
func (c AutoApplyCondition) Holds(add, change, destroy int) string {
	figures := fmt.Sprintf("+%d ~%d -%d", add, change, destroy)
	switch {
	case c.NoDeletes && destroy > 0:
		return fmt.Sprintf("auto_apply when no_deletes: the plan destroys %d (%s)", destroy, figures)
	case c.HasMax && add+change+destroy > c.MaxChanges:
		return fmt.Sprintf("auto_apply max_changes %d: the plan makes %d (%s)", c.MaxChanges, add+change+destroy, figures)
	}
	return ""
}
