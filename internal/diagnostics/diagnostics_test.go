package diagnostics

import (
	"reflect"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

func TestFailureReason(t *testing.T) {
	tests := []struct {
		name, err, want string
	}{
		{"bare Diagnostic after the CLI config warning", "exit status 1\n" + testenv.CLIConfigWarning + `
Error: Invalid default value for variable

  on main.tf line 8, in variable "v":
   8:   default = "abc"

This default value is not compatible with the variable's type constraint.
`, "Invalid default value for variable"},
		{"boxed Diagnostic", "exit status 1\n" + testenv.CLIConfigWarning + `╷
│ Error: Unsupported argument
│
│   on main.tf line 2, in resource "terraform_data" "x":
│    2:   bogus = 1
│
│ An argument named "bogus" is not expected here.
╵
`, "Unsupported argument"},
		{"a summary the engine wrapped", `exit status 1

Error: Terraform encountered problems during initialisation, including problems
with the configuration, described below.

Error: Unsupported block type
`, "Terraform encountered problems during initialisation, including problems with the configuration, described below."},
		{"the first of several errors", "Error: First one\n\nError: Second one\n", "First one"},
		{"no Error line: the first line that says anything", "exit status 3\n\nsomething went wrong\nmore", "something went wrong"},
		{"only a warning: the first line", testenv.CLIConfigWarning, "There are some problems with the CLI configuration:"},
		{"Error: without a summary is no Diagnostic", "Error:\nreal cause", "Error:"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FailureReason(tc.err); got != tc.want {
				t.Errorf("FailureReason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseDiagnostics(t *testing.T) {
	tests := []struct {
		name, text string
		want       []Diagnostic
	}{
		{"provisioner failure with a 'with' line", testenv.CLIConfigWarning + `
Error: local-exec provisioner error

  with terraform_data.x,
  on main.tf line 2, in resource "terraform_data" "x":
   2:   provisioner "local-exec" {

Error running command 'exit 1': exit status 1. Output:
`, []Diagnostic{
			{Severity: "Warning", Summary: "Unable to open CLI configuration file", Detail: `The CLI configuration file at "/home/ci/.terraformrc" does not exist.`},
			{Severity: "Error", Summary: "local-exec provisioner error", File: "main.tf", Line: 2, Detail: "Error running command 'exit 1': exit status 1. Output:"},
		}},
		{"boxed, in a module, with values under the source", `╷
│ Error: Invalid value for variable
│
│   on ../modules/net/variables.tf line 12:
│   12: variable "cidr" {
│     ├────────────────
│     │ var.cidr is "x"
│
│ Not a CIDR.
╵
`, []Diagnostic{
			{Severity: "Error", Summary: "Invalid value for variable", File: "../modules/net/variables.tf", Line: 12, Detail: "Not a CIDR."},
		}},
		{"no position", "Error: No configuration files\n\nApply requires configuration to be present.\n", []Diagnostic{
			{Severity: "Error", Summary: "No configuration files", Detail: "Apply requires configuration to be present."},
		}},
		{"plain output", "Plan: 1 to add, 0 to change, 0 to destroy.\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}
