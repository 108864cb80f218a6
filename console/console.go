package console

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/strata-iac/strata/internal/ansi"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/report"
)

// Console is what people read while a command runs
// (docs/behaviour.md#steps-of-a-unit, Output). Drop-in (one unit): the
// engine's output streams unchanged. Otherwise each step's output is
// printed as one block when the step ends, every line prefixed `[unit] `,
// never interleaved; on a terminal a live status line per running unit
// stays below the blocks, and without one a line `[unit] still <step>
// (Nm)` appears every StillEvery while a step runs.
//
// In CI (GitHub Actions or GitLab CI, not on a terminal) each block is a
// collapsible group, and one step at a time streams: its lines go out as
// they come, inside its group, while the others collect theirs. Anything
// else printed meanwhile (a note, another step's finished block) first
// closes the streaming step's group, which reopens, "(continued)", at its
// next line; so a group only ever holds one unit's lines. When the
// streaming step ends, the running step that started first takes over:
// what it collected so far is printed and the rest streams.
//
// A warning box the engine prints in every call (terraform's "Unable to
// open CLI configuration file"), or that several units print alike, is
// printed once per run (Warn).
type Console struct {
	mu       sync.Mutex
	w        io.Writer
	errW     io.Writer // strata's notes, and the engine's stderr in drop-in
	terminal bool
	dropIn   bool
	// StillEvery is how often a long step says it is still running
	// without a terminal (never when zero); Now is the clock.
	StillEvery time.Duration
	Now        func() time.Time
	// Own is the unit of a drop-in run, which UnitNote does not name.
	Own string
	// Colour shows the engine's colour; without it, colour the engine
	// printed is stripped. What a unit's log keeps is always plain
	// (docs/behaviour.md#colour).
	Colour bool

	running  []*StepWriter
	drawn    int // status lines currently on screen
	stopTick chan struct{}
	// streams: every step's lines go out as they come (--output stream).
	streams bool
	// full: every line of init and plan at a terminal (Full).
	full bool
	// total and done count the run's units, for the status block and
	// the line each finished unit gets.
	total, done int

	// warnings are the run's warnings, each printed once (Warn), by
	// text; warningOrder in the order printed.
	warnings     map[string]*Warning
	warningOrder []*Warning
	live         *StepWriter // CI: the step that streams
	open         *StepWriter // CI: the step whose group is open
	sections     int         // GitLab: sections opened, for unique names
	// failures keeps, per unit and step, the last block of that step that
	// has an Error diagnostic: a failed unit's annotation points at it.
	failures map[*Unit]map[string]string
}

// New is a console writing to w, and strata's notes in drop-in to errW
// (w when nil).
func New(w, errW io.Writer, terminal, dropIn bool) *Console {
	if errW == nil {
		errW = w
	}
	return &Console{w: w, errW: errW, terminal: terminal, dropIn: dropIn, StillEvery: time.Minute, Now: time.Now,
		warnings: map[string]*Warning{}, failures: map[*Unit]map[string]string{}}
}

// Note prints one line of strata's own: on the error stream in drop-in, so
// the engine's stdout stays clean for pipes.
func (c *Console) Note(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	c.closeGroup()
	if c.dropIn {
		fmt.Fprintln(c.errW, s)
	} else {
		fmt.Fprintln(c.w, s)
	}
	c.drawStatus()
}

// UnitNote prints a note about a unit, `[unit] ` before it; in drop-in,
// a note about the run's own unit names none, as the engine's output does
// not (docs/behaviour.md#scope).
func (c *Console) UnitNote(unit, s string) {
	if !c.dropIn || unit != c.Own {
		s = "[" + unit + "] " + s
	}
	c.Note(s)
}

