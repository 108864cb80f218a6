package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
)

// TestApproverCountsUnits: the question says "1 unit", not "1 units".
func TestApproverCountsUnits(t *testing.T) {
	for _, tc := range []struct {
		units int
		want  string
	}{
		{1, "Apply 1 unit? [yes/all/no] "},
		{3, "Apply 3 units? [yes/all/no] "},
	} {
		var out bytes.Buffer
		var units []*report.UnitReport
		for i := 0; i < tc.units; i++ {
			units = append(units, &report.UnitReport{Dir: "d", Workspace: "default"})
		}
		ans, err := terminalApprover(&out, strings.NewReader("yes\n"))(units)
		if err != nil || ans != runner.AnswerYes {
			t.Fatalf("%d units: %v %v", tc.units, ans, err)
		}
		if !strings.HasSuffix(out.String(), tc.want) {
			t.Errorf("%d units: asked %q, want %q", tc.units, out.String(), tc.want)
		}
	}
}
