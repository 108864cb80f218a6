// Package runner is the coordinator of one command over one run
// (docs/architecture.md#runner, docs/architecture.md#the-scheduler): it
// decides the run's members and their roles, sets each unit up (its
// paths, environment, stack variables, masker), builds the unit DAG's
// schedule, hands each ready unit's job to package job through a bounded
// worker pool as its gates open, decides what a unit's end means for the
// others (planning through a plan, approval waves, failure and skip
// chains, data between units), asks the controls' decision it is given
// (ControlsFunc), and assembles the command's report.
//
// It must not run an engine call or write a unit's journal itself (both
// are a job's), open the forge or import controls or forge, or write the
// report's files (cmd/strata does).
package runner
