package stacks

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// moduleRepo writes a repository: strata.yml with cfg and the given files
// (path -> content).
func moduleRepo(t *testing.T, cfg string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	testenv.WriteFile(t, filepath.Join(root, StrataConfigFile), cfg)
	for name, content := range files {
		testenv.WriteFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	return root
}

func diagLines(ds Diagnostics) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}

const resource = `resource "terraform_data" "this" {}` + "\n"

// TestCyclesReportedOnce: each distinct cycle gives one error, written from
// its member defined first, at the rule or input entry that closes it back
// to that member, whichever member the search entered it from.
func TestCyclesReportedOnce(t *testing.T) {
	const tail = "; expected stacks ordered without cycles (a nested stack stands for all its stacks)"
	const inputsTail = "; expected stacks ordered without cycles (a stack that takes an input from another is ordered after it)"
	mods := map[string]string{"a/main.tf": resource, "b/main.tf": resource, "c/main.tf": resource, "x/main.tf": resource}
	cases := []struct {
		name  string
		cfg   string
		files map[string]string
		want  []string
	}{
		{
			name: "three stacks",
			cfg: `stacks:
  names:
    a: {tag_query: dir:a, rules: {plan_after: [b]}}
    b: {tag_query: dir:b, rules: {plan_after: [c]}}
    c: {tag_query: dir:c, rules: {plan_after: [a]}}
`,
			want: []string{"strata.yml:5:48: stacks.names.c.rules.plan_after: rules form a cycle: a -> b -> c -> a" + tail},
		},
		{
			name: "entered from a stack outside the cycle",
			cfg: `stacks:
  names:
    x: {tag_query: dir:x, rules: {plan_after: [b]}}
    a: {tag_query: dir:a, rules: {plan_after: [b]}}
    b: {tag_query: dir:b, rules: {plan_after: [a]}}
    c: {tag_query: dir:c}
`,
			want: []string{"strata.yml:5:48: stacks.names.b.rules.plan_after: rules form a cycle: a -> b -> a" + tail},
		},
		{
			name: "plan_after and apply_after both",
			cfg: `stacks:
  names:
    a: {tag_query: dir:a, rules: {plan_after: [b], apply_after: [b]}}
    b: {tag_query: dir:b, rules: {plan_after: [a], apply_after: [a]}}
    c: {tag_query: dir:c}
    x: {tag_query: dir:x}
`,
			want: []string{"strata.yml:4:48: stacks.names.b.rules.plan_after: rules form a cycle: a -> b -> a" + tail},
		},
		{
			name: "a rule inherited from a nesting stack",
			cfg: `stacks:
  names:
    g: {stacks: [a, b], rules: {plan_after: [c]}}
    a: {tag_query: dir:a}
    b: {tag_query: dir:b}
    c: {tag_query: dir:c, rules: {plan_after: [a]}}
    x: {tag_query: dir:x}
`,
			want: []string{"strata.yml:6:48: stacks.names.c.rules.plan_after: rules form a cycle: a -> c -> a" + tail},
		},
		{
			name: "the nesting stack's rule closes it",
			cfg: `stacks:
  names:
    c: {tag_query: dir:c, rules: {plan_after: [a]}}
    g: {stacks: [a, b], rules: {plan_after: [c]}}
    a: {tag_query: dir:a}
    b: {tag_query: dir:b}
    x: {tag_query: dir:x}
`,
			want: []string{"strata.yml:4:46: stacks.names.g.rules.plan_after: rules form a cycle: c -> a -> c" + tail},
		},
		{
			name: "a rule of a group naming its own stack is no cycle",
			cfg: `stacks:
  names:
    g: {stacks: [a, b], rules: {plan_after: [a]}}
    a: {tag_query: dir:a}
    b: {tag_query: dir:b}
    c: {tag_query: dir:c}
    x: {tag_query: dir:x}
`,
		},
		{
			name: "two cycles through one stack",
			cfg: `stacks:
  names:
    a: {tag_query: dir:a, rules: {plan_after: [b, c]}}
    b: {tag_query: dir:b, rules: {plan_after: [a]}}
    c: {tag_query: dir:c, rules: {plan_after: [a]}}
    x: {tag_query: dir:x}
`,
			want: []string{
				"strata.yml:4:48: stacks.names.b.rules.plan_after: rules form a cycle: a -> b -> a" + tail,
				"strata.yml:5:48: stacks.names.c.rules.plan_after: rules form a cycle: a -> c -> a" + tail,
			},
		},
		{
			name: "inputs both ways",
			cfg: `stacks:
  names:
    a: {tag_query: dir:a, inputs: {x: b.out}}
    b: {tag_query: dir:b, inputs: {y: a.out}}
`,
			files: map[string]string{
				"a/main.tf": "variable \"x\" {}\noutput \"out\" { value = 1 }\n",
				"b/main.tf": "variable \"y\" {}\noutput \"out\" { value = 1 }\n",
			},
			want: []string{"strata.yml:4:39: stacks.names.b.inputs.y: inputs form a cycle: a -> b -> a" + inputsTail},
		},
		{
			name: "inputs and plan_after",
			cfg: `stacks:
  names:
    net: {tag_query: dir:net, rules: {plan_after: [app]}}
    app: {tag_query: dir:app, inputs: {vpc: net.vpc}}
`,
			files: map[string]string{
				"net/main.tf": "output \"vpc\" { value = 1 }\n",
				"app/main.tf": "variable \"vpc\" {}\n",
			},
			want: []string{"strata.yml:4:45: stacks.names.app.inputs.vpc: rules and inputs form a cycle: net -> app -> net" + inputsTail},
		},
		{
			name: "an input from a unit of the same stack is no cycle",
			cfg: `stacks:
  names:
    g: {stacks: [a, b], inputs: {x: {dir: a, output: out}}}
    a: {tag_query: dir:a}
    b: {tag_query: dir:b}
`,
			files: map[string]string{
				"a/main.tf": "variable \"x\" {\n  default = 1\n}\noutput \"out\" { value = 1 }\n",
				"b/main.tf": "variable \"x\" {}\n",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := tc.files
			if files == nil {
				files = mods
			}
			_, diags := loadDiags(t, moduleRepo(t, tc.cfg, files))
			got := diagLines(diags.Errors())
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestAutoInputsOrder: auto_inputs wires from the stacks a stack is ordered
// after by plan_after or by its own inputs, transitively, and warns about a
// required variable only stacks it is not ordered after declare.
func TestAutoInputsOrder(t *testing.T) {
	cases := []struct {
		name   string
		cfg    string
		files  map[string]string
		inputs []string // "unit var <- from" of the app unit
		warn   []string
	}{
		{
			name: "through an inputs reference",
			cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    app: {tag_query: dir:app, inputs: {x: net.x}, auto_inputs: true}
`,
			files: map[string]string{
				"net/main.tf": "output \"x\" { value = 1 }\noutput \"y\" { value = 2 }\n",
				"app/main.tf": "variable \"x\" {}\nvariable \"y\" {}\n",
			},
			inputs: []string{"x <- net.x", "y <- net.y (auto)"},
		},
		{
			name: "through another stack's inputs",
			cfg: `stacks:
  names:
    base: {tag_query: dir:base}
    mid: {tag_query: dir:mid, inputs: {x: base.x}}
    app: {tag_query: dir:app, auto_inputs: true, rules: {plan_after: [mid]}}
`,
			files: map[string]string{
				"base/main.tf": "output \"x\" { value = 1 }\noutput \"region\" { value = 2 }\n",
				"mid/main.tf":  "variable \"x\" {}\n",
				"app/main.tf":  "variable \"region\" {}\n",
			},
			inputs: []string{"region <- base.region (auto)"},
		},
		{
			name: "through plan_after",
			cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    app: {tag_query: dir:app, auto_inputs: true, rules: {plan_after: [net]}}
`,
			files: map[string]string{
				"net/main.tf": "output \"region\" { value = 1 }\n",
				"app/main.tf": "variable \"region\" {}\n",
			},
			inputs: []string{"region <- net.region (auto)"},
		},
		{
			name: "not ordered after the producer",
			cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    app: {tag_query: dir:app, auto_inputs: true}
`,
			files: map[string]string{
				"net/main.tf": "output \"region\" { value = 1 }\noutput \"zone\" { value = 1 }\n",
				"app/main.tf": "variable \"region\" {}\nvariable \"zone\" {\n  default = \"a\"\n}\n",
			},
			warn: []string{"strata.yml:4:44: warning: stacks.names.app.auto_inputs: variable region of app is an output of net, which app is not ordered after; add plan_after: [net] or an inputs entry"},
		},
		{
			name: "a downstream producer is no fix",
			cfg: `stacks:
  names:
    net: {tag_query: dir:net, rules: {plan_after: [app]}}
    app: {tag_query: dir:app, auto_inputs: true}
`,
			files: map[string]string{
				"net/main.tf": "output \"region\" { value = 1 }\n",
				"app/main.tf": "variable \"region\" {}\n",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := loadDiags(t, moduleRepo(t, tc.cfg, tc.files))
			if errs := diags.Errors(); len(errs) > 0 {
				t.Fatalf("errors:\n%s", diagText(errs))
			}
			var got []string
			for _, in := range p.Inputs(p.UnitsIn("app")[0]) {
				s := in.Var + " <- " + in.From
				if in.Auto {
					s += " (auto)"
				}
				got = append(got, s)
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(tc.inputs, "\n") {
				t.Errorf("inputs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.inputs, "\n"))
			}
			var warns []string
			for _, w := range diagLines(diags.Warnings()) {
				if strings.Contains(w, "auto_inputs") {
					warns = append(warns, w)
				}
			}
			if strings.Join(warns, "\n") != strings.Join(tc.warn, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(tc.warn, "\n"))
			}
		})
	}
}
