package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// aliasBomb writes a config of n dirs, each an alias of the first, whose
// workspaces are n aliases of the first workspace, whose tags are n tags:
// some 30n bytes that stand for n³ tags.
func aliasBomb(n int) string {
	var b strings.Builder
	b.WriteString("dirs:\n  d0: &d\n    workspaces:\n      w0: &w\n        tags: [")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "t%d", i)
	}
	b.WriteString("]\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "      w%d: *w\n", i)
	}
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  d%d: *d\n", i)
	}
	return b.String()
}

// mergeBomb writes a config whose dir merges an anchor that merges the one
// before twice, n times over: 2ⁿ merges.
func mergeBomb(n int) string {
	var b strings.Builder
	b.WriteString("indexer:\n  m0: &m0 {tags: [a, b]}\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  m%d: &m%d {<<: *m%d, <<: *m%d}\n", i, i, i-1, i-1)
	}
	fmt.Fprintf(&b, "dirs:\n  app:\n    <<: *m%d\n", n)
	return b.String()
}

// TestAliasBudget checks that aliases multiplying the config are one error
// at the alias where the budget ran out, found after visiting no more than
// the budget, and that the config is then left undecoded.
func TestAliasBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  string
		want string
	}{
		{"nested aliases, 13 KB", aliasBomb(400),
			"strata.yml:405:7: dirs.d1: too many alias expansions: at alias *d, the config's aliases have expanded to more than 200000 values; expected anchors and aliases that share parts of the config, not ones that multiply it"},
		{"nested aliases, scaled down", aliasBomb(60),
			"strata.yml:117:8: dirs.d53: too many alias expansions: at alias *d, the config's aliases have expanded to more than 200000 values; expected anchors and aliases that share parts of the config, not ones that multiply it"},
		{"merge keys", mergeBomb(40),
			"strata.yml:45:9: dirs.app: too many alias expansions: at alias *m40, the config's aliases have expanded to more than 200000 values; expected anchors and aliases that share parts of the config, not ones that multiply it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.cfg), &doc); err != nil {
				t.Fatal(err)
			}
			d := &decoder{Collector: &Collector{File: "strata.yml"}}
			d.decode(doc.Content[0], reflectValue(&Config{}), "")
			if d.aliased != maxAliasedNodes+1 {
				t.Errorf("visited %d nodes through aliases, want the budget and one more: %d", d.aliased, maxAliasedNodes+1)
			}

			cfg, diags := Parse("strata.yml", []byte(tc.cfg))
			if errs := diags.Errors(); len(errs) != 1 || errs[0].String() != tc.want {
				t.Fatalf("errors:\n%s\nwant:\n%s", diagText(errs), tc.want)
			}
			if cfg.Dirs != nil {
				t.Errorf("the config is partly decoded: %d dirs", cfg.Dirs.Len())
			}
		})
	}
}

// TestAliasesShare checks that aliases within the budget decode as YAML
// users expect: an alias is its anchor's value, a merge key fills the keys
// a mapping does not set.
func TestAliasesShare(t *testing.T) {
	cfg, diags := Parse("strata.yml", []byte(`
indexer:
  common: &common {tags: [shared], create_and_select_workspace: false}
dirs:
  a: &a {tags: [x], workspaces: {prod: {tags: [p]}}}
  b: *a
  c:
    <<: *common
    tags: [own]
`))
	if diags.HasErrors() {
		t.Fatalf("errors:\n%s", diagText(diags))
	}
	var got []string
	for _, e := range cfg.Dirs.Entries {
		got = append(got, fmt.Sprintf("%s: tags=%v workspaces=%d create=%v", e.Key, Strings(e.Value.Tags), e.Value.Workspaces.Len(), e.Value.CreateAndSelectWorkspace.Get(true)))
	}
	want := "a: tags=[x] workspaces=1 create=true\nb: tags=[x] workspaces=1 create=true\nc: tags=[own] workspaces=0 create=false"
	if strings.Join(got, "\n") != want {
		t.Errorf("dirs:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestConfigSizeLimit checks that a config over MaxBytes is one error
// naming its size and the limit, and that a file far larger is not read
// whole to say so.
func TestConfigSizeLimit(t *testing.T) {
	big := []byte("dirs: {}\n" + strings.Repeat("#", MaxBytes))
	_, diags := Parse("strata.yml", big)
	want := "strata.yml: the config is 2.0 MiB (2097161 bytes); expected at most 2.0 MiB (2097152 bytes)"
	if len(diags) != 1 || diags[0].String() != want {
		t.Errorf("Parse: diagnostics:\n%s\nwant:\n%s", diagText(diags), want)
	}
	if _, diags := Parse("strata.yml", big[:MaxBytes]); diags.HasErrors() {
		t.Errorf("a config of exactly the limit: %s", diagText(diags))
	}

	root := t.TempDir()
	path := filepath.Join(root, StrataConfigFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size is what the message must report.
	if err := f.Truncate(1 << 40); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	_, diags, err = Load(path, StrataConfigFile)
	want = "strata.yml: the config is 1048576.0 MiB (1099511627776 bytes); expected at most 2.0 MiB (2097152 bytes)"
	if err != nil || len(diags) != 1 || diags[0].String() != want {
		t.Errorf("Load: %v, diagnostics:\n%s\nwant:\n%s", err, diagText(diags), want)
	}
}

// TestDeepQueryInConfig checks that a tag query nested too deeply is a
// config error at the column where it goes too deep, quoting the query
// shortened.
func TestDeepQueryInConfig(t *testing.T) {
	q := strings.Repeat("(", 1_000_000) + "a" + strings.Repeat(")", 1_000_000)
	_, diags := Parse("strata.yml", []byte("workflows:\n  - tag_query: "+q+"\n"))
	want := `strata.yml:2:1016: workflows[0].tag_query: tag query "` + strings.Repeat("(", 100) + `"… (2000001 characters): column 1001: query nests too deeply: expected at most 1000 levels of parentheses and tags side by side`
	if errs := diags.Errors(); len(errs) != 1 || errs[0].String() != want {
		t.Errorf("errors:\n%.400s\nwant:\n%.400s", diagText(errs), want)
	}
}
