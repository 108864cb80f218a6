package console

import (
	"fmt"
	"sort"
	"time"

	"github.com/strata-iac/strata/report"
)

// What a person at a terminal sees of a long run, and the line each
// finished unit gets everywhere (docs/behaviour.md#console-output).

// maxStatusUnits bounds the running units the status block lists.
const maxStatusUnits = 8

// Stream makes every step's lines go out as they come, `[unit] ` before
// each, interleaved between units, with no status block (--output
// stream). A plan's lines still wait for its end, to be masked.
func (c *Console) Stream() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streams = true
}

// AddUnits counts n more units in the run, for the status block and the
// finished lines.
func (c *Console) AddUnits(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += n
}

// showsStatus: a live status block is drawn. Callers hold c.mu.
func (c *Console) showsStatus() bool { return c.terminal && !c.dropIn && !c.streams }

// JobDone prints, at a terminal, the lines of the unit's steps that ended
// since its job began, as one block: a unit's output is read whole, never
// interleaved with another's.
func (c *Console) JobDone(ur *Unit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(ur.held) == 0 {
		return
	}
	c.clearStatus()
	c.printUnitLines(ur, ur.held)
	ur.held = nil
	c.drawStatus()
}

// UnitDone prints one line for a unit that finished: its status, how
// long it took, why when there is a reason, and how many of the run's
// units are done.
func (c *Console) UnitDone(ur *Unit, status, reason string, took time.Duration) {
	if c.dropIn {
		c.dropInDone(ur, status, reason, took)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done++
	c.clearStatus()
	c.closeGroup()
	if len(ur.held) > 0 {
		c.printUnitLines(ur, ur.held)
		ur.held = nil
	}
	line := fmt.Sprintf("[%s] %s", ur.Name, status)
	if took = took.Round(100 * time.Millisecond); took > 0 {
		line += fmt.Sprintf(" in %s", took)
	}
	if reason != "" {
		line += ": " + ur.Masker.MaskLine(reason)
	}
	if c.total > 0 {
		line += fmt.Sprintf(" (%d/%d done)", c.done, c.total)
	}
	fmt.Fprintln(c.w, line)
	c.drawStatus()
}

// dropInDone says, in drop-in, why the unit ended as it did when the
// engine's output cannot have said it: it was blocked, skipped, denied or
// cancelled, or it failed before any step ran. Its outcome otherwise is
// the engine's output and the exit code, as terraform's is.
func (c *Console) dropInDone(ur *Unit, status, reason string, took time.Duration) {
	switch {
	case reason == "":
		return
	case status == string(report.StatusFailed) && took > 0:
		return
	case status == string(report.StatusFailed), status == string(report.StatusBlocked), status == string(report.StatusDeferred), status == string(report.StatusSkipped),
		status == string(report.StatusDenied), status == string(report.StatusCancelled), status == string(report.StatusMissing):
		c.mu.Lock()
		defer c.mu.Unlock()
		fmt.Fprintf(c.errW, "strata: %s: %s\n", status, ur.Masker.MaskLine(reason))
	}
}

// clearStatus erases the status block. Callers hold c.mu.
func (c *Console) clearStatus() {
	if !c.showsStatus() || c.drawn == 0 {
		return
	}
	fmt.Fprintf(c.w, "\x1b[%dA\x1b[J", c.drawn)
	c.drawn = 0
}

// drawStatus prints the status block below everything else: the units
// done, running and waiting of the run's total, then each running unit
// with its step and how long the step has run, the longest first.
// Callers hold c.mu.
func (c *Console) drawStatus() {
	if !c.showsStatus() || len(c.running) == 0 {
		return
	}
	c.drawn = 0
	for _, l := range c.statusLines() {
		fmt.Fprintln(c.w, l)
		c.drawn++
	}
}

// statusLines is the status block's text: each running unit once, with
// the step it started last and how long that step has run, the unit
// running longest first. Callers hold c.mu.
func (c *Console) statusLines() []string {
	now := c.Now()
	type running struct {
		since time.Time   // its first running step's start
		step  *StepWriter // the step it started last
	}
	byUnit := map[*Unit]*running{}
	var units []*running
	for _, sw := range c.running {
		r := byUnit[sw.ur]
		if r == nil {
			r = &running{since: sw.started, step: sw}
			byUnit[sw.ur] = r
			units = append(units, r)
			continue
		}
		if sw.started.Before(r.since) {
			r.since = sw.started
		}
		if !sw.started.Before(r.step.started) {
			r.step = sw
		}
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].since.Before(units[j].since) })
	inRun := 0
	for _, r := range units {
		if r.step.ur.InJobs {
			inRun++
		}
	}
	var lines []string
	if c.total > 0 {
		waiting := max(c.total-c.done-inRun, 0)
		lines = append(lines, fmt.Sprintf("── %d/%d done · %d running · %d waiting", c.done, c.total, inRun, waiting))
	}
	for i, r := range units {
		if i == maxStatusUnits {
			lines = append(lines, fmt.Sprintf("  … and %d more running", len(units)-maxStatusUnits))
			break
		}
		lines = append(lines, fmt.Sprintf("  … %s: %s (%s)", r.step.ur.Name, r.step.step, now.Sub(r.step.started).Round(time.Second)))
	}
	return lines
}

// startTicker redraws the status block every second while steps run.
// Callers hold c.mu.
func (c *Console) startTicker() {
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
