package runner

import (
	"os/exec"
	"sync"
)

// procGroups are the process groups of the run steps now running, so a
// second interrupt can kill each whole group, grandchildren included.
type procGroups struct {
	mu   sync.Mutex
	cmds map[*exec.Cmd]bool
}

func (g *procGroups) add(cmd *exec.Cmd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cmds == nil {
		g.cmds = map[*exec.Cmd]bool{}
	}
	g.cmds[cmd] = true
}

func (g *procGroups) remove(cmd *exec.Cmd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.cmds, cmd)
}

// killSteps kills the whole process group of every running step: run
// steps strata started, and engines, which terraform-exec starts in groups
// of their own (so their providers and provisioners go too).
func (r *runState) killSteps() {
	r.procs.mu.Lock()
	for cmd := range r.procs.cmds {
		killGroup(cmd)
	}
	r.procs.mu.Unlock()
	killChildGroups()
}
