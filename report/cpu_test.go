//go:build unix

package report

import (
	"os/exec"
	"testing"
)

// TestSetCPU: the report counts the CPU of a process the command waited
// for as its children's, apart from its own.
func TestSetCPU(t *testing.T) {
	var rep Report
	rep.SetCPU()
	before := rep.CPU
	if before == nil {
		t.Fatal("no CPU time on a system that keeps it")
	}
	if err := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	rep.SetCPU()
	if rep.CPU.ChildrenMS <= before.ChildrenMS {
		t.Errorf("children's CPU %d ms after a busy child, %d before", rep.CPU.ChildrenMS, before.ChildrenMS)
	}
	if rep.CPU.OwnMS < before.OwnMS {
		t.Errorf("own CPU went back: %d ms after %d", rep.CPU.OwnMS, before.OwnMS)
	}
}
