package runner

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// console is what people read while a command runs (§8.2 Output). Drop-in
// (one unit): the engine's output streams unchanged. Otherwise each step's
// output is printed as one block when the step ends, every line prefixed
// `[unit] `, never interleaved; on a terminal a live status line per
// running unit stays below the blocks, and without one a line
// `[unit] still <step> (Nm)` appears every StillEvery while a step runs.
type console struct {
	mu         sync.Mutex
	w          io.Writer
	errW       io.Writer // strata's notes, and the engine's stderr in drop-in
	terminal   bool
	dropIn     bool
	stillEvery time.Duration
	now        func() time.Time

	running  []*stepWriter
	drawn    int // status lines currently on screen
	stopTick chan struct{}
}

func newConsole(w, errW io.Writer, terminal, dropIn bool) *console {
	if errW == nil {
		errW = w
	}
	return &console{w: w, errW: errW, terminal: terminal, dropIn: dropIn, stillEvery: time.Minute, now: time.Now}
}

// note prints one line of strata's own: on the error stream in drop-in, so
// the engine's stdout stays clean for pipes.
func (c *console) note(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	if c.dropIn {
		fmt.Fprintln(c.errW, s)
	} else {
		fmt.Fprintln(c.w, s)
	}
	c.drawStatus()
}

// stepWriter collects one step's output. terraform-exec copies the
// engine's stdout and stderr from two goroutines, and outside drop-in both
// land in one stepWriter, so its buffers have a lock of their own.
type stepWriter struct {
	c       *console
	ur      *unitRun
	step    string
	started time.Time
	mu      sync.Mutex // guards buf and partial
	buf     bytes.Buffer
	partial []byte // drop-in: an unfinished line
	done    chan struct{}
	errSide *stepWriter // drop-in: the engine's stderr
	isErr   bool
}

// stderr returns the writer for the engine's stderr: the same block
// normally, the error stream in drop-in.
func (sw *stepWriter) stderr() io.Writer {
	if !sw.c.dropIn {
		return sw
	}
	if sw.errSide == nil {
		sw.errSide = &stepWriter{c: sw.c, ur: sw.ur, step: sw.step, started: sw.started, done: make(chan struct{}), isErr: true}
	}
	return sw.errSide
}

func (sw *stepWriter) target() io.Writer {
	if sw.isErr {
		return sw.c.errW
	}
	return sw.c.w
}

func (c *console) stepWriter(ur *unitRun, step string) *stepWriter {
	sw := &stepWriter{c: c, ur: ur, step: step, started: c.now(), done: make(chan struct{})}
	c.mu.Lock()
	c.running = append(c.running, sw)
	if c.terminal && !c.dropIn {
		c.clearStatus()
		c.drawStatus()
		c.startTicker()
	}
	c.mu.Unlock()
	if !c.terminal && !c.dropIn && c.stillEvery > 0 {
		go sw.still()
	}
	return sw
}

// still reports a long step without a terminal.
func (sw *stepWriter) still() {
	t := time.NewTicker(sw.c.stillEvery)
	defer t.Stop()
	for {
		select {
		case <-sw.done:
			return
		case <-t.C:
			mins := int(sw.c.now().Sub(sw.started).Round(time.Minute) / time.Minute)
			sw.c.note(fmt.Sprintf("[%s] still %s (%dm)", sw.ur.u.Name(), sw.step, mins))
		}
	}
}

func (sw *stepWriter) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.c.dropIn {
		// Stream whole lines, masked, as they come.
		sw.partial = append(sw.partial, p...)
		for {
			i := bytes.IndexByte(sw.partial, '\n')
			if i < 0 {
				break
			}
			line := sw.ur.masker.Mask(string(sw.partial[:i+1]))
			sw.c.mu.Lock()
			sw.ur.output.WriteString(line)
			io.WriteString(sw.target(), line)
			sw.c.mu.Unlock()
			sw.partial = sw.partial[i+1:]
		}
		return len(p), nil
	}
	return sw.buf.Write(p)
}

// Close ends the step: its block is printed.
func (sw *stepWriter) Close() error {
	if sw.errSide != nil {
		sw.errSide.Close()
	}
	close(sw.done)
	sw.mu.Lock()
	defer sw.mu.Unlock()
	c := sw.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range c.running {
		if r == sw {
			c.running = append(c.running[:i], c.running[i+1:]...)
			break
		}
	}
	if c.dropIn {
		if len(sw.partial) > 0 {
			line := sw.ur.masker.Mask(string(sw.partial))
			sw.ur.output.WriteString(line)
			io.WriteString(sw.target(), line+"\n")
		}
		return nil
	}
	c.clearStatus()
	text := sw.ur.masker.Mask(strings.TrimRight(sw.buf.String(), "\n"))
	if sw.step == StepPlan || sw.step == StepApply || sw.step == StepShow {
		sw.ur.output.WriteString(text + "\n")
	}
	if text != "" {
		prefix := "[" + sw.ur.u.Name() + "] "
		var b strings.Builder
		for _, line := range strings.Split(text, "\n") {
			b.WriteString(prefix)
			b.WriteString(line)
			b.WriteByte('\n')
		}
		io.WriteString(c.w, b.String())
	}
	c.drawStatus()
	return nil
}

// clearStatus erases the status lines (terminal only). Callers hold mu.
func (c *console) clearStatus() {
	if !c.terminal || c.dropIn || c.drawn == 0 {
		return
	}
	fmt.Fprintf(c.w, "\x1b[%dA\x1b[J", c.drawn)
	c.drawn = 0
}

// drawStatus prints one line per running step (terminal only). Callers
// hold mu.
func (c *console) drawStatus() {
	if !c.terminal || c.dropIn || len(c.running) == 0 {
		return
	}
	lines := make([]string, 0, len(c.running))
	for _, sw := range c.running {
		lines = append(lines, fmt.Sprintf("  … %s: %s (%s)", sw.ur.u.Name(), sw.step, c.now().Sub(sw.started).Round(time.Second)))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(c.w, l)
	}
	c.drawn = len(lines)
}

// startTicker refreshes the status lines every second while steps run.
// Callers hold mu.
func (c *console) startTicker() {
	if c.stopTick != nil {
		return
	}
	stop := make(chan struct{})
	c.stopTick = stop
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				c.mu.Lock()
				if len(c.running) == 0 {
					c.stopTick = nil
					c.mu.Unlock()
					return
				}
				c.clearStatus()
				c.drawStatus()
				c.mu.Unlock()
			}
		}
	}()
}