// StepWriter collects one step's output. terraform-exec copies the
// engine's stdout and stderr from two goroutines. In drop-in each stream
// has its StepWriter, guarded by its mu; otherwise both land in one
// StepWriter, each through a lineSplitter of its own, guarded by the
// console's mu.
type StepWriter struct {
	c       *Console
	ur      *Unit
	step    string
	started time.Time
	done    chan struct{}

	// Drop-in.
	mu      sync.Mutex // guards partial
	partial lineBuf    // an unfinished line
	errSide *StepWriter
	isErr   bool

	// Otherwise, guarded by c.mu.
	ci       ciplatform.Platform
	stream   bool         // CI: lines may go out as they come
	out, err lineSplitter // stdout, stderr
	raw      []string     // every line as the engine printed it, for the summary
	pending  []string     // lines not printed yet, masked when printed
	blanks   int          // blank lines held until something follows them
	printed  bool         // a line of this step is out
	groups   int          // CI: groups this step opened
	section  string       // GitLab: the open section's name
	closed   bool
}

// Stderr returns the writer for the engine's stderr: the same block
// normally, the error stream in drop-in.
func (sw *StepWriter) Stderr() io.Writer {
	if !sw.c.dropIn {
		return stderrSide{sw}
	}
	if sw.errSide == nil {
		sw.errSide = &StepWriter{c: sw.c, ur: sw.ur, step: sw.step, started: sw.started, done: make(chan struct{}), isErr: true}
	}
	return sw.errSide
}

func (sw *StepWriter) target() io.Writer {
	if sw.isErr {
		return sw.c.errW
	}
	return sw.c.w
}

func (c *Console) Step(ur *Unit, step string) *StepWriter {
	sw := &StepWriter{c: c, ur: ur, step: step, started: c.Now(), done: make(chan struct{})}
	switch {
	case c.dropIn:
	case c.streams:
		// A plan's lines wait for its end: strata reads the saved plan
		// for the values it marks sensitive before they are printed
		// (docs/behaviour.md#what-is-masked).
		sw.stream = step != report.StepPlan
	case !c.terminal:
		sw.ci = ur.Service
		sw.stream = sw.ci != ciplatform.None && step != report.StepPlan
	}
	c.mu.Lock()
	c.running = append(c.running, sw)
	if c.showsStatus() {
		c.clearStatus()
		c.drawStatus()
		c.startTicker()
	}
	if sw.stream && c.live == nil && !c.streams {
		c.live = sw
	}
	c.mu.Unlock()
	if !c.terminal && !c.dropIn && c.StillEvery > 0 {
		go sw.still()
	}
	return sw
}

// still reports a long step without a terminal.
func (sw *StepWriter) still() {
	t := time.NewTicker(sw.c.StillEvery)
	defer t.Stop()
	for {
		select {
		case <-sw.done:
			return
		case <-t.C:
			mins := int(sw.c.Now().Sub(sw.started).Round(time.Minute) / time.Minute)
			sw.c.UnitNote(sw.ur.Name, fmt.Sprintf("still %s (%dm)", sw.step, mins))
		}
	}
}

func (sw *StepWriter) Write(p []byte) (int, error) {
	if !sw.c.dropIn {
		return sw.write(&sw.out, p)
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	// Stream whole lines, masked, as they come.
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			sw.partial.add(p)
			break
		}
		sw.partial.add(p[:i])
		p = p[i+1:]
		raw := sw.partial.take() + "\n"
		sw.c.mu.Lock()
		sw.ur.output.WriteString(ansi.Strip(raw))
		io.WriteString(sw.target(), sw.c.shown(sw.destroyWords(raw), sw.ur.Masker.Mask))
		sw.c.mu.Unlock()
	}
	return n, nil
}

// stderrSide is the engine's stderr into a step's block.
type stderrSide struct{ sw *StepWriter }

func (s stderrSide) Write(p []byte) (int, error) { return s.sw.write(&s.sw.err, p) }

func (sw *StepWriter) write(ls *lineSplitter, p []byte) (int, error) {
	c := sw.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if sw.closed {
		return len(p), nil
	}
	ls.write(p, sw.take)
	return len(p), nil
}

