package runner

import (
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// ResumeRun is the run of --resume REPORT (docs/behaviour.md#resume): the
// units the report left failed, skipped, blocked or cancelled run again;
// the units it left planned are gates outside the run, open once applied
// at their current digest. gone names the report's units the repository
// no longer has.
func ResumeRun(p *stacks.Project, rep *report.Report) (run *stacks.Run, external []*stacks.Unit, gone []string) {
	byID := make(map[string]*stacks.Unit, len(p.Units))
	for _, u := range p.Units {
		byID[u.ID()] = u
	}
	run = &stacks.Run{}
	for _, ur := range rep.Units {
		u, ok := byID[ur.ID()]
		if !ok {
			gone = append(gone, ur.Name())
			continue
		}
		switch ur.Status {
		case report.StatusFailed, report.StatusDenied, report.StatusSkipped, report.StatusBlocked, report.StatusDeferred, report.StatusCancelled, report.StatusMissing:
			run.Units = append(run.Units, stacks.RunUnit{Unit: u, Why: "resume: " + string(ur.Status)})
		case report.StatusPlanned:
			external = append(external, u)
		}
	}
	return run, external, gone
}
