package stacks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

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
		"app/bad.tf: warning: module app: strata cannot read it" + rest,
		"caller/bad.tf: warning: module caller: strata cannot read it" + rest,
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
			testenv.WriteFile(t, filepath.Join(root, config.StrataConfigFile), "dirs:\n  "+tc.key+": {tags: [x]}\n")
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

			p, err := Load(root, filepath.Join(root, config.StrataConfigFile))
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

// TestConfigOverBudgetWalksNothing: a config over its size budget is
// refused before the repository is walked: one error, and no dirspace
// found, however many root modules the repository holds.
func TestConfigOverBudgetWalksNothing(t *testing.T) {
	t.Parallel()
	root := testRepo(t, "", "a", "b", "c/d")
	testenv.WriteFile(t, filepath.Join(root, config.StrataConfigFile), "dirs: {}\n"+strings.Repeat("#", config.MaxBytes))
	p, err := Load(root, filepath.Join(root, config.StrataConfigFile))
	var ce *config.Error
	if !errors.As(err, &ce) || len(ce.Diagnostics) != 1 || !strings.Contains(ce.Diagnostics[0].String(), "expected at most 2.0 MiB") {
		t.Fatalf("Load: %v", err)
	}
	if p != nil && len(p.Dirspaces) != 0 {
		t.Errorf("the repository was walked: %d dirspaces", len(p.Dirspaces))
	}
}
