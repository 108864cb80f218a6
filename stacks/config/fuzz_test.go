package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the config parser: bad input must
// give diagnostics with a message, sorted by position, never a panic. The
// stacks package's FuzzLoad goes on to build a project from what parses.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/bad/*.yml")
	againstRepo, _ := filepath.Glob("../testdata/bad/*.yml")
	for _, s := range append(seeds, againstRepo...) {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("stacks: {names: {a: {tag_query: x}, b: {stacks: [a], rules: {plan_after: [a]}}}}"))
	f.Add([]byte("&a {dirs: *a}"))
	// Hostile input, scaled down to run fast: aliases that multiply the
	// config past the alias budget, and tag queries nested past the depth
	// limit.
	f.Add([]byte(aliasBomb(60)))
	f.Add([]byte(mergeBomb(20)))
	f.Add([]byte("stacks: {names: {a: {tag_query: '" + strings.Repeat("(", 1001) + "a" + strings.Repeat(")", 1001) + "'}}}"))
	f.Add([]byte("workflows: [{tag_query: '" + strings.Repeat("not (", 1000) + "a" + strings.Repeat(")", 1000) + "'}]"))
	f.Add([]byte("hooks: {all: {pre: [{type: oidc}]}}\ndestination_branches: ['[']\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, diags := Parse("strata.yml", data)
		if cfg == nil {
			t.Fatal("Parse returned no config")
		}
		for i, d := range diags {
			if d.Message == "" || d.File != "strata.yml" || d.Pos.Line < 0 || d.Pos.Col < 0 {
				t.Fatalf("diagnostic without a message or with a bad position: %#v", d)
			}
			if i > 0 && diags[i-1].Pos.Line > d.Pos.Line {
				t.Fatalf("diagnostics out of order: %s before %s", diags[i-1], d)
			}
		}
		if !diags.HasErrors() {
			// What decodes without an error answers the config's own
			// questions without a panic.
			cfg.RunsFor("main", "feature")
			cfg.DriftSchedules()
			cfg.OIDCAudiences()
			cfg.CostCurrency()
		}
	})
}
