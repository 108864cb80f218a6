package config

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
