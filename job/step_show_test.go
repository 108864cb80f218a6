package job

import (
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestShowInvocation: show -json of the saved plan, or show as people
// read it.
func TestShowInvocation(t *testing.T) {
	in := testInput(stacks.RunStep{}, "", nil)
	if got := in.showInvocation(nil, false).String(); got != "terraform show -json /s/p.tfplan" {
		t.Errorf("show json = %q", got)
	}
	text := in.showInvocation(map[string]string{"K": "v"}, true)
	if text.String() != "terraform show /s/p.tfplan" || text.Env["K"] != "v" || text.Step != report.StepShow {
		t.Errorf("show text = %s", text)
	}
	// Neither starts the engine for a version check first.
	if text.Call.checksVersion() || in.showInvocation(nil, false).Call.checksVersion() {
		t.Error("a show goes through terraform-exec's version check")
	}
}
