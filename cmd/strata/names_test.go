package main

import (
	"strings"
	"testing"
)

// TestPlainNames holds the bounds of the names strata takes from outside
// as they are: a pull request's base branch and terraform's selected
// workspace.
func TestPlainNames(t *testing.T) {
	for _, tc := range []struct {
		name              string
		branch, workspace bool
	}{
		{"main", true, true},
		{"release/1.2", true, false},
		{"feature_x-1.2", true, true},
		{"", false, false},
		{"a..b", false, true},
		{"-x", true, false},
		{"a b", false, false},
		{"a$(id)", false, false},
		{strings.Repeat("b", 90), true, true},
		{strings.Repeat("b", 91), true, false},
		{strings.Repeat("b", 255), true, false},
		{strings.Repeat("b", 256), false, false},
		{"main\n", false, false},
	} {
		if got := plainBranch(tc.name); got != tc.branch {
			t.Errorf("plainBranch(%q) = %v, want %v", tc.name, got, tc.branch)
		}
		if got := plainWorkspace(tc.name); got != tc.workspace {
			t.Errorf("plainWorkspace(%q) = %v, want %v", tc.name, got, tc.workspace)
		}
	}
}
