//go:build unix && !linux

package job

import "syscall"

// dieWithParent has no equivalent outside Linux.
func dieWithParent(*syscall.SysProcAttr) {}

// killChildGroups: outside Linux only the run steps' groups are known;
// engines end with strata's exit.
func killChildGroups() {}
