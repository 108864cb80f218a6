package spell

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"plan", "plan", 0}, {"plna", "plan", 2}, {"aplly", "apply", 1},
		{"prod/netwrok", "prod/network", 2}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
