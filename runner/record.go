package runner

import (
	"slices"
	"time"

	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

func (r *runState) unitReport(ur *unitRun) *report.UnitReport {
	u := ur.Spec
	rep := &report.UnitReport{
		Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, StackPath: u.Stack.Path, StackInstance: u.Stack.Instance,
		Engine: report.EngineReport{Name: ur.Choice.Name, Version: ur.Choice.Version},
		Why:    ur.why, Status: ur.status, Changes: ur.changes, Reason: ur.reason, Digest: ur.digest, Replanned: ur.replanned, Gates: ur.gates, Cost: ur.cost,
		Inputs: r.inputReports(ur), Steps: ur.steps, Outputs: ur.outputs, Shared: u.Shared,
		Log: ur.Display.Log(), Warnings: ur.warnings, DeferredOn: ur.deferredOn,
	}
	if ur.Engine != nil {
		rep.Engine = report.EngineReport{Name: ur.Engine.Name, Version: ur.Engine.Version.String()}
	}
	if rep.Steps == nil {
		rep.Steps = []report.StepReport{}
	}
	if ur.cause != nil {
		rep.Cause = ur.cause.rootName()
	}
	rep.After = r.after(u)
	rep.AfterStacks = r.afterStacks(u.Stack)
	if rep.Status == report.StatusPending {
		rep.Status = report.StatusCancelled
	}
	if (rep.Status == report.StatusApplied || rep.Status == report.StatusPlanned) && ur.role != RoleSettled {
		rep.UnknownUntilApplied = unknownOutputsOf(ur)
	}
	return rep
}

// unknownOutputsOf are the outputs ur's plan in this command left
// unknown until it applied, sorted.
func unknownOutputsOf(ur *unitRun) []string {
	if ur.planned == nil {
		return slices.Clone(ur.unknownOutputs)
	}
	return job.UnknownOutputs(ur.planned)
}

// cutWarnings bounds each of a unit's warnings, which may quote what
// came in (docs/behaviour.md#text-budgets).
func cutWarnings(ws []string) []string {
	if ws == nil {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = textbudget.Cut(w, textbudget.Error)
	}
	return out
}

// report assembles the report and its exit code (docs/behaviour.md#commands).
func (r *runState) report(started time.Time) *report.Report {
	place := map[*stacks.Unit]int{}
	layer := map[*stacks.Unit]int{}
	if r.g != nil {
		layer = r.g.Layer
		for i, u := range r.g.Order() {
			place[u] = i
		}
	}
	ci := ciplatform.Read(r.opt.Environ)
	var units []*report.UnitReport
	for _, ur := range r.units {
		if ur.role.outside() || ur.hidden() {
			continue
		}
		ureport := r.unitReport(ur)
		ureport.Order, ureport.Layer = place[ur.Spec], layer[ur.Spec]
		units = append(units, ureport)
		if ureport.Status == report.StatusFailed && ci.Platform == ciplatform.GitHub && !r.opt.DropIn {
			r.con.Annotate(ur.Display, ureport, r.p.Root, ci.GitHub.Workspace)
		}
	}
	rep := report.Assemble(r.opt.Command, started, r.opt.Now(), units, r.opt.DetailedExitCode)
	rep.CI = report.CIOf(ci)
	rep.Producers = r.producerReads
	rep.SetSchedule()
	rep.SetCPU()
	if c := r.jobs.Cost; c != nil && r.policy.Plans {
		rep.SetCost(c.Skipped())
	}
	return rep
}

// after are the IDs of the units of the run u waits for, over the
// command's edges, sorted: units outside the run (gates, producers) are
// not the run's DAG.
func (r *runState) after(u *stacks.Unit) []string {
	if r.g == nil {
		return nil
	}
	var out []string
	for _, ei := range r.g.In(u) {
		from := r.g.Edges[ei].From
		if p := r.byUnit[from]; p == nil || p.role == RoleGate || p.role == RoleProducer {
			continue
		}
		out = append(out, from.ID())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// afterStacks are the names of the stacks of the run s waits for over the
// command's stack edges, sorted: a stack whose units are all outside the
// run (gates, producers) is not the run's DAG. Found once per stack.
func (r *runState) afterStacks(s *stacks.Stack) []string {
	if r.g == nil {
		return nil
	}
	if names, ok := r.stacksBefore[s]; ok {
		return names
	}
	var out []string
	for _, ei := range r.g.StackIn(s) {
		from := r.g.StackEdges[ei].From
		for _, u := range r.g.UnitsOf(from) {
			if p := r.byUnit[u]; p != nil && p.role != RoleGate && p.role != RoleProducer {
				out = append(out, from.Name)
				break
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if r.stacksBefore == nil {
		r.stacksBefore = map[*stacks.Stack][]string{}
	}
	r.stacksBefore[s] = out
	return out
}
