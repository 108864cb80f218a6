package stacks

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// testRepo writes a repository: strata.yml with cfg, and a root module in
// each of dirs. It returns the root.
func testRepo(t testing.TB, cfg string, dirs ...string) string {
	t.Helper()
	root := t.TempDir()
	if cfg != "" {
		testenv.WriteFile(t, filepath.Join(root, config.StrataConfigFile), cfg)
	}
	for _, d := range dirs {
		testenv.WriteFile(t, filepath.Join(root, d, "main.tf"), `resource "terraform_data" "this" {}`+"\n")
	}
	return root
}

// loadRepo loads a repository written by testRepo and fails on config
// errors.
func loadRepo(t testing.TB, root string) *Project {
	t.Helper()
	cfg := ""
	if _, err := os.Stat(filepath.Join(root, config.StrataConfigFile)); err == nil {
		cfg = filepath.Join(root, config.StrataConfigFile)
	}
	p, err := Load(root, cfg)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

// loadDiags loads a repository that may have config errors.
func loadDiags(t testing.TB, root string) (*Project, config.Diagnostics) {
	t.Helper()
	cfg := filepath.Join(root, config.StrataConfigFile)
	if _, err := os.Stat(cfg); err != nil {
		cfg = ""
	}
	p, err := Load(root, cfg)
	if p == nil {
		t.Fatalf("load: %v", err)
	}
	return p, p.Diagnostics
}

// membership renders stack -> sorted unit names.
func membership(p *Project) map[string][]string {
	out := map[string][]string{}
	for _, s := range p.Stacks {
		if !s.Leaf {
			continue
		}
		var ids []string
		for _, u := range s.Units {
			ids = append(ids, u.Dirspace.ID())
		}
		sort.Strings(ids)
		out[s.Name] = ids
	}
	return out
}

// graphEdges renders a graph's edges, each stack edge expanded to its unit
// pairs, as "from -> to (kind)" sorted.
func graphEdges(g *Graph) []string {
	var out []string
	for _, e := range g.Expand() {
		out = append(out, e.String())
	}
	sort.Strings(out)
	return out
}

// runWhy renders a run as "unit: why" lines, sorted.
func runWhy(r *Run) []string {
	var out []string
	for _, ru := range r.Units {
		out = append(out, ru.Name()+": "+ru.Why)
	}
	sort.Strings(out)
	return out
}

// modifiedRun runs propagation from the units of the given dirs, as
// --changed does with those dirs modified.
func modifiedRun(t testing.TB, p *Project, dirs ...string) *Run {
	t.Helper()
	mod := map[*Unit]string{}
	for _, d := range dirs {
		us := p.UnitsIn(d)
		if len(us) == 0 {
			t.Fatalf("no unit in %s", d)
		}
		for _, u := range us {
			mod[u] = "modified: " + d + "/main.tf"
		}
	}
	r, err := p.Select(Selection{Cwd: ".", Modified: mod})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fullGraph(t testing.TB, p *Project) *Graph {
	t.Helper()
	g, err := p.Graph(p.Units, GraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func stackRules(p *Project, name string) string {
	s, ok := p.Stack(name)
	if !ok {
		return "<no stack " + name + ">"
	}
	return "plan_after=" + strings.Join(stackNames(s.PlanAfterClosure()), ",") +
		" apply_after=" + strings.Join(stackNames(s.ApplyAfterClosure()), ",") +
		" modified_by=" + strings.Join(stackNames(s.ModifiedByClosure()), ",")
}

func hasDiag(ds config.Diagnostics, sev config.Severity, substr string) bool {
	for _, d := range ds {
		if d.Severity == sev && strings.Contains(d.String(), substr) {
			return true
		}
	}
	return false
}
