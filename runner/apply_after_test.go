package runner

import (
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// applyAfterRepo is stack next, applied after stack first, its unit n2
// planned after n1, every unit applied once: f1, n1 and n2 each hold one
// terraform_data.
func applyAfterRepo(t *testing.T) (*e2e, Options) {
	t.Helper()
	files := map[string]string{
		"strata.yml": `stacks:
  names:
    first: {tag_query: 'dir:f1'}
    next:
      stacks: [n1, n2]
      rules: {apply_after: [first]}
    n1: {tag_query: 'dir:n1'}
    n2: {tag_query: 'dir:n2', rules: {plan_after: [n1]}}
`,
		"f1/main.tf": "resource \"terraform_data\" \"x\" { input = 1 }\n",
		"n1/main.tf": "resource \"terraform_data\" \"x\" { input = 1 }\n",
		"n2/main.tf": "resource \"terraform_data\" \"x\" { input = 1 }\n",
	}
	e := newE2E(t, writeRepo(t, files))
	opt := Options{Settings: Settings{Parallelism: 3, AutoApprove: true}}
	e.run(CmdApply, opt, stacks.Selection{})
	return e, opt
}

// TestApplyAfterThroughAnUnchangedUnit: stack next applies after stack
// first. Its unit n1 has nothing to change, and n2 plans after n1: n2 may
// plan at once, but applies only once first's unit has applied, though
// the edge that says so reaches n2 through n1.
func TestApplyAfterThroughAnUnchangedUnit(t *testing.T) {
	e, opt := applyAfterRepo(t)
	// f1 is replaced, and takes a second to apply; n2 changes; n1 does not.
	writeFileT(t, e.root+"/f1/main.tf", "resource \"terraform_data\" \"x\" {\n  input            = 1\n  triggers_replace = 2\n  provisioner \"local-exec\" {\n    command = \"sleep 1\"\n  }\n}\n")
	writeFileT(t, e.root+"/n2/main.tf", "resource \"terraform_data\" \"x\" { input = 2 }\n")
	res := e.run(CmdApply, opt, stacks.Selection{})
	var f1, n2 *report.UnitReport
	for _, u := range res.Report.Units {
		switch u.Dir {
		case "f1":
			f1 = u
		case "n2":
			n2 = u
		}
	}
	if f1 == nil || n2 == nil || f1.Status != report.StatusApplied || n2.Status != report.StatusApplied {
		t.Fatalf("f1 %s %q, n2 %s %q", f1.Status, f1.Reason, n2.Status, n2.Reason)
	}
	_, f1Done := report.Span(f1.Steps)
	n2Apply, ok := stepOf(n2, report.StepApply)
	if !ok {
		t.Fatalf("n2 has no apply step: %+v", n2.Steps)
	}
	if n2Apply.StartedAt.Before(f1Done) {
		t.Errorf("n2 started applying at %s, before f1 finished at %s", n2Apply.StartedAt.Format("15:04:05.000"), f1Done.Format("15:04:05.000"))
	}
}

// TestApplyAfterThroughAnUnchangedUnitFails: when first's unit fails, the
// unit that waits for it through an unchanged unit is skipped, naming it.
func TestApplyAfterThroughAnUnchangedUnitFails(t *testing.T) {
	e, opt := applyAfterRepo(t)
	writeFileT(t, e.root+"/f1/main.tf", "resource \"terraform_data\" \"x\" {\n  triggers_replace = 2\n  provisioner \"local-exec\" {\n    command = \"exit 1\"\n  }\n}\n")
	writeFileT(t, e.root+"/n2/main.tf", "resource \"terraform_data\" \"x\" { input = 2 }\n")
	res := e.run(CmdApply, opt, stacks.Selection{})
	got := map[string]string{}
	for _, u := range res.Report.Units {
		got[u.Dir] = string(u.Status) + " " + u.Reason
	}
	want := map[string]string{"f1": "failed", "n1": "no_changes ", "n2": "skipped f1@default failed"}
	for dir, w := range want {
		if g := got[dir]; g != w && !(dir == "f1" && len(g) > 6 && g[:6] == "failed") {
			t.Errorf("%s: %q, want %q", dir, g, w)
		}
	}
}
