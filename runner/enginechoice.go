package runner

import (
	"fmt"
	"strings"

	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/stacks"
)

// EngineChoice is the engine a unit runs, as its config names it, with
// ${var} in the version substituted from the unit's stack variables, then
// environ. Every command that shows or resolves engines (run, ls, engines
// list and install) asks here, so they all name the same engine.
func EngineChoice(p *stacks.Project, u *stacks.Unit, environ []string) (stacks.EngineChoice, error) {
	c, err := p.EngineFor(u)
	if err != nil || !strings.Contains(c.Version, "$") {
		return c, err
	}
	lookup := job.VariableLookup(job.VarsOf(u.Stack), nil, environ, nil)
	if c.Version, err = job.SubstituteFor(c.Version, "the engine version", u, lookup); err != nil {
		return c, fmt.Errorf("%s: %w", u.Name(), err)
	}
	return c, nil
}
