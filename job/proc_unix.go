//go:build unix

package job

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts a run step in its own process group, so strata can
// interrupt it and everything it started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// signalGroup sends sig to the process group of a started command.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	syscall.Kill(-cmd.Process.Pid, sig)
}

func interruptGroup(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGINT) }
func killGroup(cmd *exec.Cmd)      { signalGroup(cmd, syscall.SIGKILL) }
