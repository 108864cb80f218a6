// Package runner executes units: it builds each engine call of a unit's
// steps (init, workspace, plan, apply, output, validate) as an invocation
// that tests can inspect, runs them through terraform-exec, schedules units
// over the unit DAG with a bounded worker pool as their gates open, keeps
// the run state under .strata/, and writes the JSON report and the Markdown
// summary.
package runner
