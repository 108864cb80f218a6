package config

import (
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
