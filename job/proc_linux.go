//go:build linux

package job

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dieWithParent kills a step when strata dies, as terraform-exec does for
// engines.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// killChildGroups SIGKILLs the process group of each child of strata that
// leads one: terraform-exec gives every engine its own group but does not
// say which, so the children are found in /proc.
func killChildGroups() {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
		if ppid == self && pgrp == pid && pid > 1 {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}
