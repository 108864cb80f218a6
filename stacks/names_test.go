package stacks

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// expectedName is what a name must be, as the config's check says it.
const expectedName = "expected a name usable as one path segment: letters, digits and - _ . ~ $ & + : = @, not starting with -, and not . or .."

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
	_, diags := config.Parse("strata.yml", []byte(cfg))
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
	if !diags.HasErrors() || !hasDiag(diags, config.SeverityError, `strata.yml:3:5: stacks.names: found stack name "..": it names a directory of its own`) {
		t.Errorf("diagnostics: %v", diags)
	}
}
