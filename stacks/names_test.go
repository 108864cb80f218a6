package stacks

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

// TestUnsafeNamesInConfig: a stack or workspace name that would not stay
// one path element is an error at its key, and the rest of the config is
// still checked.
func TestUnsafeNamesInConfig(t *testing.T) {
	const cfg = `dirs:
  app:
    workspaces:
      ok: {tags: [ok]}
      "../../x": {tags: [x]}
stacks:
  names:
    x/../../../../tmp/outside/config:
      tag_query: app
    base:
      tag_query: base
      rules: {plan_after: ["x/../../../../tmp/outside/config"]}
    "a#b":
      stacks: [base]
`
	_, diags := ParseConfig("strata.yml", []byte(cfg))
	var got []string
	for _, d := range diags.Errors() {
		got = append(got, d.String())
	}
	want := []string{
		`strata.yml:5:7: dirs.app.workspaces: found workspace name "../../x": it contains '/'; ` + expectedName,
		`strata.yml:8:5: stacks.names: found stack name "x/../../../../tmp/outside/config": it contains '/'; ` + expectedName,
		`strata.yml:13:5: stacks.names: found stack name "a#b": it contains '#'; ` + expectedName,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUnsafeNameStopsLoad: the error is one of the config diagnostics that
// stop every command, so no unit of such a stack is ever run.
func TestUnsafeNameStopsLoad(t *testing.T) {
	root := testRepo(t, `stacks:
  names:
    "..":
      tag_query: ''
`, "app")
	_, diags := loadDiags(t, root)
	if !diags.HasErrors() || !hasDiag(diags, SeverityError, `strata.yml:3:5: stacks.names: found stack name "..": it names a directory of its own`) {
		t.Errorf("diagnostics: %v", diags)
	}
}