// take receives whole lines from a stream: one line, or a box with the
// line that introduces it, each standing alone in colour (lineSplitter).
// What is kept and read of them is plain. Callers hold c.mu.
func (sw *StepWriter) take(lines []string) {
	first := len(sw.raw)
	for _, l := range lines {
		sw.raw = append(sw.raw, ansi.Strip(l))
	}
	plain := sw.raw[first:]
	if len(lines) == 1 {
		// One line is never a box (warningBox): nothing to mask for it.
		if strings.HasPrefix(plain[0], "Warning: ") {
			sw.c.unboxed(sw.ur.Name, plain[0])
		}
		sw.put(lines[0], plain[0])
		return
	}
	masked := make([]string, len(lines))
	for i, l := range plain {
		masked[i] = sw.ur.Masker.MaskLine(l)
	}
	if key, ok := warningBox(masked); ok {
		w, first := sw.c.raise(key, []string{sw.ur.Name})
		if !first {
			return
		}
		w.Shown = 1
	}
	// Lines are masked when printed, with every secret known by then: a
	// plan's lines wait until its JSON has given what it marks sensitive.
	for i, l := range lines {
		sw.put(l, plain[i])
	}
}

// put queues a line (l as shown, plain without its colour), or prints it
// when the step streams now.
// Blank lines wait for what follows them: a block never starts or ends
// with one, and a dropped warning leaves none behind at the start.
// Callers hold c.mu.
func (sw *StepWriter) put(l, plain string) {
	if strings.TrimSpace(plain) == "" {
		if sw.printed || len(sw.pending) > 0 {
			sw.blanks++
		}
		return
	}
	for ; sw.blanks > 0; sw.blanks-- {
		sw.pending = append(sw.pending, "")
	}
	sw.pending = append(sw.pending, l)
	switch {
	case sw.c.live == sw:
		sw.c.flushLive()
	case sw.c.streams && sw.stream:
		sw.c.printLines(sw, sw.pending)
		sw.pending = nil
	}
}

// flushLive prints what the streaming step has pending, in its group.
// Callers hold c.mu.
func (c *Console) flushLive() {
	sw := c.live
	if sw == nil || len(sw.pending) == 0 {
		return
	}
	if c.open != sw {
		c.closeGroup()
		c.openGroup(sw)
	}
	c.printLines(sw, sw.pending)
	sw.pending = nil
}

func (c *Console) printLines(sw *StepWriter, lines []string) {
	c.printUnitLines(sw.ur, lines)
	sw.printed = true
}

// printUnitLines prints a unit's lines, `[unit] ` before each, masked
// with what the unit's masker knows by now. Callers hold c.mu.
func (c *Console) printUnitLines(ur *Unit, lines []string) {
	prefix := "[" + ur.Name + "] "
	var b strings.Builder
	for _, line := range lines {
		b.WriteString(prefix)
		b.WriteString(c.shown(line, ur.Masker.MaskLine))
		b.WriteByte('\n')
	}
	io.WriteString(c.w, b.String())
}

