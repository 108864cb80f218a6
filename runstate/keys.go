package runstate

import (
	"fmt"
	"strings"
)

// The bucket's layout of units (docs/ci.md#the-state-bucket): their
// records and saved plans. Every key is built here, from names that come
// from the repository, so each is escaped into the plain characters the
// object store accepts and cannot leave its folder.
const (
	unitsFolder = "units" // units/<unit>.json: the long-lived run state of a unit
	plansFolder = "plans" // plans/<unit>/<digest>.tfplan: saved plans by content digest
)

// EscapeSegment turns one name into a key segment: letters, digits, '-',
// '_' and '.' stay; every other byte becomes =XX; a name of dots only is
// escaped whole, so "." and ".." never appear as segments.
func EscapeSegment(s string) string {
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

// KeyOf is a unit's name in the bucket: its dir's segments, each
// escaped, then workspace#stack.
func KeyOf(dir, workspace, stack string) string {
	var segs []string
	for _, s := range strings.Split(dir, "/") {
		segs = append(segs, EscapeSegment(s))
	}
	return strings.Join(segs, "/") + "/" + EscapeSegment(workspace) + "#" + EscapeSegment(stack)
}

func StateKey(uk string) string { return unitsFolder + "/" + uk + ".json" }

// PlanKey is a saved plan by unit and content digest ("sha256:<hex>").
func PlanKey(uk, digest string) string {
	return plansFolder + "/" + uk + "/" + EscapeSegment(strings.ReplaceAll(digest, ":", "-")) + ".tfplan"
}
