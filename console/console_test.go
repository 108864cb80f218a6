package console

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-iac/strata/report"
)

// TestStepWriterConcurrentStreams writes a step's stdout and stderr from two
// goroutines at once, as terraform-exec does; under -race an unguarded
// buffer fails, and without it lines would be lost.
func TestStepWriterConcurrentStreams(t *testing.T) {
	for _, dropIn := range []bool{false, true} {
		t.Run(fmt.Sprintf("dropIn=%t", dropIn), func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := New(&out, &errOut, false, dropIn)
			c.StillEvery = 0
			ur := &Unit{Name: "net@default", Masker: NewMasker("hunter2")}
			sw := c.Step(ur, report.StepPlan)
			var wg sync.WaitGroup
			const n = 200
			for _, w := range []interface{ Write([]byte) (int, error) }{sw, sw.Stderr()} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < n; i++ {
						fmt.Fprintf(w, "line %d hunter2\n", i)
					}
				}()
			}
			wg.Wait()
			sw.Close()
			all := out.String() + errOut.String()
			if got := strings.Count(all, "\n"); got != 2*n {
				t.Errorf("%d lines printed, want %d", got, 2*n)
			}
			if strings.Contains(all, "hunter2") {
				t.Errorf("secret printed")
			}
		})
	}
}

func TestMasker(t *testing.T) {
	m := NewMasker("hunter2", "x", "", "hunter2-long")
	if got := m.Mask("a hunter2-long b hunter2 x"); got != "a *** b *** x" {
		t.Errorf("Mask = %q", got)
	}
}

func TestConsoleBlocksAndStatusLines(t *testing.T) {
	ur := &Unit{Name: "app@default", Masker: NewMasker("s3cret"), InJobs: true}
	var out bytes.Buffer
	c := New(&out, nil, false, false)
	c.StillEvery = 0
	w := c.Step(ur, report.StepPlan)
	fmt.Fprintln(w, "one s3cret")
	fmt.Fprintln(w.Stderr(), "two")
	if out.Len() != 0 {
		t.Fatalf("output before the step ended: %q", out.String())
	}
	w.Close()
	if got := out.String(); got != "[app@default] one ***\n[app@default] two\n" {
		t.Errorf("block = %q", got)
	}
	// On a terminal a status line stands below the blocks while a step
	// runs, and is erased before the next block.
	out.Reset()
	now := time.Unix(100, 0)
	tc := New(&out, nil, true, false)
	tc.Now = func() time.Time { return now }
	w = tc.Step(ur, report.StepApply)
	if !strings.Contains(out.String(), "… app@default: apply (0s)") {
		t.Errorf("no status line: %q", out.String())
	}
	fmt.Fprintln(w, "done")
	w.Close()
	if strings.Contains(out.String(), "done") {
		t.Errorf("a step's lines printed before its job ended: %q", out.String())
	}
	tc.JobDone(ur)
	if !strings.Contains(out.String(), "\x1b[1A\x1b[J[app@default] done\n") {
		t.Errorf("the status line is not erased before the block: %q", out.String())
	}
}
