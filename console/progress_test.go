package console

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/report"
)

func unitNamed(name string) *Unit {
	return &Unit{Name: name, Masker: NewMasker("s3cret"), InJobs: true}
}

// TestStatusBlock: at a terminal the status block counts the run's units
// done, running and waiting, and lists the running units with their step
// and elapsed time, the longest running first, at most maxStatusUnits.
func TestStatusBlock(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	c := New(&out, nil, true, false)
	c.Now = func() time.Time { return now }
	c.AddUnits(20)
	var steps []*StepWriter
	for i := range maxStatusUnits + 2 {
		steps = append(steps, c.Step(unitNamed(fmt.Sprintf("u%02d", i)), report.StepPlan))
		now = now.Add(time.Second)
	}
	done := unitNamed("done")
	c.UnitDone(done, "no changes", "", 0)
	out.Reset()
	c.Note("a note")
	got := out.String()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := []string{
		"── 1/20 done · 10 running · 9 waiting",
		"  … u00: plan (10s)",
		"  … u01: plan (9s)",
	}
	if len(lines) != 2+maxStatusUnits+1 || !strings.HasSuffix(lines[0], "a note") || lines[1] != want[0] || lines[2] != want[1] || lines[3] != want[2] {
		t.Fatalf("status block:\n%s", got)
	}
	if last := lines[len(lines)-1]; last != "  … and 2 more running" {
		t.Errorf("last line %q; want the units not listed counted", last)
	}
	for _, sw := range steps {
		sw.Close()
	}
}

// TestUnitOutputWhole: at a terminal a unit's steps are printed together
// when its job ends, even when another unit's job ended between them.
func TestUnitOutputWhole(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, nil, true, false)
	a, b := unitNamed("a"), unitNamed("b")
	initA := c.Step(a, report.StepInit)
	fmt.Fprintln(initA, "a init")
	initA.Close()
	planB := c.Step(b, report.StepPlan)
	fmt.Fprintln(planB, "b plan s3cret")
	planB.Close()
	c.JobDone(b)
	planA := c.Step(a, report.StepPlan)
	fmt.Fprintln(planA, "a plan")
	planA.Close()
	c.JobDone(a)
	got := stripStatus(out.String())
	if want := "[b] b plan ***\n[a] a init\n[a] a plan\n"; got != want {
		t.Errorf("output %q; want %q", got, want)
	}
}

// TestStreamOutput: with Stream, lines go out as they come, interleaved
// between units, each prefixed, with no status block; a plan's lines wait
// for its end.
func TestStreamOutput(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, nil, true, false)
	c.Stream()
	a, b := unitNamed("a"), unitNamed("b")
	applyA, applyB, planC := c.Step(a, report.StepApply), c.Step(b, report.StepApply), c.Step(unitNamed("c"), report.StepPlan)
	fmt.Fprintln(applyA, "a one")
	fmt.Fprintln(applyB, "b one s3cret")
	fmt.Fprintln(planC, "c plan")
	fmt.Fprintln(applyA, "a two")
	if got, want := out.String(), "[a] a one\n[b] b one ***\n[a] a two\n"; got != want {
		t.Errorf("streamed %q; want %q", got, want)
	}
	planC.Close()
	applyA.Close()
	applyB.Close()
	if got := out.String(); !strings.HasSuffix(got, "[c] c plan\n") || strings.Contains(got, "\x1b[") {
		t.Errorf("after the plan ended: %q", got)
	}
}

// TestUnitDoneLine: each finished unit gets one line, with its reason
// masked, its time and the run's count, on a terminal and off one alike.
func TestUnitDoneLine(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		var out bytes.Buffer
		c := New(&out, nil, terminal, false)
		c.AddUnits(3)
		c.UnitDone(unitNamed("a"), "applied", "", 1500*time.Millisecond)
		c.UnitDone(unitNamed("b"), "failed", "apply: token s3cret refused", 2*time.Second)
		got := stripStatus(out.String())
		if want := "[a] applied in 1.5s (1/3 done)\n[b] failed in 2s: apply: token *** refused (2/3 done)\n"; got != want {
			t.Errorf("terminal %t: %q; want %q", terminal, got, want)
		}
	}
	var out bytes.Buffer
	New(&out, nil, false, true).UnitDone(unitNamed("a"), "applied", "", time.Second)
	if out.Len() != 0 {
		t.Errorf("drop-in printed %q", out.String())
	}
}

// TestDropInUnitDone: in drop-in, only an end the engine's output cannot
// have told gets a line, on stderr, masked, without the unit's name.
func TestDropInUnitDone(t *testing.T) {
	for _, tc := range []struct {
		status, reason string
		took           time.Duration
		want           string
	}{
		{"applied", "", time.Second, ""},
		{"planned", "waits for approval", time.Second, ""},
		{"failed", "apply: Error: boom", time.Second, ""},
		{"failed", "hook s3cret failed", 0, "strata: failed: hook *** failed\n"},
		{"blocked", "network.vpc_id has no value", 0, "strata: blocked: network.vpc_id has no value\n"},
		{"skipped", "base failed", 0, "strata: skipped: base failed\n"},
		{"cancelled", "interrupted during apply", time.Second, "strata: cancelled: interrupted during apply\n"},
	} {
		var out, errOut bytes.Buffer
		New(&out, &errOut, false, true).UnitDone(unitNamed("a"), tc.status, tc.reason, tc.took)
		if out.Len() != 0 || errOut.String() != tc.want {
			t.Errorf("%s %q: stdout %q, stderr %q; want stderr %q", tc.status, tc.reason, out.String(), errOut.String(), tc.want)
		}
	}
}

// stripStatus removes the status block's lines and its erasures.
func stripStatus(s string) string {
	var kept []string
	for _, l := range strings.SplitAfter(s, "\n") {
		for strings.HasPrefix(l, "\x1b[") {
			l = l[strings.Index(l, "J")+1:]
		}
		if l != "" && !strings.HasPrefix(l, "  … ") && !strings.HasPrefix(l, "── ") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// TestOutsideJobsNotHeld: at a terminal, a unit whose steps run outside
// the run's jobs (a hook, a producer read as it stands) has each step
// printed as it ends: no JobDone ever comes for it.
func TestOutsideJobsNotHeld(t *testing.T) {
	var out bytes.Buffer
	c := New(&out, nil, true, false)
	hook := &Unit{Name: "hooks", Masker: NewMasker()}
	sw := c.Step(hook, report.StepRun)
	fmt.Fprintln(sw, "post hook says")
	sw.Close()
	if got := stripStatus(out.String()); got != "[hooks] post hook says\n" {
		t.Errorf("output %q; want the hook's line at once", got)
	}
}

// TestStatusCountsUnits: a unit with two steps running at once (a step
// and the one it started) is one running unit, listed once with the step
// it started last.
func TestStatusCountsUnits(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	c := New(&out, nil, true, false)
	c.Now = func() time.Time { return now }
	c.AddUnits(3)
	a, b := unitNamed("a"), unitNamed("b")
	initA := c.Step(a, report.StepInit)
	now = now.Add(2 * time.Second)
	planA := c.Step(a, report.StepPlan)
	now = now.Add(time.Second)
	initB := c.Step(b, report.StepInit)
	now = now.Add(time.Second)
	got := c.statusLines()
	want := []string{
		"── 0/3 done · 2 running · 1 waiting",
		"  … a: plan (2s)",
		"  … b: init (1s)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("status block:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, sw := range []*StepWriter{initA, planA, initB} {
		sw.Close()
	}
}
