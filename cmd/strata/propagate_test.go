package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// propagateRepo: dev is modified_by base; dev/app depends_on dev/net.
func propagateRepo(t *testing.T) string {
	return writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  base: {tags: [base]}
  dev/net: {tags: [dev, net]}
  dev/app:
    tags: [dev, app]
    when_modified: {depends_on: 'dir:dev/net'}
stacks:
  names:
    base: {tag_query: base}
    dev: {tag_query: dev, rules: {modified_by: [base]}}
`,
		"base/main.tf": "", "dev/net/main.tf": "", "dev/app/main.tf": "",
	})
}

// TestPropagateFlag: an explicit selection lists what it names, each
// `selected`; --propagate adds the dependents with their why;
// --propagate with --no-propagate is an error.
func TestPropagateFlag(t *testing.T) {
	root := propagateRepo(t)
	for _, tc := range []struct {
		dir  string
		args []string
		want []string
	}{
		{".", nil, []string{"base@default: selected", "dev/app@default: selected", "dev/net@default: selected"}},
		{".", []string{"--stack", "base"}, []string{"base@default: selected"}},
		{".", []string{"--stack", "base", "--propagate"}, []string{"base@default: selected", "dev/app@default: modified_by: base", "dev/net@default: modified_by: base"}},
		{".", []string{"--dir", "dev/net"}, []string{"dev/net@default: selected"}},
		{".", []string{"--query", "net", "--propagate"}, []string{"dev/app@default: depends_on: dev/net@default", "dev/net@default: selected"}},
		{".", []string{"--stack", "base", "--no-propagate"}, []string{"base@default: selected"}},
		{"dev/net", nil, []string{"dev/net@default: selected"}},
		{"base", []string{"--propagate"}, []string{"base@default: selected", "dev/app@default: modified_by: base", "dev/net@default: modified_by: base"}},
	} {
		args := append([]string{"-C", filepath.Join(root, tc.dir), "ls", "--json"}, tc.args...)
		code, out, errOut := strata(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s", tc.args, code, errOut)
			continue
		}
		var rows []struct{ Dir, Workspace, Why string }
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("%v: not JSON: %v\n%s", tc.args, err, out)
		}
		got := []string{}
		for _, r := range rows {
			got = append(got, r.Dir+"@"+r.Workspace+": "+r.Why)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ls in %s %v:\n got %q\nwant %q", tc.dir, tc.args, got, tc.want)
		}
	}
	code, _, errOut := strata(t, "-C", root, "ls", "--stack", "base", "--propagate", "--no-propagate")
	if code != 1 || !strings.Contains(errOut, "--propagate and --no-propagate: choose one") {
		t.Errorf("--propagate --no-propagate: exit %d, %s", code, errOut)
	}
	// graph takes the same flags: --propagate brings dev in after base.
	code, out, errOut := strata(t, "-C", root, "graph", "--format", "json", "--stack", "base", "--propagate")
	if code != 0 || !strings.Contains(out, `"dev/net@default#dev"`) {
		t.Errorf("graph --propagate: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = strata(t, "-C", root, "graph", "--format", "json", "--stack", "base")
	if code != 0 || strings.Contains(out, "dev/net") {
		t.Errorf("graph --stack base: exit %d\n%s", code, out)
	}
}
