package job

import (
	"context"

	"github.com/strata-iac/strata/report"
)

// Show is no step of a workflow: a plan step reads its saved plan's JSON
// with it, and an apply that reuses a saved plan shows it as people read
// it (docs/architecture.md#a-units-job).

// showInvocation is `show -json` of the unit's saved plan, or `show` as
// people read it (text), with own over the unit's environment.
func (in *stepInput) showInvocation(own map[string]string, text bool) invocation {
	return in.invocation(report.StepShow, own, &showCall{File: in.PlanFile, Text: text})
}

// showJSON runs `show -json` of the unit's saved plan, as a step of its
// own.
func (in *stepInput) showJSON(ctx context.Context, env map[string]string) ([]byte, error) {
	o, err := in.step(ctx, report.StepShow, in.showInvocation(env, false), true)
	return o.PlanJSON, err
}

// showText shows the unit's saved plan as people read it, as a step of
// its own.
func (in *stepInput) showText(ctx context.Context, env map[string]string) error {
	_, err := in.step(ctx, report.StepShow, in.showInvocation(env, true), true)
	return err
}
