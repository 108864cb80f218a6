// Package main is strata's command line (docs/architecture.md#cmdstrata):
// the flags, the splitting of argv between strata and the engine, one
// file per command, and the wiring of the packages below it. It reads the
// process's environment and hands it on as a list (runner.Options'
// Environ), and the CI platform through internal/ciplatform; it opens the
// forge (forge) and builds the controls' decision (runner.ControlsFunc)
// for the runner and ci, which import neither.
//
// It decides nothing a package below it owns: what a command means is
// command's, which unit runs when is runner's, what a unit's job does is
// job's, what a CI run is is ci's. It must not run an engine, write the
// state dir or the bucket, or print a unit's output but through them.
package main
