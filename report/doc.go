// Package report is the outcome of a command and every way it is shown
// (docs/architecture.md#report): the Report and its units' and stacks'
// reports, the unit statuses, the changes, the step names, the exit code
// by the command's policy, the final table, the Markdown summary, the
// pull request comment cut to the forge's limit, the graph page, and what
// the CI says of the run (CIReport, from internal/ciplatform).
//
// It renders what it is given and writes only the file it is asked to
// (WriteJSON). It must not read the state dir, the bucket or the
// environment beyond the CI's it is handed, run anything, or decide a
// unit's outcome.
package report
