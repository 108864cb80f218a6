package ci

import (
	"strconv"

	"github.com/strata-iac/strata/runstate"
)

// The bucket's layout of runs and locks (docs/ci.md#the-state-bucket);
// runstate has the units' records and plans. Every key is built here,
// from names that come from the repository, so each is escaped into the
// plain characters the object store accepts and cannot leave its folder.
const (
	runsFolder  = "runs"  // runs/<id>/...: one CI run
	locksFolder = "locks" // locks/pr/<unit>.json: a pull request's hold on a dirspace
)

func runKey(run string) string          { return runsFolder + "/" + runstate.EscapeSegment(run) }
func manifestKey(run string) string     { return runKey(run) + "/manifest.json" }
func waveKey(run string, w int) string  { return runKey(run) + "/waves/" + strconv.Itoa(w) + ".json" }
func resultKey(run, uk string) string   { return runKey(run) + "/results/" + uk + ".json" }
func resultsPrefix(run string) string   { return runKey(run) + "/results/" }
func appliesPrefix(run string) string   { return runKey(run) + "/applies/" }
func prLockKey(uk string) string        { return locksFolder + "/pr/" + uk + ".json" }
func prLocksPrefix() string             { return locksFolder + "/pr/" }
func applyingKey(run, uk string) string { return applyingPrefix(run) + uk + ".json" }
func applyingPrefix(run string) string  { return runKey(run) + "/applying/" }
func hooksPrefix(run string) string     { return runKey(run) + "/hooks/" }
func jobKey(run string, w, s int) string {
	return runKey(run) + "/jobs/" + strconv.Itoa(w) + "-" + strconv.Itoa(s) + ".json"
}
func hooksKey(run string, w, s int) string {
	return hooksPrefix(run) + strconv.Itoa(w) + "-" + strconv.Itoa(s) + ".json"
}
func applyKey(run, uk, at string) string {
	return appliesPrefix(run) + uk + "/" + runstate.EscapeSegment(at) + ".json"
}
