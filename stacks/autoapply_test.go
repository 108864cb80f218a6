package stacks

import "testing"

func TestAutoApplyConditionHolds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		c                   AutoApplyCondition
		add, change, remove int
		want                string
	}{
		{"no condition", AutoApplyCondition{}, 5, 5, 5, ""},
		{"no deletes, none", AutoApplyCondition{NoDeletes: true}, 3, 1, 0, ""},
		{"no deletes, a replacement", AutoApplyCondition{NoDeletes: true}, 1, 0, 1, "auto_apply when no_deletes: the plan destroys 1 (+1 ~0 -1)"},
		{"at the limit", AutoApplyCondition{MaxChanges: 4, HasMax: true}, 2, 1, 1, ""},
		{"over the limit", AutoApplyCondition{MaxChanges: 4, HasMax: true}, 3, 1, 1, "auto_apply max_changes 4: the plan makes 5 (+3 ~1 -1)"},
		{"a limit of zero", AutoApplyCondition{HasMax: true}, 0, 1, 0, "auto_apply max_changes 0: the plan makes 1 (+0 ~1 -0)"},
		{"both, deletes first", AutoApplyCondition{NoDeletes: true, MaxChanges: 1, HasMax: true}, 3, 0, 2, "auto_apply when no_deletes: the plan destroys 2 (+3 ~0 -2)"},
	}
	for _, tt := range tests {
		if got := tt.c.Holds(tt.add, tt.change, tt.remove); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

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
		if_   AutoApplyCondition
	}{
		{"plain", true, AutoApplyCondition{}},
		{"guarded", true, AutoApplyCondition{NoDeletes: true, MaxChanges: 3, HasMax: true}},
		{"child", true, AutoApplyCondition{NoDeletes: true}},
		{"off", false, AutoApplyCondition{NoDeletes: true}},
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
