package stacks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/strata-iac/strata/internal/testenv"
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
			d := &decoder{collector: &collector{file: "strata.yml"}}
			d.decode(doc.Content[0], reflectValue(&Config{}), "")
			if d.aliased != maxAliasedNodes+1 {
				t.Errorf("visited %d nodes through aliases, want the budget and one more: %d", d.aliased, maxAliasedNodes+1)
			}

			cfg, diags := ParseConfig("strata.yml", []byte(tc.cfg))
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
	cfg, diags := ParseConfig("strata.yml", []byte(`
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
		got = append(got, fmt.Sprintf("%s: tags=%v workspaces=%d create=%v", e.Key, strs(e.Value.Tags), e.Value.Workspaces.Len(), e.Value.CreateAndSelectWorkspace.Get(true)))
	}
	want := "a: tags=[x] workspaces=1 create=true\nb: tags=[x] workspaces=1 create=true\nc: tags=[own] workspaces=0 create=false"
	if strings.Join(got, "\n") != want {
		t.Errorf("dirs:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// TestConfigSizeLimit checks that a config over maxConfigBytes is one error
// naming its size and the limit, and that a file far larger is not read
// whole to say so.
func TestConfigSizeLimit(t *testing.T) {
	big := []byte("dirs: {}\n" + strings.Repeat("#", maxConfigBytes))
	_, diags := ParseConfig("strata.yml", big)
	want := "strata.yml: the config is 2.0 MiB (2097161 bytes); expected at most 2.0 MiB (2097152 bytes)"
	if len(diags) != 1 || diags[0].String() != want {
		t.Errorf("ParseConfig: diagnostics:\n%s\nwant:\n%s", diagText(diags), want)
	}
	if _, diags := ParseConfig("strata.yml", big[:maxConfigBytes]); diags.HasErrors() {
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
	_, diags, err = LoadConfig(path, StrataConfigFile)
	want = "strata.yml: the config is 1048576.0 MiB (1099511627776 bytes); expected at most 2.0 MiB (2097152 bytes)"
	if err != nil || len(diags) != 1 || diags[0].String() != want {
		t.Errorf("LoadConfig: %v, diagnostics:\n%s\nwant:\n%s", err, diagText(diags), want)
	}
}

// TestUninspectableModule checks that a module terraform-config-inspect
// panics on is a warning naming its file, whether strata reads it for its
// local module calls or for its variables, and that loading goes on.
func TestUninspectableModule(t *testing.T) {
	const unreadable = "required_providers {\n  x = {}\n}\n"
	root := testRepo(t, `
stacks:
  names:
    net: {tag_query: "dir:net"}
    app: {tag_query: "dir:app or dir:caller", auto_inputs: true, rules: {plan_after: [net]}}
`, "net", "app", "caller", "mods/m")
	testenv.WriteFile(t, filepath.Join(root, "app", "bad.tf"), unreadable)
	testenv.WriteFile(t, filepath.Join(root, "caller", "main.tf"), `module "m" { source = "../mods/m" }`+"\n")
	testenv.WriteFile(t, filepath.Join(root, "caller", "bad.tf"), unreadable)
	testenv.WriteFile(t, filepath.Join(root, "net", "outputs.tf"), `output "v" { value = 1 }`+"\n")

	p := loadRepo(t, root)
	const rest = ` (unhandled block type "required_providers"); strata goes on without its module calls, variables and outputs, and the engine reports the problem when it runs there`
	want := []string{
		"strata.yml: warning: module app: strata cannot read app/bad.tf" + rest,
		"strata.yml: warning: module caller: strata cannot read caller/bad.tf" + rest,
	}
	var got []string
	for _, d := range p.Diagnostics.Warnings() {
		if strings.Contains(d.Message, "cannot read") {
			got = append(got, d.String())
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var units []string
	for _, u := range p.Units {
		units = append(units, u.Name())
	}
	if strings.Join(units, " ") != "app@default caller@default mods/m@default net@default" {
		t.Errorf("units %v", units)
	}
}

// TestDirsOutsideRepo checks that a dirs key leading out of the repository,
// by ".." or by a symbolic link, is an error at the key that check and a
// run both see, and that scanning does not follow symbolic links.
func TestDirsOutsideRepo(t *testing.T) {
	t.Parallel()
	const tf = `resource "terraform_data" "this" {}` + "\n"
	tests := []struct {
		name  string
		key   string
		links map[string]string // link in the repo -> target, "@" for the dir outside
		want  string            // the error; "" for none
		units string
	}{
		{"dotdot", `"../outside"`, nil,
			`strata.yml:2:3: dirs.../outside: found "../outside", which has a ".." segment; expected a dir inside the repository, relative to its root, without ".."`, ""},
		{"dotdot inside a path", "a/../../outside", nil,
			`strata.yml:2:3: dirs.a/../../outside: found "a/../../outside", which has a ".." segment; expected a dir inside the repository, relative to its root, without ".."`, ""},
		{"dotdot that comes back", "app/../app", nil,
			`strata.yml:2:3: dirs.app/../app: found "app/../app", which has a ".." segment; expected a dir inside the repository, relative to its root, without ".."`, ""},
		{"dotdot in a glob", `"../**"`, nil,
			`strata.yml:2:3: dirs.../**: found "../**", which has a ".." segment; expected a dir inside the repository, relative to its root, without ".."`, ""},
		{"symbolic link out", "link", map[string]string{"link": "@"},
			`strata.yml:2:3: dirs.link: found "link", which resolves through a symbolic link to @, outside the repository; expected a dir inside the repository`, ""},
		{"below a symbolic link out", "link/sub", map[string]string{"link": "@"},
			`strata.yml:2:3: dirs.link/sub: found "link/sub", which resolves through a symbolic link to @/sub, outside the repository; expected a dir inside the repository`, ""},
		{"symbolic link within", "alias", map[string]string{"alias": "app"}, "", "alias@default app@default"},
		{"scanning does not follow links", "app", map[string]string{"out": "@", "alias": "app"}, "", "app@default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			root, outside := filepath.Join(tmp, "repo"), filepath.Join(tmp, "outside")
			testenv.WriteFile(t, filepath.Join(root, StrataConfigFile), "dirs:\n  "+tc.key+": {tags: [x]}\n")
			testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), tf)
			testenv.WriteFile(t, filepath.Join(outside, "main.tf"), tf)
			testenv.WriteFile(t, filepath.Join(outside, "sub", "main.tf"), tf)
			for link, target := range tc.links {
				if target == "@" {
					target = outside
				}
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			realOutside, err := filepath.EvalSymlinks(outside)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tc.want, "@", realOutside)

			p, err := Load(root, filepath.Join(root, StrataConfigFile))
			if want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				var units []string
				for _, u := range p.Units {
					units = append(units, u.Name())
				}
				if got := strings.Join(units, " "); got != tc.units {
					t.Errorf("units %q, want %q", got, tc.units)
				}
				return
			}
			if err == nil || err.Error() != want {
				t.Errorf("Load: %v\nwant: %s", err, want)
			}
			for _, u := range p.Units {
				if u.Dir != "app" {
					t.Errorf("unit %s outside the repository", u.Name())
				}
			}
		})
	}
}

// TestDeepQueryInConfig checks that a tag query nested too deeply is a
// config error at the column where it goes too deep, quoting the query
// shortened.
func TestDeepQueryInConfig(t *testing.T) {
	q := strings.Repeat("(", 1_000_000) + "a" + strings.Repeat(")", 1_000_000)
	_, diags := ParseConfig("strata.yml", []byte("workflows:\n  - tag_query: "+q+"\n"))
	want := `strata.yml:2:1016: workflows[0].tag_query: tag query "` + strings.Repeat("(", 100) + `"… (2000001 characters): column 1001: query nests too deeply: expected at most 1000 levels of parentheses and tags side by side`
	if errs := diags.Errors(); len(errs) != 1 || errs[0].String() != want {
		t.Errorf("errors:\n%.400s\nwant:\n%.400s", diagText(errs), want)
	}
}

// TestConfigOverBudgetWalksNothing: a config over its size budget is
// refused before the repository is walked: one error, and no dirspace
// found, however many root modules the repository holds.
func TestConfigOverBudgetWalksNothing(t *testing.T) {
	t.Parallel()
	root := testRepo(t, "", "a", "b", "c/d")
	testenv.WriteFile(t, filepath.Join(root, StrataConfigFile), "dirs: {}\n"+strings.Repeat("#", maxConfigBytes))
	p, err := Load(root, filepath.Join(root, StrataConfigFile))
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Diagnostics) != 1 || !strings.Contains(ce.Diagnostics[0].String(), "expected at most 2.0 MiB") {
		t.Fatalf("Load: %v", err)
	}
	if p != nil && len(p.Dirspaces) != 0 {
		t.Errorf("the repository was walked: %d dirspaces", len(p.Dirspaces))
	}
}
