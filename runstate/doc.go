// Package runstate is the run's record (docs/architecture.md#runstate,
// docs/behaviour.md#run-state): the state dir under .strata/ and its
// per-unit journals (init, plan, apply and deployed records) written
// atomically, the deleted module dirs restored for a command, and the
// same records in a state bucket, mirrored with compare-and-swap and
// merged by its rules (docs/ci.md#run-state-in-the-bucket).
//
// It keeps records, reads them back and puts deleted dirs back. It must
// not run an engine, decide what a command does with a record, or know of
// CI runs: the keys of a run under runs/ and locks/ are package ci's.
package runstate
