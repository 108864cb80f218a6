package console

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/strata-iac/strata/internal/ansi"
	"github.com/strata-iac/strata/report"
)

// At a terminal a unit's successful init is one line and its plan its
// change list, so the plans read before a prompt are what will change;
// every line is one flag away (--output full) and always in the report
// (docs/behaviour.md#console-output).

// Full shows every line of init and plan at a terminal (--output full).
func (c *Console) Full() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.full = true
}

// providerLine is a line of init saying which provider it installed or
// found: "- Installed hashicorp/null v3.2.1 (signed by HashiCorp)",
// "- Using previously-installed hashicorp/null v3.2.1".
var providerLine = regexp.MustCompile(`^- (?:Installed|Using previously-installed) (\S+) `)

// planLine is a line a plan's change list keeps: each resource's header
// ("  # aws_s3_bucket.b will be created"), the outputs' heading and
// changes, and the totals.
var planLine = regexp.MustCompile(`^(  # \S.*|Plan: .*|Changes to Outputs:|  [~+-] \S+ +=.*|No changes\..*)$`)

// folded is what a terminal shows of a step's lines: init's one line
// when it succeeded, a plan's change list, any other step as it is. A
// step that warned or failed keeps every line.
func folded(step, raw string, lines []string) []string {
	plain := ansi.Strip(raw)
	if strings.Contains(plain, "Error: ") || strings.Contains(plain, "Warning: ") {
		return lines
	}
	switch step {
	case report.StepInit:
		if !strings.Contains(plain, "has been successfully initialized") {
			return lines
		}
		seen := map[string]bool{}
		for _, l := range strings.Split(plain, "\n") {
			if m := providerLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				seen[m[1]] = true
			}
		}
		what := "no providers"
		switch n := len(seen); {
		case n == 1:
			what = "1 provider"
		case n > 1:
			what = fmt.Sprintf("%d providers", n)
		}
		return []string{"init: ok, " + what}
	case report.StepPlan, report.StepShow:
		// A saved plan reused is shown by show: its change list too.
		var out []string
		for _, l := range lines {
			if planLine.MatchString(ansi.Strip(l)) {
				out = append(out, l)
			}
		}
		if len(out) == 0 {
			return lines
		}
		return out
	}
	return lines
}
