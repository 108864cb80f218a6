//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time the process has used, user and system: on
// a machine other processes keep busy, a benchmark's CPU time moves less
// than its wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
