package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/forge"
	"github.com/strata-iac/strata/report"
)

// driftIssues keeps one issue open per drifted unit after a drift check
// in CI, and closes the issue of a unit that no longer drifts
// (docs/ci.md#drift-schedules); on when the config schedules drift. Not
// being able to is a warning.
func driftIssues(ctx context.Context, c *cli.Context, forgeOf func() (ciForge, error), on bool, pol *cmdpolicy.Policy, rep *report.Report) {
	if !on || pol.Name != cmdpolicy.Drift {
		return
	}
	var findings []forge.DriftFinding
	for _, u := range rep.Units {
		switch u.Status {
		case report.StatusPlanned:
			findings = append(findings, forge.DriftFinding{Unit: u.ID(), Drifted: true, Title: "Drift: " + u.Name(), Body: driftBody(u, rep.CI)})
		case report.StatusNoChanges:
			findings = append(findings, forge.DriftFinding{Unit: u.ID()})
		}
	}
	if len(findings) == 0 {
		return
	}
	f, err := forgeOf()
	if f == nil && err == nil {
		return
	}
	var did []string
	if err == nil {
		did, err = f.DriftIssues(ctx, findings)
	}
	for _, d := range did {
		fmt.Fprintf(c.App.ErrWriter, "strata: drift: %s\n", d)
	}
	if err != nil {
		warnf(c, "drift issues: %v", err)
	}
}

// driftBody is the text of a drifted unit's issue.
func driftBody(u *report.UnitReport, ci *report.CIReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`strata drift` found that `%s` (stack `%s`) no longer matches its code: %s.\n", u.Name(), u.Stack, u.Changes)
	if ci != nil {
		if ci.Commit != "" {
			fmt.Fprintf(&b, "\nChecked at commit %s.", ci.Commit)
		}
		if ci.RunURL != "" {
			fmt.Fprintf(&b, " The plan is in [the run](%s).", ci.RunURL)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nstrata updates this issue while the unit drifts and closes it once it no longer does.\n")
	return b.String()
}
