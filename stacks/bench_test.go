package stacks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// genRepo writes a repository of 10,000 dirspaces (5,000 root modules in two
// workspaces each) and 500 stacks nested three deep: 20 groups of 4 mid
// stacks of 5 leaves. Leaves plan after the previous leaf of their mid
// stack, mid stacks are modified by the previous mid stack of their group,
// and each group applies after the previous group.
func genRepo(tb testing.TB, dir string) {
	const groups, mids, leaves, dirsPerLeaf = 20, 4, 5, 12
	var cfg strings.Builder
	cfg.WriteString("dirs:\n")
	var stacksCfg strings.Builder
	stacksCfg.WriteString("stacks:\n  names:\n")
	for g := 0; g < groups; g++ {
		fmt.Fprintf(&stacksCfg, "    g%d:\n      stacks: [", g)
		for m := 0; m < mids; m++ {
			if m > 0 {
				stacksCfg.WriteString(", ")
			}
			fmt.Fprintf(&stacksCfg, "g%dm%d", g, m)
		}
		stacksCfg.WriteString("]\n      variables: {group: g" + fmt.Sprint(g) + "}\n")
		if g > 0 {
			fmt.Fprintf(&stacksCfg, "      rules: {apply_after: [g%d]}\n", g-1)
		}
		for m := 0; m < mids; m++ {
			fmt.Fprintf(&stacksCfg, "    g%dm%d:\n      stacks: [", g, m)
			for l := 0; l < leaves; l++ {
				if l > 0 {
					stacksCfg.WriteString(", ")
				}
				fmt.Fprintf(&stacksCfg, "g%dm%dl%d", g, m, l)
			}
			stacksCfg.WriteString("]\n")
			if m > 0 {
				fmt.Fprintf(&stacksCfg, "      rules: {modified_by: [g%dm%d]}\n", g, m-1)
			}
			for l := 0; l < leaves; l++ {
				name := fmt.Sprintf("g%dm%dl%d", g, m, l)
				fmt.Fprintf(&stacksCfg, "    %s:\n      tag_query: %s\n      variables: {leaf: %s}\n", name, name, name)
				if l > 0 {
					fmt.Fprintf(&stacksCfg, "      rules: {plan_after: [g%dm%dl%d]}\n", g, m, l-1)
				}
				fmt.Fprintf(&cfg, "  g%d/m%d/l%d/**:\n    tags: [%s]\n    workspaces: {blue: {tags: [blue]}, green: {tags: [green]}}\n", g, m, l, name)
				// Every other leaf has one more dir: 400 × 12 + 200 = 5,000.
				count := dirsPerLeaf + (l+1)%2*((g*mids+m)%2) + l%2*(1-(g*mids+m)%2)
				for d := 0; d < count; d++ {
					p := filepath.Join(dir, fmt.Sprintf("g%d/m%d/l%d/svc%d", g, m, l, d))
					if err := os.MkdirAll(p, 0o755); err != nil {
						tb.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(p, "main.tf"), []byte(`resource "terraform_data" "this" {}`+"\n"), 0o644); err != nil {
						tb.Fatal(err)
					}
				}
			}
		}
	}
	cfg.WriteString(stacksCfg.String())
	if err := os.WriteFile(filepath.Join(dir, config.StrataConfigFile), []byte(cfg.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

var benchRepo string

func benchRepoDir(b *testing.B) string {
	if benchRepo == "" {
		dir, err := os.MkdirTemp("", "strata-bench-")
		if err != nil {
			b.Fatal(err)
		}
		genRepo(b, dir)
		benchRepo = dir
	}
	return benchRepo
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRepo != "" {
		os.RemoveAll(benchRepo)
	}
	os.Exit(code)
}

// BenchmarkLoad measures config load, discovery, membership and rules on
// the generated repository of 10,000 dirspaces and 500 stacks.
func BenchmarkLoad(b *testing.B) {
	dir := benchRepoDir(b)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Dirspaces) != 10000 || len(p.Stacks) != 500 {
			b.Fatalf("generated %d dirspaces, %d stacks", len(p.Dirspaces), len(p.Stacks))
		}
	}
}

// BenchmarkLoadAndGraph adds the unit DAG of every unit to BenchmarkLoad:
// what `strata graph` does on a large repository.
func BenchmarkLoadAndGraph(b *testing.B) {
	dir := benchRepoDir(b)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
		if err != nil {
			b.Fatal(err)
		}
		g, err := p.Graph(p.Units, GraphOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(g.Edges)+len(g.StackEdges) == 0 {
			b.Fatal("no edges")
		}
	}
}

// BenchmarkGraph measures the unit DAG alone.
func BenchmarkGraph(b *testing.B) {
	dir := benchRepoDir(b)
	p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Graph(p.Units, GraphOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGeneratedRepo checks the benchmark's repository is what it claims,
// so the benchmark measures the intended size.
func TestGeneratedRepo(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 5,000 dirs")
	}
	dir := t.TempDir()
	genRepo(t, dir)
	p := loadRepo(t, dir)
	if len(p.Dirspaces) != 10000 || len(p.Stacks) != 500 || len(p.Units) != 10000 {
		t.Fatalf("got %d dirspaces, %d stacks, %d units", len(p.Dirspaces), len(p.Stacks), len(p.Units))
	}
	s, _ := p.Stack("g3m2l4")
	if got := strings.Join(s.Path, "/"); got != "g3/g3m2/g3m2l4" {
		t.Errorf("path %s", got)
	}
	if !s.WaitsToPlanFor(mustStack(t, p, "g3m2l0")) || !s.WaitsToApplyFor(mustStack(t, p, "g2m0l0")) || !s.IsModifiedBy(mustStack(t, p, "g3m0l3")) {
		t.Errorf("rules of g3m2l4 not resolved: %s", stackRules(p, "g3m2l4"))
	}
	if v, _ := s.Variable("group"); v != "g3" {
		t.Errorf("inherited variable group = %q", v)
	}
	g := fullGraph(t, p)
	if g.Layer[p.UnitsIn("g19/m3/l4/svc0")[0]] < 19 {
		t.Errorf("layer of the last unit = %d", g.Layer[p.UnitsIn("g19/m3/l4/svc0")[0]])
	}
}

func mustStack(t *testing.T, p *Project, name string) *Stack {
	t.Helper()
	s, ok := p.Stack(name)
	if !ok {
		t.Fatalf("no stack %s", name)
	}
	return s
}

// genChain writes a repository whose n stacks form one chain: stack s<i>
// plans after s<i-1>. Ten dirs give ten stacks spread along the chain a
// unit each, so membership and the unit graph have something to hold; the
// rest are empty, which is what a long chain in a real config mostly is.
func genChain(tb testing.TB, dir string, n int) {
	var cfg strings.Builder
	cfg.WriteString("dirs:\n")
	for k := 0; k < 10; k++ {
		fmt.Fprintf(&cfg, "  d%d:\n    tags: [s%d]\n", k, k*n/10)
		p := filepath.Join(dir, fmt.Sprintf("d%d", k))
		if err := os.MkdirAll(p, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "main.tf"), []byte(`resource "terraform_data" "this" {}`+"\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cfg.WriteString("stacks:\n  names:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&cfg, "    s%d:\n      tag_query: s%d\n", i, i)
		if i > 0 {
			fmt.Fprintf(&cfg, "      rules: {plan_after: [s%d]}\n", i-1)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, config.StrataConfigFile), []byte(cfg.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkChain20k loads a chain of 20,000 stacks, each planning after the
// previous one: what `strata check` does. The rules are kept as written
// (after inheritance and expansion), so this stays linear in their size.
func BenchmarkChain20k(b *testing.B) {
	benchChain(b, 20000)
}

func benchChain(b *testing.B, n int) {
	dir := b.TempDir()
	genChain(b, dir, n)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Stacks) != n || len(p.Units) != 10 {
			b.Fatalf("generated %d stacks, %d units", len(p.Stacks), len(p.Units))
		}
	}
}

// BenchmarkParseConfig parses and checks the config of the sharded-run
// bench (bench/ci): 2,000 dirs, each tagged for a stack of its own that
// plans after two stacks of the layer before. Every `ci run` job parses
// the whole config before its first unit.
func BenchmarkParseConfig(b *testing.B) {
	const layers, width = 20, 100
	data := []byte(testenv.Layered(layers, width)["strata.yml"])
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		c, diags := config.Parse(config.StrataConfigFile, data)
		if diags.HasErrors() || c.Dirs.Len() != layers*width || c.Stacks.Names.Len() != layers*width {
			b.Fatalf("parsed %d dirs, %d stacks: %v", c.Dirs.Len(), c.Stacks.Names.Len(), diags)
		}
	}
}
