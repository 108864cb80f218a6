package job

import (
	"strings"

	"github.com/strata-iac/strata/stacks"
)

// Vars are a unit's stack variables as its steps use them
// (docs/behaviour.md#stack-variables), read from its stack once when the
// unit is set up: in substitutions, in its environment under their own
// names and as STACK_VAR_<NAME>, the TF_VAR_ ones in its var file, the
// sensitive ones masked, and all of them in its plan's digest.
type Vars struct {
	byName   map[string]string
	exported map[string]string // by STACK_VAR_<NAME>
	tfVars   map[string]string // the TF_VAR_<name> ones, by input variable name
	secrets  []string
}

// VarsOf reads a stack's variables.
func VarsOf(st *stacks.Stack) *Vars {
	v := &Vars{byName: make(map[string]string, len(st.Variables)), exported: make(map[string]string, len(st.Variables))}
	for _, sv := range st.Variables {
		v.byName[sv.Name] = sv.Value
		v.exported["STACK_VAR_"+strings.ToUpper(sv.Name)] = sv.Value
		if name, ok := strings.CutPrefix(sv.Name, "TF_VAR_"); ok && name != "" {
			if v.tfVars == nil {
				v.tfVars = map[string]string{}
			}
			v.tfVars[name] = sv.Value
		}
		if sv.Sensitive {
			v.secrets = append(v.secrets, sv.Value)
		}
	}
	return v
}

// Lookup finds a variable by its name.
func (v *Vars) Lookup(name string) (string, bool) {
	s, ok := v.byName[name]
	return s, ok
}

// LookupExported finds a variable by the name it has in the unit's
// environment, STACK_VAR_<NAME>.
func (v *Vars) LookupExported(name string) (string, bool) {
	s, ok := v.exported[name]
	return s, ok
}

// TFVars are the variables named TF_VAR_<name>, by input variable name:
// they go to the var file, as env steps' TF_VAR_ values do (terraform-exec
// refuses TF_VAR_ in an engine's environment).
func (v *Vars) TFVars() map[string]string { return v.tfVars }

// Secrets are the values of the sensitive variables.
func (v *Vars) Secrets() []string { return v.secrets }

// All are the variables by name, for the plan's digest.
func (v *Vars) All() map[string]string { return v.byName }
