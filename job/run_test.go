package job

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
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

// TestTookWithRecord: the record a job's last step writes carries how
// long the job took (tookWith), the step's own reports counted, so that
// recordTook after it writes nothing; a step that took much longer than
// the time recorded still has it written again by recordTook.
func TestTookWithRecord(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	start := testClock()
	for _, tc := range []struct {
		name         string
		recorded, ms int // the plan's ms the step's record carries, the job's
		want         int64
		rewritten    bool
	}{
		{name: "first plan", recorded: 800, ms: 800, want: 800},
		{name: "about as long", recorded: 900, ms: 900, want: 800},
		{name: "the record's time is the job's", recorded: 3000, ms: 3000, want: 3000},
		{name: "longer after the record", recorded: 3000, ms: 9000, want: 9000, rewritten: true},
	} {
		init := report.StepReport{Name: report.StepInit, StartedAt: start, FinishedAt: start.Add(100 * time.Millisecond)}
		own := []report.StepReport{{Name: report.StepPlan, StartedAt: start.Add(100 * time.Millisecond), FinishedAt: start.Add(time.Duration(tc.recorded) * time.Millisecond)}}
		j.res.Steps = []report.StepReport{init}
		with := j.tookWith(Plan, &own)
		if err := j.run.State.UpdateUnitUnsynced(j.ur.Spec, func(s *runstate.UnitState) { s.Plan = &runstate.PlanRecord{Digest: tc.name}; with(s) }); err != nil {
			t.Fatal(err)
		}
		// The unit's record: its one file under state/ (docs/architecture.md#run-state-layout).
		paths, _ := filepath.Glob(filepath.Join(j.run.State.Path, "state", j.ur.Spec.Dir, "*.json"))
		if len(paths) != 1 {
			t.Fatalf("records %q, want one", paths)
		}
		path := paths[0]
		before, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		own[0].FinishedAt = start.Add(time.Duration(tc.ms) * time.Millisecond)
		j.res.Steps = append([]report.StepReport{init}, own...)
		j.recordTook(context.Background(), Plan)
		after, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if rewritten := !os.SameFile(before, after); rewritten != tc.rewritten {
			t.Errorf("%s: record written again by recordTook: %v, want %v", tc.name, rewritten, tc.rewritten)
		}
		if us, err := j.run.State.ReadUnit(j.ur.Spec); err != nil || us.Took == nil || us.Took.PlanMS != tc.want {
			t.Errorf("%s: took %+v (%v), want plan_ms %d", tc.name, us.Took, err, tc.want)
		}
	}
}

// TestTookChange: what a job that ended well records of how long it
// took, by its kind and its steps: a plan's time for a plan, an apply's
// for an apply and for a plan and apply in one call that applied; a plan's
// for one that made the usual plan instead; nothing for a saved plan
// reused (its show is no measure of a plan or an apply) nor for another
// command's job.
func TestTookChange(t *testing.T) {
	t.Parallel()
	start := testClock()
	step := func(name string, ms int) report.StepReport {
		return report.StepReport{Name: name, StartedAt: start, FinishedAt: start.Add(time.Duration(ms) * time.Millisecond)}
	}
	for _, tc := range []struct {
		name        string
		kind        Kind
		job         command.Job
		steps       []report.StepReport
		plan, apply int64
		none        bool
	}{
		{name: "plan", kind: Plan, job: command.JobPlan, steps: []report.StepReport{step(report.StepInit, 100), step(report.StepPlan, 700)}, plan: 700},
		{name: "plan reused", kind: Plan, job: command.JobPlan, steps: []report.StepReport{step(report.StepShow, 90)}, none: true},
		{name: "apply", kind: Apply, job: command.JobPlan, steps: []report.StepReport{step(report.StepApply, 900)}, apply: 900},
		{name: "applied in one call", kind: PlanApply, job: command.JobPlan, steps: []report.StepReport{step(report.StepInit, 50), step(report.StepApply, 800)}, apply: 800},
		{name: "one call fell back to a plan", kind: PlanApply, job: command.JobPlan, steps: []report.StepReport{step(report.StepPlan, 600)}, plan: 600},
		{name: "one call reused a saved plan", kind: PlanApply, job: command.JobPlan, steps: []report.StepReport{step(report.StepShow, 107)}, none: true},
		{name: "validate", kind: Plan, job: command.JobValidate, steps: []report.StepReport{step(report.StepValidate, 300)}, none: true},
		{name: "no steps", kind: Apply, job: command.JobPlan, none: true},
	} {
		var out bytes.Buffer
		j := testJob(t, workflowYML, &fakeExec{}, &out)
		j.run.Policy.Job = tc.job
		change := j.tookChange(tc.kind, tc.steps)
		if tc.none {
			if change != nil {
				t.Errorf("%s: records a time", tc.name)
			}
			continue
		}
		if change == nil {
			t.Errorf("%s: records nothing", tc.name)
			continue
		}
		var s runstate.UnitState
		change(&s)
		if s.Took == nil || s.Took.PlanMS != tc.plan || s.Took.ApplyMS != tc.apply {
			t.Errorf("%s: took %+v, want plan %d apply %d", tc.name, s.Took, tc.plan, tc.apply)
		}
	}
}
