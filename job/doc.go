// Package job runs one job of one unit (docs/architecture.md#job,
// docs/architecture.md#a-units-job): given the run's fixed context as one
// value (Run: the project, the command's policy and settings, the state
// dir, the console, the executor, the process groups) and the unit's
// working state (Unit), it runs the unit's steps (init, workspace, plan,
// apply, output, validate, run, env and tool steps, hooks), each engine
// call as an inspectable invocation through terraform-exec, writes the
// unit's journal and saved plan, and returns a Result. Each step returns
// what it did as a value, which the job folds into the Result; what
// follows an apply's try (a retry, a stale plan made again) the job
// decides from it.
//
// It must not decide what a unit's end means for other units, schedule
// anything, ask anyone anything, or print but through the console; it
// never imports runner, and never reaches back into the coordinator.
package job
