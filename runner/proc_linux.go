//go:build linux

package runner

import "syscall"

// dieWithParent kills a step when strata dies, as terraform-exec does for
// engines.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
