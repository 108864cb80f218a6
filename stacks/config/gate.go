package config

import "fmt"

// StepGate is a step's `gate`: the step's failure does not fail the unit,
// it holds the unit's apply until the people it names approve
// (docs/controls.md#gates).
type StepGate struct {
	Pos        Pos
	Token      String    `yaml:"token" doc:"the gate's name in an approving comment (strata gate approve TOKEN); without one, approvals of the pull request count"`
	Name       String    `yaml:"name" doc:"what the gate is for, in the report"`
	AnyOf      *[]String `yaml:"any_of" doc:"approvers of which any_of_count are needed (default anyone)"`
	AllOf      *[]String `yaml:"all_of" doc:"each must approve"`
	AnyOfCount Int       `yaml:"any_of_count" doc:"how many any_of approvals (default 1)"`
}

// Gate is a step's gate, defaults applied.
type Gate struct {
	Token, Name  string
	AnyOf, AllOf []string
	AnyOfCount   int
}

// ResolveGate is a step's gate with its defaults applied, nil when the
// step has none.
func ResolveGate(g *StepGate) *Gate {
	if g == nil {
		return nil
	}
	out := &Gate{Token: g.Token.Value, Name: g.Name.Value, AnyOf: Strings(derefStrings(g.AnyOf)), AllOf: Strings(derefStrings(g.AllOf)), AnyOfCount: 1}
	if g.AnyOfCount.Set {
		out.AnyOfCount = g.AnyOfCount.Value
	}
	return out
}

func derefStrings(p *[]String) []String {
	if p == nil {
		return nil
	}
	return *p
}

// checkGates checks the gates of the workflows' steps: their approvers
// and counts.
func checkGates(cfg *Config, c *Collector) {
	for i, w := range cfg.Workflows {
		for phase, steps := range map[string]*[]Step{"plan": w.Plan, "apply": w.Apply} {
			if steps == nil {
				continue
			}
			for j, st := range *steps {
				g := st.Gate
				if g == nil {
					continue
				}
				key := fmt.Sprintf("workflows[%d].%s[%d].gate", i, phase, j)
				checkMatchers(g.AnyOf, key+".any_of", c)
				checkMatchers(g.AllOf, key+".all_of", c)
				if g.AnyOfCount.Set && g.AnyOfCount.Value < 1 {
					c.Errorf(g.AnyOfCount.Pos, key+".any_of_count", "found %d; expected a number of at least 1", g.AnyOfCount.Value)
				}
			}
		}
	}
}
