package subst

import "testing"

func TestExpand(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"environment": "prod", "STRATA_STACK": "app", "x": "1"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct {
		in, want, unknown string
	}{
		{"plain", "plain", ""},
		{"${environment}", "prod", ""},
		{"$environment-x", "prod-x", ""},
		{"key=${STRATA_STACK}/terraform.tfstate", "key=app/terraform.tfstate", ""},
		{"$${x} and $$x", "${x} and $x", ""},
		{"cost: $", "cost: $", ""},
		{"${missing}", "", "missing"},
		{"$missing", "", "missing"},
		{"${unterminated", "${unterminated", ""},
		{"a$1", "a$1", ""},
	}
	for _, tc := range tests {
		got, name, ok := Expand(tc.in, lookup)
		if tc.unknown != "" {
			if ok || name != tc.unknown {
				t.Errorf("Expand(%q): ok %t name %q, want unknown %q", tc.in, ok, name, tc.unknown)
			}
			continue
		}
		if !ok || got != tc.want {
			t.Errorf("Expand(%q) = %q, %t; want %q", tc.in, got, ok, tc.want)
		}
	}
}
