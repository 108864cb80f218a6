package job

import (
	"strings"
	"testing"
)

// TestSubstituteCmd: a step's cmd takes stack variables (and strata's own
// values) outside a shell's script; the script is passed as written.
func TestSubstituteCmd(t *testing.T) {
	vars := map[string]string{"environment": "prod", "STRATA_DIR": "app"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct {
		argv    []string
		want    []string
		unknown string
	}{
		{[]string{"echo", "$environment", "${STRATA_DIR}/x"}, []string{"echo", "prod", "app/x"}, ""},
		{[]string{"sh", "-c", `echo "$environment $GITHUB_HEAD_REF" $$`}, []string{"sh", "-c", `echo "$environment $GITHUB_HEAD_REF" $$`}, ""},
		{[]string{"/bin/bash", "-euc", `echo "$x"`, "name", "$environment"}, []string{"/bin/bash", "-euc", `echo "$x"`, "name", "prod"}, ""},
		{[]string{"bash", "-e", "-o", "pipefail", "-c", `echo $y`}, []string{"bash", "-e", "-o", "pipefail", "-c", `echo $y`}, ""},
		{[]string{"zsh", "-c", "--", "echo $y"}, []string{"zsh", "-c", "--", "echo $y"}, ""},
		// A shell running a script file: its arguments are argv.
		{[]string{"sh", "script.sh", "$environment"}, []string{"sh", "script.sh", "prod"}, ""},
		// Not a shell: other names are refused, not taken from the
		// environment.
		{[]string{"echo", "$GITHUB_HEAD_REF"}, nil, "GITHUB_HEAD_REF"},
		{[]string{"python3", "-c", "$GITHUB_HEAD_REF"}, nil, "GITHUB_HEAD_REF"},
		{[]string{"echo", "$$HOME"}, []string{"echo", "$HOME"}, ""},
	}
	for _, tc := range tests {
		got, name, ok := substituteCmd(tc.argv, lookup)
		if tc.unknown != "" {
			if ok || name != tc.unknown {
				t.Errorf("substituteCmd(%q): ok %t name %q, want unknown %q", tc.argv, ok, name, tc.unknown)
			}
			continue
		}
		if !ok || strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("substituteCmd(%q) = %q, %t; want %q", tc.argv, got, ok, tc.want)
		}
	}
}
