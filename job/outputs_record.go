package job

import (
	"fmt"

	"github.com/strata-iac/strata/internal/tfstate"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// recordedOutputs takes the unit's outputs from the run state when its
// state stands where it did when they were read: the same lineage and
// serial, read without the engine (the local backend's state file). The
// read is a step of its own, so the report says which it was. It returns
// the state's version, and whether strata could read it: the engine's
// read is recorded at that version.
func (j *job) recordedOutputs() (v tfstate.Version, readable, taken bool) {
	started := j.run.Now()
	v, err := tfstate.Probe(j.ur.Dir, j.ur.Spec.Workspace)
	if err != nil {
		return v, false, false
	}
	us, err := j.run.State.ReadUnit(j.ur.Spec)
	if err != nil || us.Outputs == nil || us.Outputs.State != v || us.Outputs.Workspace != j.ur.Spec.Workspace {
		return v, true, false
	}
	for _, out := range us.Outputs.Outputs {
		if out.Sensitive {
			j.ur.Masker.Add(JSONString(out.Value))
		}
	}
	j.res.Produced = us.Outputs.Outputs
	j.res.Steps = append(j.res.Steps, report.StepReport{Name: report.StepOutputRecord, StartedAt: started, FinishedAt: j.run.Now(), OK: true})
	j.run.Console.Note(fmt.Sprintf("[%s] outputs read from the run state: its state is at serial %d, as when they were read", j.ur.Spec.Name(), v.Serial))
	return v, true, true
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
