package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryEscapesBaseBranch: the base branch CI names goes into the
// summary as one code span whatever it holds: a backtick in it ends no
// span, and the "](http://x)" after it is no link.
func TestSummaryEscapesBaseBranch(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{"a/main.tf": "resource \"terraform_data\" \"x\" {}\n"})
	summary := filepath.Join(t.TempDir(), "summary.md")
	const base = "ma`in](http://x)"
	env := append(hermeticEnv(t), "GITHUB_ACTIONS=true", "GITHUB_BASE_REF="+base, "GITHUB_SHA=0123456789abcdef")
	if r := runBin(t, root, env, "plan", "--all", "--summary", summary); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	md := readFileT(t, summary)
	lines := strings.Split(md, "\n")
	if len(lines) < 3 || !strings.HasSuffix(lines[2], " · base ``"+base+"``") {
		t.Fatalf("context line does not end with the base in one code span:\n%s", md)
	}
}
