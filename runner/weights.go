package runner

import (
	"slices"

	"github.com/strata-iac/strata/runstate"
)

// weights are what each unit of the run is expected to take, in
// milliseconds: its last plan job, and for a command that applies its last
// apply job too, as the run state recorded them. A unit with no record
// weighs the median of those with one; when none has one, every unit
// weighs 1 and the longest path counts units (docs/architecture.md#ready-queue).
func (r *runState) weights() map[*unitRun]int64 {
	out := make(map[*unitRun]int64, len(r.units))
	var known []int64
	for _, ur := range r.units {
		us, err := r.sd.ReadUnit(ur.Spec)
		if err != nil || us == nil || us.Took == nil {
			continue
		}
		w := r.tookFor(us.Took)
		if w > 0 {
			out[ur] = w
			known = append(known, w)
		}
	}
	fill := int64(1)
	if len(known) > 0 {
		slices.Sort(known)
		fill = known[len(known)/2]
	}
	for _, ur := range r.units {
		if _, ok := out[ur]; !ok {
			out[ur] = fill
		}
	}
	return out
}

// tookFor is what a unit's recorded jobs weigh in this command.
func (r *runState) tookFor(t *runstate.TookRecord) int64 {
	if r.policy.Applies {
		return t.PlanMS + t.ApplyMS
	}
	return t.PlanMS
}
