// Package diskspace tells a full disk from the errors it causes. An
// engine on a full disk seldom says so: terraform writes a truncated saved
// plan without an error, and the next step fails with "Failed to read the
// given file as a state or plan file". A unit that fails while a dir it
// writes to has no room left says that first
// (docs/behaviour.md#faults).
package diskspace

import (
	"fmt"
	"strings"
)

// Low is the free space under which a file system counts as full: less
// than one saved plan of a small root module, or a provider's lock file.
const Low = 1 << 20

// enospc is the text of ENOSPC, as Go and the engines print it.
const enospc = "no space left on device"

// Full is the first of dirs whose file system is full, with its free
// space; ok is false when none is (or none can be asked, as on Windows).
// A dir that does not exist is skipped.
func Full(dirs ...string) (dir string, freeBytes uint64, ok bool) {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if n, known := free(d); known && n < Low {
			return d, n, true
		}
	}
	return "", 0, false
}

// Reason is why a step failed on a full disk, to stand before its own
// reason; "" when errText does not say ENOSPC and no dir is full.
func Reason(errText string, dirs ...string) string {
	if d, n, ok := Full(dirs...); ok {
		return fmt.Sprintf("the disk is full (%s free at %s)", size(n), d)
	}
	if strings.Contains(strings.ToLower(errText), enospc) {
		return "the disk is full (" + enospc + ")"
	}
	return ""
}

// size is n bytes as people read it.
func size(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
