// Package diagnostics reads terraform's and tofu's diagnostics (severity,
// summary, file, line, detail) out of the text the engine printed, for
// the console's annotations and the coordinator's failure reasons
// (docs/architecture.md#internal).
//
// It parses text it is given and nothing else: it must not run an
// engine, read a file, print, or decide what a diagnostic means for a
// unit. It imports nothing of strata's.
package diagnostics
