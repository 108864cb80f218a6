package contenthash

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// writeDigestTree writes files (repo-relative path → content) under root.
func writeDigestTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func removeDigestFile(t testing.TB, root, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

// digestRepo is a repository with a unit in app/ calling modules/net, another
// root in app/nested, and files the unit's patterns reach in shared/.
func digestRepo(t testing.TB) (string, DigestInput) {
	t.Helper()
	root := t.TempDir()
	writeDigestTree(t, root, map[string]string{
		"app/main.tf":                      `module "net" { source = "../modules/net" }`,
		"app/variables.tf":                 `variable "name" {}`,
		"app/config/settings.json":         `{"a": 1}`,
		"app/.gitignore":                   "secret.auto.tfvars\n",
		"app/.terraform/environment":       "default",
		"app/.terraform/providers/p.txt":   "provider",
		"app/terraform.tfstate.d/prod/x":   "state",
		"app/nested/main.tf":               `resource "null_resource" "n" {}`,
		"modules/net/main.tf":              `resource "null_resource" "m" {}`,
		"modules/net/.terraform/cache.txt": "cache",
		"shared/common.yaml":               "common: 1",
		"shared/skip.yaml":                 "skip: 1",
		"shared/.terraform/x.yaml":         "data dir",
		"docs/readme.md":                   "docs",
		".strata/runs.json":                "{}",
		".git/HEAD":                        "ref: refs/heads/main",
	})
	return root, DigestInput{
		Root:          root,
		Dir:           "app",
		ModuleDirs:    []string{"modules/net"},
		OtherRoots:    []string{"app", "app/nested", "docs"},
		FilePatterns:  []string{"shared/**/*.yaml", "!shared/skip.yaml"},
		Engine:        "terraform",
		EngineVersion: "1.9.8",
		Workspace:     "default",
		Stack:         "prod",
		Variables:     map[string]string{"region": "eu-west-1", "size": "small"},
		EngineArgs:    []string{"-target=module.net", "-parallelism=4"},
		VarFile:       []byte(`{"region":"eu-west-1"}`),
	}
}

func mustDigest(t testing.TB, in DigestInput) string {
	t.Helper()
	d, err := Digest(in)
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	return d
}

func TestDigestFormatAndStability(t *testing.T) {
	_, in := digestRepo(t)
	a, b := mustDigest(t, in), mustDigest(t, in)
	if a != b {
		t.Fatalf("same inputs gave %s and %s", a, b)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(a) {
		t.Fatalf("digest %q is not sha256:<hex>", a)
	}
	// The order of ModuleDirs and OtherRoots, and duplicates, do not matter.
	in.ModuleDirs = []string{"modules/net", "./modules/net/"}
	in.OtherRoots = []string{"docs", "app/nested"}
	if c := mustDigest(t, in); c != a {
		t.Fatalf("reordered dirs changed the digest: %s vs %s", c, a)
	}
}

// digestChanges are changes to digestRepo and its input, and whether each
// changes the digest.
var digestChanges = []struct {
	name    string
	change  func(t *testing.T, root string, in *DigestInput)
	changes bool
}{
	{"file content", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"app/variables.tf": `variable "name" { default = "x" }`})
	}, true},
	{"new file in a subdir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"app/config/more.json": `{}`})
	}, true},
	{"file removed", func(t *testing.T, root string, in *DigestInput) {
		removeDigestFile(t, root, "app/config/settings.json")
	}, true},
	{"local module file", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"modules/net/main.tf": `resource "null_resource" "m2" {}`})
	}, true},
	{"new file in a local module subdir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"modules/net/templates/user_data.sh": "#!/bin/sh"})
	}, true},
	{"git-ignored secret.auto.tfvars", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"app/secret.auto.tfvars": `password = "hunter2"`})
	}, true},
	{"engine", func(t *testing.T, root string, in *DigestInput) { in.Engine = "tofu" }, true},
	{"engine version", func(t *testing.T, root string, in *DigestInput) { in.EngineVersion = "1.9.9" }, true},
	{"workspace", func(t *testing.T, root string, in *DigestInput) { in.Workspace = "staging" }, true},
	{"stack", func(t *testing.T, root string, in *DigestInput) { in.Stack = "dev" }, true},
	{"variable value", func(t *testing.T, root string, in *DigestInput) {
		in.Variables = map[string]string{"region": "eu-west-2", "size": "small"}
	}, true},
	{"variable added", func(t *testing.T, root string, in *DigestInput) {
		in.Variables = map[string]string{"region": "eu-west-1", "size": "small", "zone": ""}
	}, true},
	{"engine arg added", func(t *testing.T, root string, in *DigestInput) {
		in.EngineArgs = append(in.EngineArgs, "-refresh=false")
	}, true},
	{"engine arg order", func(t *testing.T, root string, in *DigestInput) {
		in.EngineArgs = []string{"-parallelism=4", "-target=module.net"}
	}, true},
	{"var file", func(t *testing.T, root string, in *DigestInput) {
		in.VarFile = []byte(`{"region":"eu-west-2"}`)
	}, true},
	{"var file dropped", func(t *testing.T, root string, in *DigestInput) { in.VarFile = nil }, true},
	{"pattern file outside the dir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"shared/common.yaml": "common: 2"})
	}, true},
	{"new pattern file", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"shared/deep/extra.yaml": "extra: 1"})
	}, true},
	{"pattern dropped", func(t *testing.T, root string, in *DigestInput) {
		in.FilePatterns = []string{"!shared/skip.yaml"}
	}, true},

	{"data dir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{
			"app/.terraform/environment":       "prod",
			"app/.terraform/modules/m.json":    "{}",
			"modules/net/.terraform/cache.txt": "other",
		})
	}, false},
	{"state dir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{".strata/runs.json": `{"x":1}`, "app/.strata/plans/p": "plan"})
	}, false},
	{"git dir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{".git/HEAD": "ref: refs/heads/other", "app/.git/config": "x"})
	}, false},
	{"state files", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{
			"app/terraform.tfstate":         `{"serial":2}`,
			"app/terraform.tfstate.backup":  `{"serial":1}`,
			"app/errored.tfstate":           `{}`,
			"modules/net/terraform.tfstate": `{}`,
		})
	}, false},
	{"workspace state dir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"app/terraform.tfstate.d/prod/x": "state 2"})
	}, false},
	{"subdir that is another root", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"app/nested/main.tf": `resource "null_resource" "n2" {}`, "app/nested/new.tf": ""})
	}, false},
	{"file outside everything", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"docs/readme.md": "new docs", "other/x.tf": ""})
	}, false},
	{"negated pattern", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"shared/skip.yaml": "skip: 2"})
	}, false},
	{"pattern match under a data dir", func(t *testing.T, root string, in *DigestInput) {
		writeDigestTree(t, root, map[string]string{"shared/.terraform/x.yaml": "changed"})
	}, false},
	{"pattern repeating a tree file", func(t *testing.T, root string, in *DigestInput) {
		in.FilePatterns = append(in.FilePatterns, "app/*.tf")
	}, false},
	{"variables map order", func(t *testing.T, root string, in *DigestInput) {
		in.Variables = map[string]string{"size": "small", "region": "eu-west-1"}
	}, false},
}

func TestDigestChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range digestChanges {
		t.Run(tc.name, func(t *testing.T) {
			root, in := digestRepo(t)
			before := mustDigest(t, in)
			tc.change(t, root, &in)
			after := mustDigest(t, in)
			if changed := before != after; changed != tc.changes {
				t.Errorf("digest changed = %t, want %t", changed, tc.changes)
			}
		})
	}
}

func TestDigestRootUnit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeDigestTree(t, root, map[string]string{
		"main.tf":                 `module "m" { source = "./app/mod" }`,
		"app/main.tf":             "",
		"app/mod/main.tf":         "",
		"vendor/lib/x.tf":         "",
		"terraform.tfstate":       "{}",
		".terraform/providers/pp": "",
	})
	in := DigestInput{Root: root, Dir: ".", ModuleDirs: []string{"app/mod"}, OtherRoots: []string{".", "app"}}
	before := mustDigest(t, in)
	steps := []struct {
		file    string
		changes bool
	}{
		{"app/main.tf", false},    // another root
		{"app/mod/main.tf", true}, // a module inside another root still counts
		{"vendor/lib/x.tf", true}, // a plain subdir of the root unit
		{"terraform.tfstate", false},
		{".terraform/providers/pp", false},
	}
	for _, s := range steps {
		writeDigestTree(t, root, map[string]string{s.file: "changed " + s.file})
		after := mustDigest(t, in)
		if changed := after != before; changed != s.changes {
			t.Errorf("after writing %s: digest changed = %t, want %t", s.file, changed, s.changes)
		}
		before = after
	}
}

