package job

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/strata-iac/strata/report"
)

// Reading a saved plan: `show -json` of the plan file, decoded with
// hashicorp/terraform-json. The change counts and the outputs a plan
// changes come from here, not from the plan's printed summary, which
// leaves outputs out.

// planView is what strata reads from a plan's JSON.
type planView struct {
	Changes report.Changes
	// ChangedOutputs are the root module outputs the plan changes,
	// sorted.
	ChangedOutputs []string
	// Outputs are the outputs' values after the plan, as far as the plan
	// knows them (docs/behaviour.md#inputs-between-stacks).
	Outputs map[string]PlannedOutput
	// ChangeSet is a digest of what the plan changes (changeSet).
	ChangeSet string
	// Secrets are the strings the plan marks sensitive, before and after
	// (docs/behaviour.md#what-is-masked).
	Secrets []string
}

// plannedOutput is an output's value after a plan: known (its JSON) or
// unknown until apply.
type PlannedOutput struct {
	Value     json.RawMessage
	Known     bool
	Sensitive bool
}

// readPlanJSON decodes `show -json` of a saved plan.
func readPlanJSON(b []byte) (planView, error) {
	var p tfjson.Plan
	// Numbers stay as written, so an output's value keeps its digits.
	p.UseJSONNumber(true)
	if err := p.UnmarshalJSON(b); err != nil {
		return planView{}, fmt.Errorf("reading the plan's JSON: %w", err)
	}
	v := planView{Outputs: plannedOutputs(&p), Secrets: sensitiveStrings(&p)}
	v.Changes, v.ChangedOutputs = countPlan(&p)
	cs, err := changeSet(&p)
	if err != nil {
		return planView{}, fmt.Errorf("reading the plan's JSON: %w", err)
	}
	v.ChangeSet = cs
	return v, nil
}

// changeSet is a digest of what a plan changes: each resource change but
// no-op and read, by address (and deposed object), with its actions and
// planned values (after, after_unknown, after_sensitive), and each root
// module output that changes, with its value after. What the plan starts
// from (before) is left out: two plans made from different states that
// would leave the same resources with the same values make the same
// changes (docs/behaviour.md#saved-plans).
func changeSet(p *tfjson.Plan) (string, error) {
	type change struct {
		Address        string         `json:"address"`
		Deposed        string         `json:"deposed,omitempty"`
		Actions        tfjson.Actions `json:"actions"`
		After          any            `json:"after"`
		AfterUnknown   any            `json:"after_unknown"`
		AfterSensitive any            `json:"after_sensitive"`
	}
	var set struct {
		Resources []change `json:"resources"`
		Outputs   []change `json:"outputs"`
	}
	for _, rc := range p.ResourceChanges {
		if rc == nil || rc.Change == nil || rc.Change.Actions.NoOp() || rc.Change.Actions.Read() {
			continue
		}
		c := rc.Change
		set.Resources = append(set.Resources, change{Address: rc.Address, Deposed: rc.DeposedKey, Actions: c.Actions,
			After: c.After, AfterUnknown: c.AfterUnknown, AfterSensitive: c.AfterSensitive})
	}
	for name, oc := range p.OutputChanges {
		if oc == nil || len(oc.Actions) == 0 || oc.Actions.NoOp() {
			continue
		}
		set.Outputs = append(set.Outputs, change{Address: name, Actions: oc.Actions,
			After: oc.After, AfterUnknown: oc.AfterUnknown, AfterSensitive: oc.AfterSensitive})
	}
	for _, cs := range [][]change{set.Resources, set.Outputs} {
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].Address != cs[j].Address {
				return cs[i].Address < cs[j].Address
			}
			return cs[i].Deposed < cs[j].Deposed
		})
	}
	if len(set.Resources) == 0 && len(set.Outputs) == 0 {
		return "", nil
	}
	b, err := json.Marshal(set)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// sensitiveStrings returns every string value the plan holds at a place
// the engine marks sensitive: resource changes and drift before and after
// (before_sensitive, after_sensitive), output changes, the outputs and
// resource attributes of the prior state and the planned values, and the
// values of the root module's variables declared sensitive. The engine
// prints these as (sensitive value), but the same string may reach the
// printed plan by a path it does not mark (nonsensitive(), an attribute a
// provider does not mark): a rotated secret's old value is then in the
// plan's text, and here, in the prior state or the change's before.
func sensitiveStrings(p *tfjson.Plan) []string {
	var out []string
	for _, rcs := range [][]*tfjson.ResourceChange{p.ResourceChanges, p.ResourceDrift} {
		for _, rc := range rcs {
			if rc != nil {
				changeSecrets(rc.Change, &out)
			}
		}
	}
	for _, oc := range p.OutputChanges {
		changeSecrets(oc, &out)
	}
	stateSecrets(p.PlannedValues, &out)
	if p.PriorState != nil {
		stateSecrets(p.PriorState.Values, &out)
	}
	if p.Config != nil && p.Config.RootModule != nil {
		for name, v := range p.Config.RootModule.Variables {
			if pv := p.Variables[name]; v != nil && v.Sensitive && pv != nil {
				markedStrings(pv.Value, true, &out)
			}
		}
	}
	return out
}

