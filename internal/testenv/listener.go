package testenv

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// listensOn reports whether process pid holds a listening TCP socket on
// port, so that a server a test started is not mistaken for another
// that took the same free port first. On Linux it matches the process's
// socket inodes against /proc/net/tcp and tcp6; elsewhere it cannot
// tell, and says true.
func listensOn(pid, port int) bool {
	if runtime.GOOS != "linux" {
		return true
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	own := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			own[strings.TrimSuffix(inode, "]")] = true
		}
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if listening(table, port, own) {
			return true
		}
	}
	return false
}

// listening reports whether a /proc/net/tcp table has a socket listening
// on port whose inode is one of own.
func listening(table string, port int, own map[string]bool) bool {
	f, err := os.Open(table)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if ok && err == nil && int(p) == port && own[fields[9]] {
			return true
		}
	}
	return false
}

// waitStopped waits until every thread of process pid is stopped, since
// kill(2) returns before a SIGSTOP has reached a thread that is running
// on another core, and a request sent in that window is still answered.
// Elsewhere than on Linux it cannot tell, and returns at once.
func waitStopped(pid int, budget time.Duration) error {
	if runtime.GOOS != "linux" {
		return nil
	}
	deadline := time.Now().Add(budget)
	for {
		running, err := runningThreads(pid)
		if err != nil || running == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d: %d threads still running %s after SIGSTOP", pid, running, budget)
		}
		time.Sleep(time.Millisecond)
	}
}

// runningThreads counts the threads of pid whose state in
// /proc/PID/task/TID/stat is not stopped ("T") or traced ("t").
func runningThreads(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	running := 0
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		// The state follows the command name, which is in parentheses
		// and may hold spaces: "TID (comm) S …".
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 || i+2 >= len(stat) {
			return 0, fmt.Errorf("%s/%s/stat: unexpected %q", dir, task.Name(), stat)
		}
		if state := stat[i+2]; state != 'T' && state != 't' {
			running++
		}
	}
	return running, nil
}