func TestDigestFraming(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	base := DigestInput{Root: root, Dir: "."}
	pairs := []struct {
		name string
		a, b func(in *DigestInput)
	}{
		{"stack and workspace",
			func(in *DigestInput) { in.Stack, in.Workspace = "ab", "c" },
			func(in *DigestInput) { in.Stack, in.Workspace = "a", "bc" }},
		{"engine and version",
			func(in *DigestInput) { in.Engine, in.EngineVersion = "terraform1", ".5" },
			func(in *DigestInput) { in.Engine, in.EngineVersion = "terraform", "1.5" }},
		{"variable name and value",
			func(in *DigestInput) { in.Variables = map[string]string{"ab": "c"} },
			func(in *DigestInput) { in.Variables = map[string]string{"a": "bc"} }},
		{"two variables and one",
			func(in *DigestInput) { in.Variables = map[string]string{"a": "b", "c": "d"} },
			func(in *DigestInput) { in.Variables = map[string]string{"a": "bcd"} }},
		{"engine args split",
			func(in *DigestInput) { in.EngineArgs = []string{"-a", "b"} },
			func(in *DigestInput) { in.EngineArgs = []string{"-ab"} }},
		{"engine arg and var file",
			func(in *DigestInput) { in.EngineArgs, in.VarFile = []string{"x{"}, []byte("}") },
			func(in *DigestInput) { in.EngineArgs, in.VarFile = []string{"x"}, []byte("{}") }},
		{"empty arg and no arg",
			func(in *DigestInput) { in.EngineArgs = []string{""} },
			func(in *DigestInput) { in.EngineArgs = nil }},
		{"stack into variables",
			func(in *DigestInput) { in.Stack = "s" },
			func(in *DigestInput) { in.Variables = map[string]string{"s": ""} }},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			a, b := base, base
			p.a(&a)
			p.b(&b)
			if da, db := mustDigest(t, a), mustDigest(t, b); da == db {
				t.Errorf("both inputs digest to %s", da)
			}
		})
	}

	// Bytes moving between a file's path and its content.
	r1, r2 := t.TempDir(), t.TempDir()
	writeDigestTree(t, r1, map[string]string{"ab": "c"})
	writeDigestTree(t, r2, map[string]string{"a": "bc"})
	if mustDigest(t, DigestInput{Root: r1, Dir: "."}) == mustDigest(t, DigestInput{Root: r2, Dir: "."}) {
		t.Error("file ab=c and file a=bc digest alike")
	}
}

