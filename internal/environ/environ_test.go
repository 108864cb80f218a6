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
