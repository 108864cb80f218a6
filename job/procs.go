package job

import (
	"os"
	"os/exec"
	"sync"
)

// procGroups are the process groups of the run steps now running, so a
// second interrupt can kill each whole group, grandchildren included.
type Procs struct {
	mu   sync.Mutex
	cmds map[*exec.Cmd]bool
}

func (g *Procs) add(cmd *exec.Cmd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cmds == nil {
		g.cmds = map[*exec.Cmd]bool{}
	}
	g.cmds[cmd] = true
}

func (g *Procs) remove(cmd *exec.Cmd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.cmds, cmd)
}

// Kill kills the whole process group of every running step: run
// steps strata started, and engines, which terraform-exec starts in groups
// of their own (so their providers and provisioners go too).
func (g *Procs) Kill() {
	g.mu.Lock()
	for cmd := range g.cmds {
		killGroup(cmd)
	}
	g.mu.Unlock()
	killChildGroups()
}

// interruptProcess sends one SIGINT to the command's process alone.
func interruptProcess(cmd *exec.Cmd) { cmd.Process.Signal(os.Interrupt) }
