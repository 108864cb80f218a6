//go:build unix && !linux

package runner

import "syscall"

// dieWithParent has no equivalent outside Linux.
func dieWithParent(*syscall.SysProcAttr) {}
