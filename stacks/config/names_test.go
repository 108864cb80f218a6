package config

import (
	"strings"
	"testing"
)

func TestUnsafeName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, why string
	}{
		{"prod", ""},
		{"eu-west-1", ""},
		{"app_dev3", ""},
		{"v1.2", ""},
		{"a~b", ""},
		{"team@eu", ""},
		{"a:b=c+d&e$f", ""},
		{"...", ""},
		{"", "it is empty"},
		{".", "it names a directory of its own"},
		{"..", "it names a directory of its own"},
		{"-x", "it starts with -"},
		{"x/../../../../etc/config", "it contains '/'"},
		{"/abs", "it contains '/'"},
		{`a\b`, `it contains '\\'`},
		{"a\x00b", `it contains '\x00'`},
		{"a#b", "it contains '#'"},
		{"a b", "it contains ' '"},
		{"a%2Fb", "it contains '%'"},
		{"a?b", "it contains '?'"},
		{"a;b", "it contains ';'"},
		{"a,b", "it contains ','"},
		{"a\nb", `it contains '\n'`},
		{"prod\u00e9", "it contains 'é'"},
	} {
		if got := unsafeName(tc.name); got != tc.why {
			t.Errorf("unsafeName(%q) = %q, want %q", tc.name, got, tc.why)
		}
	}
}

// TestInstanceKeyShape: a for_each key names a workspace, a part of a
// stack's name and a path element.
func TestInstanceKeyShape(t *testing.T) {
	for key, want := range map[string]bool{
		"prod": true, "eu-west-1": true, "a_b": true, "0": true, strings.Repeat("k", 63): true,
		"": false, "-a": false, "_a": false, "a.b": false, "a/b": false, "a b": false, strings.Repeat("k", 64): false, "ü": false,
	} {
		if got := ValidInstanceKey(key); got != want {
			t.Errorf("ValidInstanceKey(%q) = %v, want %v", key, got, want)
		}
	}
}
