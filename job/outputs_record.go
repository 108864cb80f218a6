package job

import (
	"context"
	"fmt"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/tfstate"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// readOutputs reads a producer's outputs once, after its last apply in the
// run or as it stands: from the run state when its state is where it was
// when they were last read, else with the engine (output -json, as a step
// of the producer), then recorded (docs/behaviour.md#outputs-without-init).
func (j *job) readOutputs(ctx context.Context) {
	args, stepEnv, err := j.in.unitInit()
	if err != nil {
		j.res.ProducedErr = err
		return
	}
	loc, v, readable, taken := j.recordedOutputs(ctx, args, stepEnv)
	if taken {
		return
	}
	j.res.Produced, _, j.res.ProducedErr = j.engineOutputs(ctx, args, stepEnv)
	if j.res.ProducedErr == nil && readable && loc.Confirm(j.ur.DataDir) == nil {
		// A state strata cannot read, or found where the engine's
		// backend is not, is asked the engine every time.
		j.recordOutputs(v)
	}
}

// unitInit is the init a step runs when the unit's job ran none before
// it (an apply, or a read of a producer's outputs): the init of this
// command when there was one, else the init step of the unit's plan
// workflow, with its extra_args (a backend's -backend-config) and env.
func (in *stepInput) unitInit() (engineargs.InitArgs, map[string]string, error) {
	if in.ur.Inited {
		return in.ur.InitArgs, nil, nil
	}
	if err := in.workflowEnvironment(); err != nil {
		return engineargs.InitArgs{}, nil, err
	}
	st := in.run.initSteps(in.ur)[0]
	ea, env, err := in.forStep(st, report.StepPlan+" step ("+report.StepInit+")", report.StepInit).engineStep(command.Init)
	return ea.Init, env, err
}

// recordedOutputs takes the unit's outputs from the run state when its
// state stands where it did when they were read: the same lineage and
// serial, read without the engine (the local backend's state file, or a
// bucket's object). The read is a step of its own, so the report says
// which it was. It returns the state's location and version, and whether
// strata could read it: the engine's read is recorded at that version.
func (j *job) recordedOutputs(ctx context.Context, args engineargs.InitArgs, stepEnv map[string]string) (loc tfstate.Location, v tfstate.Version, readable, taken bool) {
	started := j.run.Now()
	loc, v, err := tfstate.Probe(ctx, &j.run.states, j.ur.Dir, j.ur.Spec.Workspace, args.BackendConfig, j.in.engineEnv(stepEnv))
	if err != nil {
		return loc, v, false, false
	}
	us, err := j.run.State.ReadUnit(j.ur.Spec)
	if err != nil || us.Outputs == nil || us.Outputs.State != v || us.Outputs.Workspace != j.ur.Spec.Workspace {
		return loc, v, true, false
	}
	for _, out := range us.Outputs.Outputs {
		if out.Sensitive {
			j.ur.Masker.Add(JSONString(out.Value))
		}
	}
	j.res.Produced = us.Outputs.Outputs
	j.res.Steps = append(j.res.Steps, report.StepReport{Name: report.StepOutputRecord, StartedAt: started, FinishedAt: j.run.Now(), OK: true})
	j.run.Console.UnitNote(j.ur.Spec.Name(), fmt.Sprintf("outputs read from the run state: its state (%s) is at serial %d, as when they were read", loc.Backend, v.Serial))
	return loc, v, true, true
}

// recordOutputs keeps the outputs the engine just read with the version
// of the state read before them (a state that moved meanwhile is newer
// than the record says, and is read again next time).
func (j *job) recordOutputs(v tfstate.Version) {
	err := j.run.State.UpdateUnitUnsynced(j.ur.Spec, func(s *runstate.UnitState) {
		s.Outputs = &runstate.OutputsRecord{State: v, Workspace: j.ur.Spec.Workspace, Outputs: j.res.Produced, At: j.run.Now().UTC()}
	})
	if err != nil {
		// What reads the outputs fails with it: a run state that cannot
		// be written is never passed over.
		j.res.ProducedErr = fmt.Errorf("recording the outputs in the run state: %w", err)
	}
}
