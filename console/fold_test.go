package console

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
)

// TestFolded: at a terminal a successful init is one line counting its
// providers, a plan its change list; a step that warned or failed, and
// any other step, keep every line.
func TestFolded(t *testing.T) {
	t.Parallel()
	initOK := `Initializing the backend...
Initializing provider plugins...
- Finding hashicorp/null versions matching "~> 3.0"...
- Installing hashicorp/null v3.2.1...
- Installed hashicorp/null v3.2.1 (signed by HashiCorp)
- Using previously-installed hashicorp/random v3.6.0

Terraform has been successfully initialized!`
	plan := `Terraform will perform the following actions:

  # terraform_data.a will be created
  + resource "terraform_data" "a" {
      + id     = (known after apply)
      + input  = "x"
    }

  # module.m.terraform_data.b must be replaced
-/+ resource "terraform_data" "b" {
      ~ input = "old" -> "new" # forces replacement
    }

Plan: 2 to add, 0 to change, 1 to destroy.

Changes to Outputs:
  + name = "x"
  ~ id   = "a" -> (known after apply)`
	for _, tc := range []struct {
		name, step, raw string
		want            string
	}{
		{"init", report.StepInit, initOK, "init: ok, 2 providers"},
		{"init with no provider", report.StepInit, "Initializing the backend...\n\nTerraform has been successfully initialized!", "init: ok, no providers"},
		{"init that warned", report.StepInit, initOK + "\n\nWarning: Unable to open CLI configuration file", initOK + "\n\nWarning: Unable to open CLI configuration file"},
		{"plan", report.StepPlan, plan, "  # terraform_data.a will be created\n  # module.m.terraform_data.b must be replaced\nPlan: 2 to add, 0 to change, 1 to destroy.\nChanges to Outputs:\n  + name = \"x\"\n  ~ id   = \"a\" -> (known after apply)"},
		{"plan with nothing to change", report.StepPlan, "No changes. Your infrastructure matches the configuration.\n\nTerraform has compared", "No changes. Your infrastructure matches the configuration."},
		{"plan that failed", report.StepPlan, plan + "\nError: boom", plan + "\nError: boom"},
		{"a saved plan shown", report.StepShow, plan, "  # terraform_data.a will be created\n  # module.m.terraform_data.b must be replaced\nPlan: 2 to add, 0 to change, 1 to destroy.\nChanges to Outputs:\n  + name = \"x\"\n  ~ id   = \"a\" -> (known after apply)"},
		{"apply", report.StepApply, "terraform_data.a: Creating...\nApply complete!", "terraform_data.a: Creating...\nApply complete!"},
	} {
		lines := strings.Split(tc.raw, "\n")
		if got := strings.Join(folded(tc.step, tc.raw, lines), "\n"); got != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}
