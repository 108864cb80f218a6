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
	p, modified := dependenciesProject(t)
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
			if len(r.Kept) != 0 {
				t.Errorf("kept %q out of a run that does not destroy", runWhy(&Run{Units: r.Kept}))
			}
		})
	}
}

// dependenciesProject is a repository of every edge kind: stack rules
// (one through a stack without units), inputs, auto_inputs, and a
// depends_on diamond; modified gives a --changed seed of one dir.
func dependenciesProject(t *testing.T) (p *Project, modified func(dir string) map[*Unit]string) {
	t.Helper()
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
	p = loadRepo(t, root)
	return p, func(dir string) map[*Unit]string {
		return map[*Unit]string{p.UnitsIn(dir)[0]: "modified: " + dir + "/main.tf"}
	}
}

// TestDestroyWithDependencies: a destroy --with-dependencies tears down
// what the selection alone needs; a dependency a unit outside the run
// still waits for stays, and so does what only it needs, each kept with
// who needs it (docs/behaviour.md#dependencies).
func TestDestroyWithDependencies(t *testing.T) {
	t.Parallel()
	p, _ := dependenciesProject(t)
	tests := []struct {
		name       string
		sel        Selection
		want, kept []string
	}{
		{"destroy: what another stack needs stays", Selection{Cwd: ".", Stacks: []string{"app"}, WithDependencies: true, Destroying: true},
			[]string{"app@default: selected", "net@default: dependency_of: app@default (inputs)"},
			[]string{"base@default: needed by edge@default (plan_after)"}},
		{"destroy: a diamond whole", Selection{Cwd: ".", Dirs: []string{"d/top"}, WithDependencies: true, Destroying: true},
			[]string{"d/bottom@default: dependency_of: d/left@default (depends_on)", "d/left@default: dependency_of: d/top@default (depends_on)",
				"d/right@default: dependency_of: d/top@default (depends_on)", "d/side@default: dependency_of: d/left@default (depends_on)", "d/top@default: selected"}, nil},
		{"destroy: half a diamond", Selection{Cwd: ".", Dirs: []string{"d/left"}, WithDependencies: true, Destroying: true},
			[]string{"d/left@default: selected", "d/side@default: dependency_of: d/left@default (depends_on)"},
			[]string{"d/bottom@default: needed by d/right@default (depends_on)"}},
		{"destroy: apply_after, what another stack needs kept", Selection{Cwd: ".", Stacks: []string{"prod"}, WithDependencies: true, Destroying: true},
			[]string{"app@default: dependency_of: prod@default (apply_after)", "net@default: dependency_of: app@default (inputs)", "prod@default: selected"},
			[]string{"base@default: needed by edge@default (plan_after)"}},
	}
	check := func(t *testing.T, p *Project, sel Selection, want, kept []string) {
		r, err := p.Select(sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := runWhy(r); !reflect.DeepEqual(got, want) {
			t.Errorf("got  %q\nwant %q", got, want)
		}
		if got := runWhy(&Run{Units: r.Kept}); !reflect.DeepEqual(got, kept) {
			t.Errorf("kept %q\nwant %q", got, kept)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check(t, p, tc.sel, tc.want, tc.kept)
		})
	}
	// a waits for b, b for c; x, outside the run, for b: b stays, and so
	// does c, which the b that stays needs.
	chain := loadRepo(t, testRepo(t, `dirs:
  a: {when_modified: {depends_on: 'dir:b'}}
  b: {when_modified: {depends_on: 'dir:c'}}
  x: {when_modified: {depends_on: 'dir:b'}}
`, "a", "b", "c", "x"))
	t.Run("destroy: what a kept unit needs stays too", func(t *testing.T) {
		t.Parallel()
		check(t, chain, Selection{Cwd: ".", Dirs: []string{"a"}, WithDependencies: true, Destroying: true},
			[]string{"a@default: selected"},
			[]string{"b@default: needed by x@default (depends_on)", "c@default: needed by b@default (depends_on)"})
	})
}