func changeSecrets(c *tfjson.Change, out *[]string) {
	if c == nil {
		return
	}
	markedStrings(c.Before, c.BeforeSensitive, out)
	markedStrings(c.After, c.AfterSensitive, out)
}

// stateSecrets adds the sensitive outputs of a state (or planned values)
// and the sensitive attributes of its resources, in every module.
func stateSecrets(sv *tfjson.StateValues, out *[]string) {
	if sv == nil {
		return
	}
	for _, o := range sv.Outputs {
		if o != nil && o.Sensitive {
			markedStrings(o.Value, true, out)
		}
	}
	var walk func(m *tfjson.StateModule)
	walk = func(m *tfjson.StateModule) {
		if m == nil {
			return
		}
		for _, r := range m.Resources {
			if r == nil || len(r.SensitiveValues) == 0 {
				continue
			}
			var mark any
			if json.Unmarshal(r.SensitiveValues, &mark) == nil {
				markedStrings(r.AttributeValues, mark, out)
			}
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	walk(sv.RootModule)
}

// markedStrings adds the strings of v where mark, a sensitivity mark of
// the engine's JSON (true, or lists and objects of marks shaped as v),
// says the value is sensitive. Every string below a true mark counts:
// map values and list elements, not map keys.
func markedStrings(v, mark any, out *[]string) {
	switch m := mark.(type) {
	case bool:
		if m {
			allStrings(v, out)
		}
	case []any:
		if l, ok := v.([]any); ok {
			for i := 0; i < len(l) && i < len(m); i++ {
				markedStrings(l[i], m[i], out)
			}
		}
	case map[string]any:
		if o, ok := v.(map[string]any); ok {
			for k, x := range o {
				if mk, ok := m[k]; ok {
					markedStrings(x, mk, out)
				}
			}
		}
	}
}

func allStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			allStrings(e, out)
		}
	case map[string]any:
		for _, e := range x {
			allStrings(e, out)
		}
	}
}

// countPlan counts a plan's resource changes by action, as the engine's
// own summary does (create: add; update: change; delete: destroy; a
// replacement, delete and create in either order: one add and one
// destroy; no-op, read and forget: nothing), and the outputs it changes.
func countPlan(p *tfjson.Plan) (report.Changes, []string) {
	var c report.Changes
	for _, rc := range p.ResourceChanges {
		if rc == nil || rc.Change == nil {
			continue
		}
		a := rc.Change.Actions
		switch {
		case a.Create():
			c.Add++
		case a.Update():
			c.Change++
		case a.Delete():
			c.Destroy++
		case a.Replace():
			c.Add++
			c.Destroy++
		}
	}
	var names []string
	for name, oc := range p.OutputChanges {
		if oc != nil && len(oc.Actions) > 0 && !oc.Actions.NoOp() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	c.Outputs = len(names)
	return c, names
}

// plannedOutputs are the root module's outputs after the plan: from
// output_changes, where after_unknown says whether the value (or any part
// of it) waits for the apply, else from planned_values.
func plannedOutputs(p *tfjson.Plan) map[string]PlannedOutput {
	out := map[string]PlannedOutput{}
	if p.PlannedValues != nil {
		for name, o := range p.PlannedValues.Outputs {
			if o == nil {
				continue
			}
			if b, err := json.Marshal(o.Value); err == nil {
				out[name] = PlannedOutput{Value: b, Known: true, Sensitive: o.Sensitive}
			}
		}
	}
	for name, oc := range p.OutputChanges {
		if oc == nil {
			continue
		}
		if oc.Actions.Delete() {
			delete(out, name)
			continue
		}
		po := PlannedOutput{Known: !anyTrue(oc.AfterUnknown), Sensitive: anyTrue(oc.AfterSensitive)}
		if po.Known {
			b, err := json.Marshal(oc.After)
			if err != nil {
				po.Known = false
			}
			po.Value = b
		}
		out[name] = po
	}
	return out
}

// anyTrue reports whether a mask (after_unknown, after_sensitive: a bool,
// or lists and objects of them for a value's parts) marks anything.
func anyTrue(mask any) bool {
	switch m := mask.(type) {
	case bool:
		return m
	case []any:
		for _, x := range m {
			if anyTrue(x) {
				return true
			}
		}
	case map[string]any:
		for _, x := range m {
			if anyTrue(x) {
				return true
			}
		}
	}
	return false
}

// outputChangeLine is a line of the "Changes to Outputs:" block the
// engine prints with a plan: two spaces, the action, the output's name.
var outputChangeLine = regexp.MustCompile(`^  (?:[-+~]|-/\+|\+/-) ([A-Za-z_][A-Za-z0-9_-]*)\s+=`)

// outputScanner passes output through and keeps the names in the
// "Changes to Outputs:" block of a printed plan. It reads the text only
// where no plan file exists (apply without one, see applyNow).
type outputScanner struct {
	w     io.Writer
	in    bool
	names []string
}

func (s *outputScanner) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		switch {
		case strings.TrimSpace(line) == "Changes to Outputs:":
			s.in = true
		case s.in && line != "" && line[0] != ' ':
			// The block ends at the first line not indented.
			s.in = false
		case s.in:
			if m := outputChangeLine.FindStringSubmatch(line); m != nil {
				s.names = append(s.names, m[1])
			}
		}
	}
	return s.w.Write(p)
}
