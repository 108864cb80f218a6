package stacks

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// moduleRepo writes a repository: strata.yml with cfg and the given files
// (path -> content).
func moduleRepo(t *testing.T, cfg string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	testenv.WriteFile(t, filepath.Join(root, config.StrataConfigFile), cfg)
	for name, content := range files {
		testenv.WriteFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	return root
}

func diagLines(ds config.Diagnostics) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}

const resource = `resource "terraform_data" "this" {}` + "\n"

const (
	cycleTail       = "; expected stacks ordered without cycles (a nested stack stands for all its stacks)"
	inputsCycleTail = "; expected stacks ordered without cycles (a stack that takes an input from another is ordered after it)"
)

var cycleMods = map[string]string{"a/main.tf": resource, "b/main.tf": resource, "c/main.tf": resource, "x/main.tf": resource}

// cycleCases are configs and the cycle errors they give; files nil is
// cycleMods.
var cycleCases = []struct {
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
		want: []string{"strata.yml:5:48: stacks.names.c.rules.plan_after: rules form a cycle: a -> b -> c -> a" + cycleTail},
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
		want: []string{"strata.yml:5:48: stacks.names.b.rules.plan_after: rules form a cycle: a -> b -> a" + cycleTail},
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
		want: []string{"strata.yml:4:48: stacks.names.b.rules.plan_after: rules form a cycle: a -> b -> a" + cycleTail},
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
		want: []string{"strata.yml:6:48: stacks.names.c.rules.plan_after: rules form a cycle: a -> c -> a" + cycleTail},
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
		want: []string{"strata.yml:4:46: stacks.names.g.rules.plan_after: rules form a cycle: c -> a -> c" + cycleTail},
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
			"strata.yml:4:48: stacks.names.b.rules.plan_after: rules form a cycle: a -> b -> a" + cycleTail,
			"strata.yml:5:48: stacks.names.c.rules.plan_after: rules form a cycle: a -> c -> a" + cycleTail,
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
		want: []string{"strata.yml:4:39: stacks.names.b.inputs.y: inputs form a cycle: a -> b -> a" + inputsCycleTail},
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
		want: []string{"strata.yml:4:45: stacks.names.app.inputs.vpc: rules and inputs form a cycle: net -> app -> net" + inputsCycleTail},
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

// TestCyclesReportedOnce: each distinct cycle gives one error, written from
// its member defined first, at the rule or input entry that closes it back
// to that member, whichever member the search entered it from.
func TestCyclesReportedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range cycleCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := tc.files
			if files == nil {
				files = cycleMods
			}
			_, diags := loadDiags(t, moduleRepo(t, tc.cfg, files))
			got := diagLines(diags.Errors())
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// autoInputsCase is a config, with the app unit's inputs and the edges
// into it that auto_inputs gives, or the errors and warnings.
type autoInputsCase struct {
	name   string
	cfg    string
	files  map[string]string
	inputs []string // "var <- from" of the app unit
	edges  []string // the unit graph's edges into app
	errs   []string
	warn   []string
}

var autoInputsCases = []autoInputsCase{
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
		edges:  []string{"net@default -> app@default (plan, inputs)"},
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
		edges:  []string{"base@default -> app@default (plan, inputs)", "mid@default -> app@default (plan, plan_after)"},
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
		edges:  []string{"net@default -> app@default (plan, inputs)", "net@default -> app@default (plan, plan_after)"},
	},
	{
		name: "a top-level sibling with no rule",
		cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"net/main.tf": "output \"region\" { value = 1 }\noutput \"zone\" { value = 1 }\n",
			"app/main.tf": "variable \"region\" {}\nvariable \"zone\" {\n  default = \"a\"\n}\n",
		},
		inputs: []string{"region <- net.region (auto)", "zone <- net.zone (auto)"},
		edges:  []string{"net@default -> app@default (plan, inputs)"},
	},
	{
		name: "a sibling under the same parent",
		cfg: `stacks:
  names:
    prod: {stacks: [prod-net, prod-app]}
    dev: {stacks: [dev-net]}
    prod-net: {tag_query: dir:net}
    dev-net: {tag_query: dir:devnet}
    prod-app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"net/main.tf":    "output \"region\" { value = 1 }\n",
			"devnet/main.tf": "output \"region\" { value = 2 }\n",
			"app/main.tf":    "variable \"region\" {}\n",
		},
		inputs: []string{"region <- prod-net.region (auto)"},
		edges:  []string{"net@default -> app@default (plan, inputs)"},
	},
	{
		name: "ordered-after producers come before siblings",
		cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    other: {tag_query: dir:other}
    app: {tag_query: dir:app, auto_inputs: true, rules: {plan_after: [net]}}
`,
		files: map[string]string{
			"net/main.tf":   "output \"region\" { value = 1 }\n",
			"other/main.tf": "output \"region\" { value = 2 }\n",
			"app/main.tf":   "variable \"region\" {}\n",
		},
		inputs: []string{"region <- net.region (auto)"},
		edges:  []string{"net@default -> app@default (plan, inputs)", "net@default -> app@default (plan, plan_after)"},
	},
	{
		name: "auto_inputs on a nested stack reaches that stack's siblings",
		cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    apps: {stacks: [app], auto_inputs: true}
    app: {tag_query: dir:app}
`,
		files: map[string]string{
			"net/main.tf": "output \"region\" { value = 1 }\n",
			"app/main.tf": "variable \"region\" {}\n",
		},
		inputs: []string{"region <- net.region (auto)"},
		edges:  []string{"net@default -> app@default (plan, inputs)"},
	},
	{
		name: "auto_inputs on a leaf reaches a cousin, as on its parent",
		cfg: `stacks:
  names:
    prod: {stacks: [prod-app]}
    shared: {stacks: [shared-net]}
    shared-net: {tag_query: dir:net}
    prod-app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"net/main.tf": "output \"region\" { value = 1 }\noutput \"zone\" { value = 1 }\n",
			"app/main.tf": "variable \"region\" {}\nvariable \"zone\" {\n  default = \"a\"\n}\n",
		},
		inputs: []string{"region <- shared-net.region (auto)", "zone <- shared-net.zone (auto)"},
		edges:  []string{"net@default -> app@default (plan, inputs)"},
	},
	{
		name: "auto_inputs on a parent reaches a cousin",
		cfg: `stacks:
  names:
    prod: {stacks: [prod-app], auto_inputs: true}
    shared: {stacks: [shared-net]}
    shared-net: {tag_query: dir:net}
    prod-app: {tag_query: dir:app}
`,
		files: map[string]string{
			"net/main.tf": "output \"region\" { value = 1 }\n",
			"app/main.tf": "variable \"region\" {}\n",
		},
		inputs: []string{"region <- shared-net.region (auto)"},
		edges:  []string{"net@default -> app@default (plan, inputs)"},
	},
	{
		name: "a sibling is nearer than a cousin",
		cfg: `stacks:
  names:
    prod: {stacks: [prod-app, prod-net]}
    shared: {stacks: [shared-net]}
    shared-net: {tag_query: dir:net}
    prod-net: {tag_query: dir:pnet}
    prod-app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"net/main.tf":  "output \"region\" { value = 1 }\n",
			"pnet/main.tf": "output \"region\" { value = 2 }\n",
			"app/main.tf":  "variable \"region\" {}\n",
		},
		inputs: []string{"region <- prod-net.region (auto)"},
		edges:  []string{"pnet@default -> app@default (plan, inputs)"},
	},
	{
		name: "two cousin producers",
		cfg: `stacks:
  names:
    prod: {stacks: [prod-app]}
    shared: {stacks: [net-a, net-b]}
    net-a: {tag_query: dir:a}
    net-b: {tag_query: dir:b}
    prod-app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"a/main.tf":   "output \"region\" { value = 1 }\n",
			"b/main.tf":   "output \"region\" { value = 2 }\n",
			"app/main.tf": "variable \"region\" {}\n",
		},
		errs: []string{`strata.yml:7:49: stacks.names.prod-app.auto_inputs: variable "region" of app@default: 2 cousin units declare output "region": a@default (stack net-a), b@default (stack net-b); expected exactly one producer: settle it with an inputs entry`},
	},
	{
		name: "two sibling producers",
		cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    db: {tag_query: dir:db}
    app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"net/main.tf": "output \"region\" { value = 1 }\n",
			"db/main.tf":  "output \"region\" { value = 2 }\n",
			"app/main.tf": "variable \"region\" {}\n",
		},
		errs: []string{`strata.yml:5:44: stacks.names.app.auto_inputs: variable "region" of app@default: 2 sibling units declare output "region": db@default (stack db), net@default (stack net); expected exactly one producer: settle it with an inputs entry`},
	},
	{
		name: "inputs settles two sibling producers",
		cfg: `stacks:
  names:
    net: {tag_query: dir:net}
    db: {tag_query: dir:db}
    app: {tag_query: dir:app, auto_inputs: true, inputs: {region: db.region}}
`,
		files: map[string]string{
			"net/main.tf": "output \"region\" { value = 1 }\n",
			"db/main.tf":  "output \"region\" { value = 2 }\n",
			"app/main.tf": "variable \"region\" {}\n",
		},
		inputs: []string{"region <- db.region"},
		edges:  []string{"db@default -> app@default (plan, inputs)"},
	},
	{
		name: "a sibling that waits for the consumer closes a cycle",
		cfg: `stacks:
  names:
    net: {tag_query: dir:net, rules: {plan_after: [app]}}
    app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"net/main.tf": "output \"region\" { value = 1 }\n",
			"app/main.tf": "variable \"region\" {}\n",
		},
		errs: []string{`strata.yml:4:44: stacks.names.app.auto_inputs: variable "region" of app@default: wiring it to output "region" of net@default (stack net) would close a cycle: app -> net -> app; expected a producer that is not ordered after app: set the variable with an inputs entry or drop the rule that orders net after app`},
	},
	{
		name: "two auto_inputs siblings wiring each other",
		cfg: `stacks:
  names:
    net: {tag_query: dir:net, auto_inputs: true}
    app: {tag_query: dir:app, auto_inputs: true}
`,
		files: map[string]string{
			"net/main.tf": "variable \"name\" {}\noutput \"region\" { value = 1 }\n",
			"app/main.tf": "variable \"region\" {}\noutput \"name\" { value = 1 }\n",
		},
		errs: []string{`strata.yml:4:44: stacks.names.app.auto_inputs: variable "region" of app@default: wiring it to output "region" of net@default (stack net) would close a cycle: app -> net -> app; expected a producer that is not ordered after app: set the variable with an inputs entry or drop the rule that orders net after app`},
	},
}

// TestAutoInputsOrder: auto_inputs wires a declared variable from the
// stacks a stack is ordered after (plan_after, inputs, transitively), else
// from its siblings, nearest first; a sibling producer orders the consumer
// after it. Two producers and a wiring that closes a cycle are errors at
// the auto_inputs key; a required variable only other stacks output is a
// warning.
func TestAutoInputsOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range autoInputsCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkAutoInputs(t, tc)
		})
	}
}

// checkAutoInputs loads tc's repository and checks its errors and
// warnings, then the app unit's inputs and the edges into it.
func checkAutoInputs(t *testing.T, tc autoInputsCase) {
	t.Helper()
	p, diags := loadDiags(t, moduleRepo(t, tc.cfg, tc.files))
	if got := diagLines(diags.Errors()); strings.Join(got, "\n") != strings.Join(tc.errs, "\n") {
		t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.errs, "\n"))
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
	if len(tc.errs) > 0 {
		return
	}
	app := p.UnitsIn("app")[0]
	var got []string
	for _, in := range p.Inputs(app) {
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
	g, err := p.Graph(p.Units, GraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var edges []string
	for _, e := range g.Expand() {
		if e.To != app {
			continue
		}
		edges = append(edges, fmt.Sprintf("%s -> %s (%s, %s)", e.From.Name(), e.To.Name(), e.Kind, e.Why))
	}
	sort.Strings(edges)
	if strings.Join(edges, "\n") != strings.Join(tc.edges, "\n") {
		t.Errorf("edges into app:\n%s\nwant:\n%s", strings.Join(edges, "\n"), strings.Join(tc.edges, "\n"))
	}
}
