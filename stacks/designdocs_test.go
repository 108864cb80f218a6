package stacks

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// Every YAML example of the two stacks design documents
// (shared/design-docs/stacks-rfd.adoc and nested-stacks-rfd.adoc), each as
// a repository of root modules: membership, variables, rules after
// resolution, DAG edges and, for the propagation examples, which units a
// change puts in the run.

type propagationCase struct {
	modified []string // dirs modified
	want     []string // "unit: why"
}

type docCase struct {
	name string
	cfg  string
	dirs []string

	members   map[string][]string          // leaf stack -> dirspaces
	variables map[string]map[string]string // stack -> effective variables
	rules     map[string]string            // stack -> stackRules()
	edges     []string                     // full graph edges
	runs      []propagationCase
	engines   map[string]EngineChoice // dir -> engine (From ignored)
	autoApply map[string]bool
	paths     map[string][]string
	errors    []string // substrings of expected errors (then nothing else is checked)
	warnings  []string
	// quiet: the example loads without a single warning.
	quiet    bool
	unassign []string
}

// Directory layouts reused by several examples.
var (
	envDirs     = []string{"production", "development"}
	envDirsCfg  = "dirs:\n  production:\n    tags: [production]\n  development:\n    tags: [development]\n"
	layerDirs   = []string{"network", "base", "prod", "dev"}
	layerDirCfg = "dirs:\n  network:\n    tags: [network]\n  base:\n    tags: [base]\n  prod:\n    tags: [prod]\n  dev:\n    tags: [dev]\n"
	nestedDirs  = []string{"base", "prod/service", "prod/database", "prod/network", "dev/service", "dev/database", "dev/network"}
	nestedCfg   = `dirs:
  base:
    tags: [base]
  prod/service:
    tags: [prod, compute]
  prod/database:
    tags: [prod, database]
  prod/network:
    tags: [prod, network]
  dev/service:
    tags: [dev, compute]
  dev/database:
    tags: [dev, database]
  dev/network:
    tags: [dev, network]
`
)

// designDoc reads a stacks section of the design documents kept under
// testdata/designdocs (the CLI's end-to-end tests run the same files).
func designDoc(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "designdocs", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestDesignDocExamples(t *testing.T) {
	t.Parallel()
	for _, tc := range append(append([]docCase(nil), stacksRFDCases...), nestedRFDCases...) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkDocCase(t, tc)
		})
	}
}

// checkDocCase loads the example's repository and checks what the example
// says of it.
func checkDocCase(t *testing.T, tc docCase) {
	t.Helper()
	root := testRepo(t, tc.cfg, tc.dirs...)
	p, diags := loadDiags(t, root)
	if len(tc.errors) > 0 {
		for _, want := range tc.errors {
			if !hasDiag(diags, config.SeverityError, want) {
				t.Errorf("expected an error containing %q; got:\n%s", want, diagText(diags))
			}
		}
		return
	}
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", diagText(diags))
	}
	if w := diags.Warnings(); tc.quiet && len(w) > 0 {
		t.Errorf("expected no warning; got:\n%s", diagText(w))
	}
	for _, want := range tc.warnings {
		if !hasDiag(diags, config.SeverityWarning, want) {
			t.Errorf("expected a warning containing %q; got:\n%s", want, diagText(diags))
		}
	}
	if tc.members != nil {
		got := membership(p)
		for stack, want := range tc.members {
			if !reflect.DeepEqual(got[stack], want) {
				t.Errorf("members of %s = %v, want %v", stack, got[stack], want)
			}
		}
	}
	if tc.unassign != nil {
		var got []string
		for _, ds := range p.Unassigned {
			got = append(got, ds.ID())
		}
		if !reflect.DeepEqual(got, tc.unassign) {
			t.Errorf("unassigned = %v, want %v", got, tc.unassign)
		}
	}
	checkDocStacks(t, p, tc)
	checkDocGraph(t, p, tc)
}

// checkDocStacks checks the stacks' variables, rules, auto-apply and
// paths, and the dirs' engines.
func checkDocStacks(t *testing.T, p *Project, tc docCase) {
	t.Helper()
	for stack, want := range tc.variables {
		s, _ := p.Stack(stack)
		got := map[string]string{}
		for _, v := range s.Variables {
			got[v.Name] = v.Value
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("variables of %s = %v, want %v", stack, got, want)
		}
	}
	for stack, want := range tc.rules {
		if got := stackRules(p, stack); got != want {
			t.Errorf("rules of %s:\n got %s\nwant %s", stack, got, want)
		}
	}
	for stack, want := range tc.autoApply {
		s, _ := p.Stack(stack)
		if s.AutoApply != want {
			t.Errorf("auto_apply of %s = %t, want %t", stack, s.AutoApply, want)
		}
	}
	for stack, want := range tc.paths {
		s, _ := p.Stack(stack)
		if !reflect.DeepEqual(s.Path, want) {
			t.Errorf("path of %s = %v, want %v", stack, s.Path, want)
		}
	}
	for dir, want := range tc.engines {
		got, err := p.EngineFor(p.UnitsIn(dir)[0])
		if err != nil {
			t.Fatal(err)
		}
		got.From, got.Pos = "", config.Pos{}
		if got != want {
			t.Errorf("engine of %s = %+v, want %+v", dir, got, want)
		}
	}
}

// checkDocGraph checks the DAG's edges and which units a change puts in
// the run.
func checkDocGraph(t *testing.T, p *Project, tc docCase) {
	t.Helper()
	if tc.edges != nil || tc.members != nil {
		got := graphEdges(fullGraph(t, p))
		if !reflect.DeepEqual(got, tc.edges) {
			t.Errorf("edges:\n got %q\nwant %q", got, tc.edges)
		}
	}
	for _, run := range tc.runs {
		got := runWhy(modifiedRun(t, p, run.modified...))
		if !reflect.DeepEqual(got, run.want) {
			t.Errorf("modified %v: run\n got %q\nwant %q", run.modified, got, run.want)
		}
	}
}

func diagText(ds config.Diagnostics) string {
	s := ""
	for _, d := range ds {
		s += "  " + d.String() + "\n"
	}
	return s
}
