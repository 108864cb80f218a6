package stacks

import (
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// TestWithDependencies: --with-dependencies adds what the run's units wait
// for, transitively, over plan_after, apply_after (through a stack without
// units), depends_on, inputs and auto_inputs, each added unit naming the
// unit it was added for; it goes with every selection flag, --propagate,
// --changed and --no-propagate (docs/behaviour.md#dependencies).
func TestWithDependencies(t *testing.T) {
	t.Parallel()
	root := testRepo(t, `dirs:
  d/top: {when_modified: {depends_on: 'dir:d/left or dir:d/right'}}
  d/left: {when_modified: {depends_on: 'dir:d/bottom or dir:d/side'}}
  d/right: {when_modified: {depends_on: 'dir:d/bottom'}}
stacks:
  names:
    base: {tag_query: 'dir:base'}
    net: {tag_query: 'dir:net', rules: {plan_after: [base]}}
    app: {tag_query: 'dir:app', inputs: {vpc_id: net.vpc_id}}
    prod: {tag_query: 'dir:prod', rules: {apply_after: [app]}}
    db: {tag_query: 'dir:db'}
    api: {tag_query: 'dir:api', auto_inputs: true}
    mid: {tag_query: 'dir:nowhere', rules: {plan_after: [base]}}
    edge: {tag_query: 'dir:edge', rules: {plan_after: [mid]}}
    diamond: {tag_query: 'dir:d/top or dir:d/left or dir:d/right or dir:d/bottom or dir:d/side'}
`, "base", "net", "prod", "edge", "d/top", "d/left", "d/right", "d/bottom", "d/side")
	for f, body := range map[string]string{
		"net/main.tf": `output "vpc_id" { value = "v" }` + "\n",
		"app/main.tf": `variable "vpc_id" {}` + "\n",
		"db/main.tf":  `output "db_url" { value = "u" }` + "\n",
		"api/main.tf": `variable "db_url" {}` + "\n",
	} {
		testenv.WriteFile(t, filepath.Join(root, f), body)
	}
	p := loadRepo(t, root)
	modified := func(dir string) map[*Unit]string {
		return map[*Unit]string{p.UnitsIn(dir)[0]: "modified: " + dir + "/main.tf"}
	}
	var everything []string
	for _, u := range p.Units {
		everything = append(everything, u.Name()+": "+WhySelected)
	}
	sort.Strings(everything)
	appWithDeps := []string{"app@default: selected", "base@default: dependency_of: net@default (plan_after)", "net@default: dependency_of: app@default (inputs)"}
	tests := []struct {
		name string
		sel  Selection
		want []string
	}{
		{"--stack alone", Selection{Cwd: ".", Stacks: []string{"app"}}, []string{"app@default: selected"}},
		{"--stack: inputs, then plan_after", Selection{Cwd: ".", Stacks: []string{"app"}, WithDependencies: true}, appWithDeps},
		{"--dir", Selection{Cwd: ".", Dirs: []string{"app"}, WithDependencies: true}, appWithDeps},
		{"--query", Selection{Cwd: ".", Query: "dir:app", WithDependencies: true}, appWithDeps},
		{"--workspace", Selection{Cwd: ".", Dirs: []string{"app"}, Workspace: "default", WithDependencies: true}, appWithDeps},
		{"drop-in dir", Selection{Cwd: "app", WithDependencies: true}, appWithDeps},
		{"apply_after", Selection{Cwd: ".", Stacks: []string{"prod"}, WithDependencies: true},
			[]string{"app@default: dependency_of: prod@default (apply_after)", "base@default: dependency_of: net@default (plan_after)",
				"net@default: dependency_of: app@default (inputs)", "prod@default: selected"}},
		{"auto_inputs", Selection{Cwd: ".", Stacks: []string{"api"}, WithDependencies: true},
			[]string{"api@default: selected", "db@default: dependency_of: api@default (auto_inputs)"}},
		{"through a stack without units", Selection{Cwd: ".", Stacks: []string{"edge"}, WithDependencies: true},
			[]string{"base@default: dependency_of: edge@default (plan_after)", "edge@default: selected"}},
		{"diamond over depends_on", Selection{Cwd: ".", Dirs: []string{"d/top"}, WithDependencies: true},
			[]string{"d/bottom@default: dependency_of: d/left@default (depends_on)", "d/left@default: dependency_of: d/top@default (depends_on)",
				"d/right@default: dependency_of: d/top@default (depends_on)", "d/side@default: dependency_of: d/left@default (depends_on)", "d/top@default: selected"}},
		{"--propagate alone", Selection{Cwd: ".", Dirs: []string{"d/bottom"}, Propagate: true},
			[]string{"d/bottom@default: selected", "d/left@default: depends_on: d/bottom@default",
				"d/right@default: depends_on: d/bottom@default", "d/top@default: depends_on: d/left@default"}},
		{"--propagate: what propagation added waits for its own", Selection{Cwd: ".", Dirs: []string{"d/bottom"}, Propagate: true, WithDependencies: true},
			[]string{"d/bottom@default: selected", "d/left@default: depends_on: d/bottom@default", "d/right@default: depends_on: d/bottom@default",
				"d/side@default: dependency_of: d/left@default (depends_on)", "d/top@default: depends_on: d/left@default"}},
		{"--changed propagates, then dependencies", Selection{Cwd: ".", Modified: modified("d/left"), WithDependencies: true},
			[]string{"d/bottom@default: dependency_of: d/left@default (depends_on)", "d/left@default: modified: d/left/main.tf",
				"d/right@default: dependency_of: d/top@default (depends_on)", "d/side@default: dependency_of: d/left@default (depends_on)",
				"d/top@default: depends_on: d/left@default"}},
		{"--changed --no-propagate", Selection{Cwd: ".", Modified: modified("d/left"), NoPropagate: true, WithDependencies: true},
			[]string{"d/bottom@default: dependency_of: d/left@default (depends_on)", "d/left@default: modified: d/left/main.tf",
				"d/side@default: dependency_of: d/left@default (depends_on)"}},
		{"--changed --stack", Selection{Cwd: ".", Stacks: []string{"app"}, Modified: modified("app"), WithDependencies: true},
			[]string{"app@default: modified: app/main.tf", "base@default: dependency_of: net@default (plan_after)", "net@default: dependency_of: app@default (inputs)"}},
		{"--changed: a modified unit outside the selection brings none", Selection{Cwd: ".", Stacks: []string{"net"}, Modified: modified("app"), WithDependencies: true}, nil},
		{"--changed with nothing changed", Selection{Cwd: ".", Modified: map[*Unit]string{}, WithDependencies: true}, nil},
		{"--all: every unit is in already", Selection{Cwd: ".", All: true, WithDependencies: true}, everything},
		{"a selection without dependencies", Selection{Cwd: ".", Stacks: []string{"base"}, WithDependencies: true}, []string{"base@default: selected"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := p.Select(tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := runWhy(r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
