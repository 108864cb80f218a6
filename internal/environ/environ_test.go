package environ

import "testing"

func TestLookup(t *testing.T) {
	t.Parallel()
	env := []string{"A=1", "B=", "A=2", "C=x=y", "malformed"}
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"A", "2", true},   // the last entry wins
		{"B", "", true},    // set, empty
		{"C", "x=y", true}, // the value keeps its "="
		{"D", "", false},   // unset
		{"malformed", "", false},
	}
	for _, tt := range tests {
		if got, ok := Lookup(env, tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if got := Getenv(env)(tt.name); got != tt.want {
			t.Errorf("Getenv(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestInCI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{nil, false},
		{[]string{"CI=true"}, true},
		{[]string{"CI=1"}, true},
		{[]string{"CI=false"}, false},
		{[]string{"CI=0"}, false},
		{[]string{"GITHUB_ACTIONS=true"}, true},
		{[]string{"GITLAB_CI=true"}, true},
		{[]string{"CI="}, false},
	} {
		if got := InCI(Getenv(tc.env)); got != tc.want {
			t.Errorf("InCI(%q) = %t, want %t", tc.env, got, tc.want)
		}
	}
}
