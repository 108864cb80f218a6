package report

import (
	"strings"
	"testing"
)

// TestDiffView: a plan's change markers move to the start of their lines,
// as a diff block colours them; everything else is left as it is.
func TestDiffView(t *testing.T) {
	t.Parallel()
	plan := `Terraform will perform the following actions:

  # terraform_data.a will be created
  + resource "terraform_data" "a" {
      + id     = (known after apply)
    }

  # terraform_data.b must be replaced
-/+ resource "terraform_data" "b" {
      ~ id               = "1" -> (known after apply)
      ~ triggers_replace = "v1" -> "v2" # forces replacement
    }

  # terraform_data.c will be destroyed
  - resource "terraform_data" "c" {
      - id = "3" -> null
    }

 <= data "external" "d" {
    }

Plan: 2 to add, 0 to change, 2 to destroy.`
	want := `Terraform will perform the following actions:

  # terraform_data.a will be created
+   resource "terraform_data" "a" {
+       id     = (known after apply)
    }

  # terraform_data.b must be replaced
!   resource "terraform_data" "b" {
!       id               = "1" -> (known after apply)
!       triggers_replace = "v1" -> "v2" # forces replacement
    }

  # terraform_data.c will be destroyed
-   resource "terraform_data" "c" {
-       id = "3" -> null
    }

 <= data "external" "d" {
    }

Plan: 2 to add, 0 to change, 2 to destroy.`
	if got := DiffView(plan); got != want {
		t.Errorf("diff view:\n%s\nwant:\n%s", got, want)
	}
	rep := &Report{Command: "plan", Stacks: []StackReport{{Name: "s", Path: []string{"s"}, Status: StatusPlanned}},
		Units: []*UnitReport{
			{Dir: "a", Workspace: "default", Stack: "s", Status: StatusPlanned, Changes: Changes{Add: 2, Destroy: 2}, Log: plan},
			{Dir: "b", Workspace: "default", Stack: "s", Status: StatusFailed, Log: "Error: boom"},
		}}
	for name, text := range map[string]string{"summary": rep.Markdown(), "comment": Comment(rep, "")} {
		if !strings.Contains(text, "```diff\n") || !strings.Contains(text, "!   resource \"terraform_data\" \"b\"") {
			t.Errorf("%s: the plan is no diff block:\n%s", name, text)
		}
		if !strings.Contains(text, "```\nError: boom") {
			t.Errorf("%s: the failed unit's log is not a plain block:\n%s", name, text)
		}
	}
}
