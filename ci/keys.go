package ci

import (
	"fmt"
	"strconv"
	"strings"
)

// The bucket's layout (docs/ci.md#the-state-bucket). Every key is built here,
// from names that come from the repository, so each is escaped into the
// plain characters the object store accepts and cannot leave its folder.
const (
	unitsFolder = "units" // units/<unit>.json: the long-lived run state of a unit
	plansFolder = "plans" // plans/<unit>/<digest>.tfplan: saved plans by content digest
	runsFolder  = "runs"  // runs/<id>/...: one CI run
	locksFolder = "locks" // locks/pr/<unit>.json: a pull request's hold on a dirspace
)

// escapeSegment turns one name into a key segment: letters, digits, '-',
// '_' and '.' stay; every other byte becomes =XX; a name of dots only is
// escaped whole, so "." and ".." never appear as segments.
func escapeSegment(s string) string {
	var b strings.Builder
	dots := strings.Trim(s, ".") == ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		plain := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && !dots
		if plain {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "=%02X", c)
	}
	if b.Len() == 0 {
		return "="
	}
	return b.String()
}

// unitKey is a unit's name in the bucket: its dir's segments, each
// escaped, then workspace#stack.
func unitKey(dir, workspace, stack string) string {
	var segs []string
	for _, s := range strings.Split(dir, "/") {
		segs = append(segs, escapeSegment(s))
	}
	return strings.Join(segs, "/") + "/" + escapeSegment(workspace) + "#" + escapeSegment(stack)
}

func unitStateKey(uk string) string { return unitsFolder + "/" + uk + ".json" }

// planKey is a saved plan by unit and content digest ("sha256:<hex>").
func planKey(uk, digest string) string {
	return plansFolder + "/" + uk + "/" + escapeSegment(strings.ReplaceAll(digest, ":", "-")) + ".tfplan"
}

func runKey(run string) string          { return runsFolder + "/" + escapeSegment(run) }
func manifestKey(run string) string     { return runKey(run) + "/manifest.json" }
func waveKey(run string, w int) string  { return runKey(run) + "/waves/" + strconv.Itoa(w) + ".json" }
func resultKey(run, uk string) string   { return runKey(run) + "/results/" + uk + ".json" }
func resultsPrefix(run string) string   { return runKey(run) + "/results/" }
func appliesPrefix(run string) string   { return runKey(run) + "/applies/" }
func prLockKey(uk string) string        { return locksFolder + "/pr/" + uk + ".json" }
func prLocksPrefix() string             { return locksFolder + "/pr/" }
func applyingKey(run, uk string) string { return applyingPrefix(run) + uk + ".json" }
func applyingPrefix(run string) string  { return runKey(run) + "/applying/" }
func applyKey(run, uk, at string) string {
	return appliesPrefix(run) + uk + "/" + escapeSegment(at) + ".json"
}
