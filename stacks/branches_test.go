package stacks

import "testing"

func TestBranchesFromCI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want Branches
	}{
		{"local", map[string]string{}, Branches{}},
		{"github pull request", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature/x", "GITHUB_REF_NAME": "12/merge"}, Branches{Dest: "main", Source: "feature/x"}},
		{"github push", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REF_TYPE": "branch", "GITHUB_REF_NAME": "main"}, Branches{Dest: "main", Source: "main"}},
		{"github tag", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REF_TYPE": "tag", "GITHUB_REF_NAME": "v1"}, Branches{}},
		{"gitlab merge request", map[string]string{"GITLAB_CI": "true", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "poc", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "dev"}, Branches{Dest: "poc", Source: "dev"}},
		{"gitlab push", map[string]string{"GITLAB_CI": "true", "CI_COMMIT_BRANCH": "main"}, Branches{Dest: "main", Source: "main"}},
		{"gitlab draft merge request", map[string]string{"GITLAB_CI": "true", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "wip", "CI_MERGE_REQUEST_DRAFT": "true"}, Branches{Dest: "main", Source: "wip", Draft: true}},
	}
	for _, tc := range tests {
		if got := BranchesFromCI(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestBranchTags: with the branches known, workflows match on
// dest_branch: and source_branch: (globs too); unknown, check warns at
// the query.
func TestBranchTags(t *testing.T) {
	root := testRepo(t, `workflows:
  - tag_query: 'deployflow and dest_branch:poc'
    plan: [{type: init}, {type: plan}]
  - tag_query: 'source_branch:feature/*'
    plan: [{type: plan}]
dirs:
  a: {tags: [deployflow]}
`, "a")
	p, diags := loadDiags(t, root)
	if diags.HasErrors() {
		t.Fatal(diagText(diags))
	}
	u := p.Units[0]
	if w := p.WorkflowFor(u); w != nil {
		t.Fatalf("a workflow matched with no branch known: %s", w.TagQuery.Value)
	}
	warnings := p.BranchTagWarnings(Branches{})
	if len(warnings) != 2 || warnings[0].String() != "strata.yml:2:16: warning: workflows[0].tag_query: the query uses dest_branch but the branch is not known (no CI pull request here): it matches nothing; pass --dest-branch and --source-branch" {
		t.Errorf("warnings:\n%s", diagText(warnings))
	}
	p, _ = loadDiags(t, root)
	p.SetBranches(Branches{Dest: "poc", Source: "feature/x"})
	if w := p.WorkflowFor(p.Units[0]); w == nil || w.TagQuery.Value != "deployflow and dest_branch:poc" {
		t.Errorf("dest_branch:poc did not match")
	}
	if len(p.BranchTagWarnings(Branches{Dest: "poc", Source: "feature/x"})) != 0 {
		t.Errorf("warned with both branches known")
	}
	p, _ = loadDiags(t, root)
	p.SetBranches(Branches{Dest: "main", Source: "feature/x"})
	if w := p.WorkflowFor(p.Units[0]); w == nil || w.TagQuery.Value != "source_branch:feature/*" {
		t.Errorf("source_branch:feature/* did not match")
	}
}
