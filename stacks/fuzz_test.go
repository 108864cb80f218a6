package stacks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// FuzzLoad feeds arbitrary bytes to the config parser and, when they parse,
// builds the project, its graph and a run over a small fixed tree: bad
// input must give diagnostics, never a panic.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/bad/*.yml")
	inConfig, _ := filepath.Glob("config/testdata/bad/*.yml")
	for _, s := range append(seeds, inConfig...) {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	for _, tc := range append(append([]docCase(nil), stacksRFDCases...), nestedRFDCases...) {
		f.Add([]byte(tc.cfg))
	}
	f.Add([]byte("stacks: {names: {a: {tag_query: x}, b: {stacks: [a], rules: {plan_after: [a]}}}}"))
	f.Add([]byte("&a {dirs: *a}"))
	// Hostile input, scaled down to run fast: tag queries nested past the
	// depth limit and just within it (the config package's FuzzParse
	// feeds the alias bombs, which leave nothing to build).
	f.Add([]byte("stacks: {names: {a: {tag_query: '" + strings.Repeat("(", 1001) + "a" + strings.Repeat(")", 1001) + "'}}}"))
	f.Add([]byte("workflows: [{tag_query: '" + strings.Repeat("not (", 1000) + "a" + strings.Repeat(")", 1000) + "'}]"))
	f.Add([]byte("dirs: {\"../outside\": {tags: [x]}, a/../../b: {tags: [y]}, \"a/./b\": {}}"))
	root := f.TempDir()
	tree := []sourceDir{
		{dir: ".", files: []string{"main.tf"}},
		{dir: "base", files: []string{"main.tf"}},
		{dir: "prod/network", files: []string{"main.tf"}},
		{dir: "dev/network", files: []string{"main.tf"}},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, diags := config.Parse("strata.yml", data)
		for _, d := range diags {
			if d.Severity == config.SeverityError && (d.Pos.Line < 0 || d.Message == "") {
				t.Fatalf("diagnostic without position or message: %#v", d)
			}
		}
		p := Build(root, "strata.yml", cfg, tree, diags)
		if p.Diagnostics.HasErrors() {
			return
		}
		g, err := p.Graph(p.Units, GraphOptions{})
		if err == nil && len(g.Units) != len(p.Units) {
			t.Fatalf("graph lost units: %d of %d", len(g.Units), len(p.Units))
		}
		if _, err := p.Select(Selection{Cwd: "."}); err != nil {
			t.Fatal(err)
		}
	})
}
