package job

import (
	"context"
	"fmt"

	"github.com/strata-iac/strata/internal/diagnostics"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
)

// Prepare readies a unit for an engine command passed through in its dir
// (docs/behaviour.md#passthrough), as its own jobs would: init first when
// init says so and the unit needs one, then its workspace.
func (r *Run) Prepare(ctx context.Context, ur *Unit, init bool) error {
	j := newJob(r, ur)
	if init && !j.init(ctx, false, false, engineargs.InitArgs{}, nil) {
		return fmt.Errorf("%s: init: %v", ur.Spec.Name(), diagnostics.FirstLine(ErrorText(j.res.Err)))
	}
	if !j.workspace(ctx, false) {
		return fmt.Errorf("%s: selecting workspace %s: %v", ur.Spec.Name(), ur.Spec.Workspace, diagnostics.FirstLine(ErrorText(j.res.Err)))
	}
	return nil
}

// WriteVarFile writes the var file the unit's plan would get, from its
// InputVals and the TF_VAR_ values, for one engine call passed through: it
// returns the file's path ("" when there is nothing to write) and the
// function that removes it.
func (r *Run) WriteVarFile(ur *Unit) (string, func(), error) {
	j := newJob(r, ur)
	content, err := j.in.prepareInputs()
	if err != nil {
		return "", func() {}, err
	}
	return j.in.writeVarFile(content)
}

// ReadOutputs reads a unit's outputs as they stand (init when needed, its
// workspace, output -json) outside any of its jobs: a producer outside the
// run, or one an earlier CI job settled. The result holds the outputs
// (Produced, ProducedErr) and the steps that read them.
func (r *Run) ReadOutputs(ctx context.Context, ur *Unit) Result {
	j := newJob(r, ur)
	j.readOutputs(ctx)
	return j.res
}

// AppliedAsNow reports whether the unit's journal shows it applied at the
// digest it would plan with now, with its InputVals as they are set
// (docs/behaviour.md#saved-plans): a gate outside the run, or a reader
// whose inputs did not change.
func (r *Run) AppliedAsNow(ur *Unit) bool {
	j := newJob(r, ur)
	if _, err := j.planDigest(r.workflowSteps(ur, report.StepPlan)); err != nil {
		return false
	}
	us, err := r.State.ReadUnit(ur.Spec)
	return err == nil && us.Apply != nil && us.Apply.Result == report.StatusApplied && us.Apply.Digest == j.in.memo.digest
}
