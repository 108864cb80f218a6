package stacks

import (
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// TestAutoApplyForms: auto_apply as a bool or a map, in rules or at the
// top of a stack, inherited by the leaves of a nested stack.
func TestAutoApplyForms(t *testing.T) {
	t.Parallel()
	p := loadRepo(t, testRepo(t, `dirs:
  a: {tags: [a]}
  b: {tags: [b]}
  c: {tags: [c]}
  d: {tags: [d]}
stacks:
  names:
    plain: {tag_query: a, auto_apply: true}
    guarded:
      tag_query: b
      rules:
        auto_apply: {when: no_deletes, max_changes: 3}
    parent:
      stacks: [child]
      auto_apply: {when: no_deletes}
    child: {tag_query: c}
    off:
      tag_query: d
      auto_apply: {enabled: false, when: no_deletes}
`, "a", "b", "c", "d"))
	tests := []struct {
		stack string
		on    bool
		if_   config.AutoApplyCondition
	}{
		{"plain", true, config.AutoApplyCondition{}},
		{"guarded", true, config.AutoApplyCondition{NoDeletes: true, MaxChanges: 3, HasMax: true}},
		{"child", true, config.AutoApplyCondition{NoDeletes: true}},
		{"off", false, config.AutoApplyCondition{NoDeletes: true}},
	}
	for _, tt := range tests {
		s := mustStack(t, p, tt.stack)
		if s.AutoApply != tt.on || s.AutoApplyIf != tt.if_ {
			t.Errorf("%s: auto_apply %t if %+v; want %t if %+v", tt.stack, s.AutoApply, s.AutoApplyIf, tt.on, tt.if_)
		}
	}
}

// TestAutoplanDraftPR: on a draft pull request a dirspace with
// autoplan_draft_pr false is not modified by its changes; on a ready one,
// or with the default, it is.
func TestAutoplanDraftPR(t *testing.T) {
	t.Parallel()
	root := testRepo(t, `dirs:
  quiet:
    when_modified: {autoplan_draft_pr: false}
  eager: {}
`, "quiet", "eager")
	changes := []FileChange{{Path: "quiet/main.tf", Status: "M"}, {Path: "eager/main.tf", Status: "M"}}
	for _, draft := range []bool{false, true} {
		p := loadRepo(t, root)
		p.SetBranches(Branches{Dest: "main", Source: "wip", Draft: draft})
		modified, _ := p.ModifiedUnits(changes)
		got := map[string]bool{}
		for u := range modified {
			got[u.Dir] = true
		}
		if !got["eager"] || got["quiet"] == draft {
			t.Errorf("draft %t: modified %v", draft, got)
		}
	}
}
