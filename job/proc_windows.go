//go:build windows

package job

import (
	"os"
	"os/exec"
)

// ownProcessGroup: Windows steps stay in strata's console group.
func ownProcessGroup(*exec.Cmd) {}

func interruptGroup(cmd *exec.Cmd) { cmd.Process.Signal(os.Interrupt) }
func killGroup(cmd *exec.Cmd)      { cmd.Process.Kill() }

// killChildGroups: Windows has no process groups to kill.
func killChildGroups() {}