// sectionName is what a GitLab section name may not hold.
var sectionName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// Close ends the step: its block is printed.
func (sw *StepWriter) Close() error {
	if sw.errSide != nil {
		sw.errSide.Close()
	}
	close(sw.done)
	c := sw.c
	if c.dropIn {
		sw.mu.Lock()
		defer sw.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range c.running {
		if r == sw {
			c.running = append(c.running[:i], c.running[i+1:]...)
			break
		}
	}
	if c.dropIn {
		if !sw.partial.empty() {
			raw := sw.partial.take()
			sw.ur.output.WriteString(ansi.Strip(raw))
			io.WriteString(sw.target(), c.shown(raw, sw.ur.Masker.Mask)+"\n")
		}
		return nil
	}
	sw.out.flush(sw.take)
	sw.err.flush(sw.take)
	sw.closed = true
	raw := strings.TrimRight(strings.Join(sw.raw, "\n"), "\n")
	if sw.step == report.StepPlan || sw.step == report.StepApply || sw.step == report.StepShow {
		// Kept as printed; the report masks it with every secret known
		// by then (docs/behaviour.md#what-is-masked).
		sw.ur.output.WriteString(raw + "\n")
	}
	// Masking only takes text away: output that does not say Error is
	// not masked to find out that it does not.
	if strings.Contains(raw, "Error: ") {
		if text := sw.ur.Masker.Mask(raw); strings.Contains(text, "Error: ") {
			if c.failures[sw.ur] == nil {
				c.failures[sw.ur] = map[string]string{}
			}
			c.failures[sw.ur][sw.step] = text
		}
	}
	c.clearStatus()
	if c.live == sw {
		c.flushLive()
		if c.open == sw {
			c.closeGroup()
		}
		c.live = nil
		c.handOver()
	} else if len(sw.pending) > 0 && c.showsStatus() && sw.ur.InJobs {
		if !c.full {
			sw.pending = folded(sw.step, raw, sw.pending)
		}
		sw.ur.held = append(sw.ur.held, sw.pending...)
		sw.pending = nil
	} else if len(sw.pending) > 0 {
		c.closeGroup()
		c.openGroup(sw)
		c.printLines(sw, sw.pending)
		sw.pending = nil
		c.closeGroup()
	}
	c.drawStatus()
	return nil
}

// handOver lets the running step that started first stream next: what it
// has collected is printed now. Callers hold c.mu.
func (c *Console) handOver() {
	var next *StepWriter
	for _, sw := range c.running {
		if sw.stream && (next == nil || sw.started.Before(next.started)) {
			next = sw
		}
	}
	c.live = next
	c.flushLive()
}

// maxAnnotations bounds a unit's annotations: GitHub shows ten errors per
// step anyway.
const maxAnnotations = 10

// Unit is what the console knows of one unit: its name, the CI service
// its environment names, what it masks, and everything the engine printed
// for it, kept unmasked until the summary asks (Log).
type Unit struct {
	Name    string
	Service ciplatform.Platform
	Masker  *Masker
	// Destroys: the unit's command destroys, so in drop-in its apply ends
	// with terraform destroy's words (destroyWords).
	Destroys bool
	output   strings.Builder
	// InJobs: the unit's steps run in the jobs of a run, each of which
	// ends with JobDone (or the unit with UnitDone). At a terminal their
	// lines are held (held) until then; a unit outside the run's jobs (a
	// hook, a producer read as it stands) prints each step as it ends.
	InJobs bool
	// held are the lines of the unit's finished steps, guarded by c.mu.
	held []string
}

// Log is the unit's whole output, masked with what the masker knows by
// now: a value a later step marked sensitive is masked in the earlier
// steps' lines too.
func (u *Unit) Log() string {
	if u == nil {
		return ""
	}
	return u.Masker.Mask(u.output.String())
}

// applyDestroyed is the closing line of an apply whose plan only
// destroys, after any colour codes.
var applyDestroyed = regexp.MustCompile(`^((?:\x1b\[[0-9;]*m)*)Apply complete! Resources: 0 added, 0 changed, (\d+) destroyed\.`)

// destroyWords shows, in drop-in, the end of a destroy's apply as
// `terraform destroy` ends: strata destroys by a plan -destroy it then
// applies, whose apply says "Apply complete!" (docs/behaviour.md#scope).
// Only the line shown changes: what is kept and read is the engine's.
func (sw *StepWriter) destroyWords(line string) string {
	if !sw.ur.Destroys || sw.step != report.StepApply {
		return line
	}
	return applyDestroyed.ReplaceAllString(line, "${1}Destroy complete! Resources: ${2} destroyed.")
}
