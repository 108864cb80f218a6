//go:build unix

package report

import "syscall"

func cpuNow() *CPUReport {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return nil
	}
	return &CPUReport{OwnMS: rusageMS(&self), ChildrenMS: rusageMS(&children)}
}

// rusageMS is the user and system time of r, in milliseconds.
func rusageMS(r *syscall.Rusage) int64 {
	return (r.Utime.Nano() + r.Stime.Nano()) / 1e6
}
