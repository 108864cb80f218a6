package report

import "sort"

// ScheduleReport is how long a run took against the bound its DAG sets:
// the longest path through it, each unit weighing what its jobs took in
// this run (docs/architecture.md#ready-queue).
type ScheduleReport struct {
	CriticalPathMS int64 `json:"critical_path_ms"`
	MakespanMS     int64 `json:"makespan_ms"`
}

// ProducerRead is how a run read the outputs of a unit outside it: From
// is "run state", their record, its state unchanged, or "engine" (init
// when needed, output -json); Error when they could not be read.
type ProducerRead struct {
	Unit  string `json:"unit"`
	From  string `json:"from"`
	Error string `json:"error,omitempty"`
}

// SetSchedule sets the run's schedule: its critical path (criticalPath,
// over the units in DAG order) against its makespan; none when no unit
// ran a step.
func (rep *Report) SetSchedule() {
	units := append([]*UnitReport(nil), rep.Units...)
	sort.SliceStable(units, func(i, j int) bool { return units[i].Order < units[j].Order })
	ran := false
	for _, u := range units {
		ran = ran || len(u.Steps) > 0
	}
	if !ran {
		return
	}
	_, critical := criticalPath(units)
	rep.Schedule = &ScheduleReport{CriticalPathMS: critical.Milliseconds(), MakespanMS: rep.FinishedAt.Sub(rep.StartedAt).Milliseconds()}
}