func TestDigestSymlinks(t *testing.T) {
	root, in := digestRepo(t)
	writeDigestTree(t, root, map[string]string{"elsewhere/linked.tfvars": "a = 1"})
	links := map[string]string{
		"app/linked.auto.tfvars": "../elsewhere/linked.tfvars",
		"app/loop":               "..",
		"app/dangling.tf":        "missing.tf",
		"app/self":               "self",
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	before := mustDigest(t, in)
	writeDigestTree(t, root, map[string]string{"elsewhere/linked.tfvars": "a = 2"})
	if mustDigest(t, in) == before {
		t.Error("changing a symlinked file's target did not change the digest")
	}
}

func TestDigestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(in *DigestInput)
		want   string
	}{
		{"missing module dir", func(in *DigestInput) { in.ModuleDirs = append(in.ModuleDirs, "modules/gone") }, "module dir modules/gone does not exist"},
		{"missing unit dir", func(in *DigestInput) { in.Dir = "nowhere" }, "unit dir nowhere does not exist"},
		{"module dir is a file", func(in *DigestInput) { in.ModuleDirs = []string{"docs/readme.md"} }, "module dir docs/readme.md is not a directory"},
		{"module dir outside the repo", func(in *DigestInput) { in.ModuleDirs = []string{"../x"} }, "module dir ../x is outside the repository"},
		{"bad pattern", func(in *DigestInput) { in.FilePatterns = []string{"shared/[a"} }, `file pattern "shared/[a" is not valid`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, in := digestRepo(t)
			tc.change(&in)
			_, err := Digest(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestDigestPatternsThatMatchNothing(t *testing.T) {
	_, in := digestRepo(t)
	before := mustDigest(t, in)
	in.FilePatterns = append(in.FilePatterns, "nowhere/**", "docs/readme.md/x/*", "/abs/*", "../up/*", ".terraform/**")
	if after := mustDigest(t, in); after != before {
		t.Errorf("patterns matching nothing changed the digest")
	}
}

// TestDigestEscapedPatterns: a pattern whose dir has its metacharacters
// escaped (as a dir named e[1] is pasted into its unit's patterns) reaches
// the files of that dir, walked from its unescaped base, and only those.
func TestDigestEscapedPatterns(t *testing.T) {
	root := t.TempDir()
	writeDigestTree(t, root, map[string]string{
		"e[1]/a.yaml": "a", "e[1]/skip.yaml": "s", "e1/b.yaml": "b", "c{d}/c.yaml": "c", "cd/d.yaml": "d",
	})
	got, err := matchFilePatterns(root, []string{`e\[1\]/*.yaml`, `c\{d\}/**`, `!e\[1\]/skip.yaml`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if want := []string{"c{d}/c.yaml", "e[1]/a.yaml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

// BenchmarkDigest digests a unit dir of 50 small files. The "read files"
// baseline only opens and reads the same files, so the difference is the
// digest's own cost over the IO.
func BenchmarkDigest(b *testing.B) {
	root := b.TempDir()
	files := make(map[string]string)
	for i := range 50 {
		dir := "app"
		if i%5 == 0 {
			dir = "app/templates"
		}
		files[fmt.Sprintf("%s/file%02d.tf", dir, i)] = strings.Repeat(fmt.Sprintf("resource \"null_resource\" \"r%d\" {}\n", i), 20)
	}
	writeDigestTree(b, root, files)
	in := DigestInput{
		Root: root, Dir: "app",
		FilePatterns: []string{"app/*.tf", "app/*.tfvars", "!app/file00.tf"},
		Engine:       "terraform", EngineVersion: "1.9.8", Workspace: "default",
		Variables:  map[string]string{"a": "1", "b": "2"},
		EngineArgs: []string{"-target=x"},
	}
	b.Run("digest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Digest(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read files", func(b *testing.B) {
		buf := make([]byte, 32<<10)
		for b.Loop() {
			for rel := range files {
				f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := f.Read(buf); err != nil {
						break
					}
				}
				f.Close()
			}
		}
	})
}

// TestDigestReads: a file the unit reads is in its digest, outside its
// dirs and patterns too, and a "!" file pattern does not leave it out; a
// file a fileset glob matches is in it, so adding or removing one changes
// the digest.
func TestDigestReads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, root string)
		want   bool
	}{
		{"read file edited", func(t *testing.T, root string) {
			writeDigestTree(t, root, map[string]string{"shared/net.json": `{"cidr": "10.1.0.0/16"}`})
		}, true},
		{"read file deleted", func(t *testing.T, root string) { removeDigestFile(t, root, "shared/net.json") }, true},
		{"glob match added", func(t *testing.T, root string) {
			writeDigestTree(t, root, map[string]string{"www/pages/new.html": "new"})
		}, true},
		{"glob match deleted", func(t *testing.T, root string) { removeDigestFile(t, root, "www/pages/a.html") }, true},
		{"file the glob does not match", func(t *testing.T, root string) {
			writeDigestTree(t, root, map[string]string{"www/pages/a.txt": "t", "www/other.html": "o"})
		}, false},
		{"negated by a file pattern, still read", func(t *testing.T, root string) {
			writeDigestTree(t, root, map[string]string{"shared/skip.yaml": "skip: 2"})
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, in := digestRepo(t)
			writeDigestTree(t, root, map[string]string{
				"shared/net.json": `{"cidr": "10.0.0.0/16"}`, "www/pages/a.html": "a",
			})
			in.Reads = []string{"shared/net.json", "shared/skip.yaml", "www/pages/**/*.html"}
			before := mustDigest(t, in)
			tc.change(t, root)
			if changed := mustDigest(t, in) != before; changed != tc.want {
				t.Errorf("digest changed = %t, want %t", changed, tc.want)
			}
		})
	}
	t.Run("no reads, same digest as before reads were counted", func(t *testing.T) {
		t.Parallel()
		_, in := digestRepo(t)
		before := mustDigest(t, in)
		in.Reads = []string{}
		if mustDigest(t, in) != before {
			t.Error("an empty Reads changed the digest")
		}
	})
}
