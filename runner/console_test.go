package runner

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestStepWriterConcurrentStreams writes a step's stdout and stderr from two
// goroutines at once, as terraform-exec does; under -race an unguarded
// buffer fails, and without it lines would be lost.
func TestStepWriterConcurrentStreams(t *testing.T) {
	for _, dropIn := range []bool{false, true} {
		t.Run(fmt.Sprintf("dropIn=%t", dropIn), func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := newConsole(&out, &errOut, false, dropIn)
			c.stillEvery = 0
			ur := &unit{u: &stacks.Unit{Dirspace: &stacks.Dirspace{Dir: "net", Workspace: "default"}, Stack: &stacks.Stack{Name: "s"}}, masker: newMasker("hunter2")}
			sw := c.stepWriter(ur, report.StepPlan)
			var wg sync.WaitGroup
			const n = 200
			for _, w := range []interface{ Write([]byte) (int, error) }{sw, sw.stderr()} {
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
