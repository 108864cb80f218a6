package stacks

import (
	"reflect"
	"strings"
	"testing"
)

// TestExplicitSelectionPropagates: an explicit selection (a flag, or the
// dir strata runs in) runs what it names; dependents join only under
// --changed or with --propagate, and --no-propagate turns --changed's
// propagation off (docs/behaviour.md#propagation).
func TestExplicitSelectionPropagates(t *testing.T) {
	t.Parallel()
	root := testRepo(t, `dirs:
  base: {tags: [base]}
  dev/net: {tags: [dev, net]}
  dev/app:
    tags: [dev, app]
    when_modified: {depends_on: 'dir:dev/net'}
  ops/a: {tags: [ops]}
  ops/b: {tags: [ops]}
stacks:
  names:
    base: {tag_query: base}
    dev: {tag_query: dev, rules: {modified_by: [base]}}
    ops: {tag_query: ops, on_change: {run_strategy: all-for-one}}
`, "base", "dev/net", "dev/app", "ops/a", "ops/b")
	p := loadRepo(t, root)
	everything := []string{"base@default: selected", "dev/app@default: selected", "dev/net@default: selected", "ops/a@default: selected", "ops/b@default: selected"}
	baseModified := func() map[*Unit]string {
		return map[*Unit]string{p.UnitsIn("base")[0]: "modified: base/main.tf"}
	}
	tests := []struct {
		name string
		sel  Selection
		want []string
	}{
		{"root, no flag", Selection{Cwd: "."}, everything},
		{"root, --all", Selection{Cwd: ".", All: true}, everything},
		{"root, --propagate adds nothing to everything", Selection{Cwd: ".", Propagate: true}, everything},
		{"--stack", Selection{Cwd: ".", Stacks: []string{"base"}}, []string{"base@default: selected"}},
		{"--stack --propagate: modified_by", Selection{Cwd: ".", Stacks: []string{"base"}, Propagate: true},
			[]string{"base@default: selected", "dev/app@default: modified_by: base", "dev/net@default: modified_by: base"}},
		{"--dir", Selection{Cwd: ".", Dirs: []string{"dev/net"}}, []string{"dev/net@default: selected"}},
		{"--dir --propagate: depends_on", Selection{Cwd: ".", Dirs: []string{"dev/net"}, Propagate: true},
			[]string{"dev/app@default: depends_on: dev/net@default", "dev/net@default: selected"}},
		{"--query", Selection{Cwd: ".", Query: "dir:ops/a"}, []string{"ops/a@default: selected"}},
		{"--query --propagate: all-for-one", Selection{Cwd: ".", Query: "dir:ops/a", Propagate: true},
			[]string{"ops/a@default: selected", "ops/b@default: all_for_one: ops/a@default"}},
		{"--workspace", Selection{Cwd: ".", Workspace: "default", Dirs: []string{"base"}}, []string{"base@default: selected"}},
		{"drop-in dir, depends_on", Selection{Cwd: "dev/net"}, []string{"dev/net@default: selected"}},
		{"drop-in dir --propagate", Selection{Cwd: "dev/net", Propagate: true},
			[]string{"dev/app@default: depends_on: dev/net@default", "dev/net@default: selected"}},
		{"subdirectory", Selection{Cwd: "dev"}, []string{"dev/app@default: selected", "dev/net@default: selected"}},
		{"drop-in dir", Selection{Cwd: "base"}, []string{"base@default: selected"}},
		{"drop-in dir --propagate reaches outside it", Selection{Cwd: "base", Propagate: true},
			[]string{"base@default: selected", "dev/app@default: modified_by: base", "dev/net@default: modified_by: base"}},
		{"--changed propagates", Selection{Cwd: ".", Modified: baseModified()},
			[]string{"base@default: modified: base/main.tf", "dev/app@default: modified_by: base", "dev/net@default: modified_by: base"}},
		{"--changed --stack propagates", Selection{Cwd: ".", Stacks: []string{"base"}, Modified: baseModified()},
			[]string{"base@default: modified: base/main.tf", "dev/app@default: modified_by: base", "dev/net@default: modified_by: base"}},
		{"--changed --no-propagate", Selection{Cwd: ".", Modified: baseModified(), NoPropagate: true},
			[]string{"base@default: modified: base/main.tf"}},
		{"--changed with nothing changed", Selection{Cwd: ".", Modified: map[*Unit]string{}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := p.Select(tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := runWhy(r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	_, err := p.Select(Selection{Cwd: ".", Propagate: true, NoPropagate: true})
	if err == nil || !strings.Contains(err.Error(), "--propagate and --no-propagate: choose one") {
		t.Errorf("--propagate with --no-propagate: %v", err)
	}
}
