//go:build !unix

package testenv

import "time"

// CPUTime returns 0: the process's CPU time is read on Unix only.
func CPUTime() time.Duration { return 0 }
