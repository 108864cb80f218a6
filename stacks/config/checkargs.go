package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/subst"
)

// checkStepArgs validates the extra_args of a workflow's init and plan
// steps against the flags strata passes to the engine, so a flag it would
// refuse is reported at its place before anything runs. A `$` reference is
// checked with a stand-in value: its own value is known only at run time.
// Workflows of engines strata does not run keep their own flags.
func checkStepArgs(w Workflow, key string, c *Collector) {
	if w.Terragrunt.Value || w.Cdktf.Value || (w.Engine != nil && w.Engine.Name.Set && w.Engine.Name.Value != "terraform" && w.Engine.Name.Value != "tofu") {
		return
	}
	for phase, steps := range map[string]*[]Step{"plan": w.Plan, "apply": w.Apply} {
		if steps == nil {
			continue
		}
		for i, st := range *steps {
			if len(st.ExtraArgs) == 0 {
				continue
			}
			where := fmt.Sprintf("%s.%s[%d].extra_args", key, phase, i)
			switch st.Type.Value {
			case "init", "plan":
				checkEngineArgs(st.Type.Value, st.ExtraArgs, where, c)
			case "apply":
				c.Warnf(st.ExtraArgs[0].Pos, where, "found %s; an apply step's extra_args never reach the apply of a saved plan, which takes no flags: they are ignored", argsText(st.ExtraArgs))
			}
		}
	}
}

// checkEngineArgs reports the argument of args the engine-argument parser
// refuses, at that argument.
func checkEngineArgs(command string, args []String, where string, c *Collector) {
	values := make([]string, len(args))
	for i, a := range args {
		values[i] = standIn(a.Value)
	}
	_, err := engineargs.Parse(command, values, "/")
	if err == nil {
		return
	}
	at := len(args) - 1
	var ae *engineargs.ArgError
	if errors.As(err, &ae) && ae.Index < len(args) {
		at = ae.Index
	}
	c.Errorf(args[at].Pos, where, "found %q: %v", args[at].Value, err)
}

// standIn replaces ${name} and $name with a value that parses wherever a
// flag's value may stand.
func standIn(s string) string {
	out, _, _ := subst.Expand(s, func(string) (string, bool) { return "1", true })
	return out
}

func argsText(args []String) string {
	vs := make([]string, len(args))
	for i, a := range args {
		vs[i] = a.Value
	}
	return strings.Join(vs, " ")
}
