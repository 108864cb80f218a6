package job

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-iac/strata/report"
)

// TestRecordTook: a plan job that ended well records how long its steps
// took; a time within a quarter of the one recorded leaves it; a failed
// job or a reused plan records nothing.
func TestRecordTook(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	start := testClock()
	took := func(ms int) {
		j.res.Steps = []report.StepReport{{Name: report.StepPlan, StartedAt: start, FinishedAt: start.Add(time.Duration(ms) * time.Millisecond)}}
		j.recordTook(context.Background(), Plan)
	}
	planMS := func() int64 {
		us, err := j.run.State.ReadUnit(j.ur.Spec)
		if err != nil || us.Took == nil {
			return -1
		}
		return us.Took.PlanMS
	}
	took(1000)
	if got := planMS(); got != 1000 {
		t.Fatalf("recorded %d ms, want 1000", got)
	}
	took(1200)
	if got := planMS(); got != 1000 {
		t.Errorf("within a quarter: %d ms, want 1000 kept", got)
	}
	took(2000)
	if got := planMS(); got != 2000 {
		t.Errorf("twice as long: %d ms, want 2000", got)
	}
	j.res.Err = errors.New("failed")
	took(9000)
	if got := planMS(); got != 2000 {
		t.Errorf("a failed job recorded %d ms", got)
	}
	j.res.Err = nil
	j.res.Steps = []report.StepReport{{Name: report.StepShow, StartedAt: start, FinishedAt: start.Add(time.Minute)}}
	j.recordTook(context.Background(), Plan)
	if got := planMS(); got != 2000 {
		t.Errorf("a reused plan recorded %d ms", got)
	}
	j.recordTook(context.Background(), Apply)
	if us, _ := j.run.State.ReadUnit(j.ur.Spec); us.Took.ApplyMS != 60000 {
		t.Errorf("apply took %d ms, want 60000", us.Took.ApplyMS)
	}
}
