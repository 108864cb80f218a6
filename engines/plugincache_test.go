package engines

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// TestCachedProviders: an init only reads the plugin cache when its lock
// file selects every provider the module and its local modules use, and
// the cache holds each with a hash the lock file lists.
func TestCachedProviders(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	pkg := filepath.Join(cache, "registry.terraform.io", "hashicorp", "time", "0.13.1", runtime.GOOS+"_"+runtime.GOARCH)
	write(t, filepath.Join(pkg, "terraform-provider-time_v0.13.1"), "a provider")
	h1, err := dirhash.HashDir(pkg, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	lock := func(hash string) string {
		return "provider \"registry.terraform.io/hashicorp/time\" {\n  version = \"0.13.1\"\n  hashes = [\"" + hash + "\"]\n}\n"
	}
	timeTF := "terraform {\n  required_providers {\n    time = { source = \"hashicorp/time\" }\n  }\n}\nresource \"time_static\" \"x\" {}\n"
	tests := []struct {
		name  string
		files map[string]string
		want  string // "" for cached
	}{
		{"locked and cached", map[string]string{"main.tf": timeTF, ".terraform.lock.hcl": lock(h1)}, ""},
		{"the builtin provider only, no lock file", map[string]string{"main.tf": "resource \"terraform_data\" \"x\" {}\n"}, ""},
		{"no lock file", map[string]string{"main.tf": timeTF}, "no lock file"},
		{"another hash", map[string]string{"main.tf": timeTF, ".terraform.lock.hcl": lock("h1:other=")}, "the lock file lists no hash of the cached registry.terraform.io/hashicorp/time 0.13.1"},
		{"another version", map[string]string{"main.tf": timeTF, ".terraform.lock.hcl": strings.Replace(lock(h1), "0.13.1", "0.12.0", 1)}, "registry.terraform.io/hashicorp/time 0.12.0 is not in the plugin cache"},
		{"a local module's provider not locked", map[string]string{"main.tf": timeTF + "module \"m\" { source = \"./m\" }\n", ".terraform.lock.hcl": lock(h1),
			"m/main.tf": "resource \"random_id\" \"x\" { byte_length = 2 }\n"}, "registry.terraform.io/hashicorp/random is required and not in the lock file"},
		{"a provider block alone", map[string]string{"main.tf": timeTF + "provider \"random\" {}\n", ".terraform.lock.hcl": lock(h1)},
			"registry.terraform.io/hashicorp/random is required and not in the lock file"},
		{"a registry module", map[string]string{"main.tf": timeTF + "module \"m\" { source = \"terraform-aws-modules/vpc/aws\" }\n", ".terraform.lock.hcl": lock(h1)},
			`module "m" comes from terraform-aws-modules/vpc/aws`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, text := range tt.files {
				write(t, filepath.Join(dir, name), text)
			}
			ok, why := CachedProviders(cache, dir, "registry.terraform.io", nil)
			if ok != (tt.want == "") || why != tt.want {
				t.Errorf("got %v %q, want %q", ok, why, tt.want)
			}
		})
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTofuProviderRequirements: for tofu, a provider declared only in a
// .tofu file is required; terraform does not read that file.
func TestTofuProviderRequirements(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "main.tf"), "resource \"terraform_data\" \"x\" {}\n")
	write(t, filepath.Join(dir, "extra.tofu"), "resource \"random_id\" \"x\" { byte_length = 2 }\n")
	for _, tt := range []struct {
		engine string
		want   int
	}{{Terraform, 0}, {Tofu, 1}} {
		e := &Engine{Name: tt.engine}
		req, err := ProviderRequirements(dir, "registry.opentofu.org", e.ModuleReader(nil))
		if err != nil || len(req) != tt.want {
			t.Errorf("%s: %v, %v; want %d providers", tt.engine, req, err, tt.want)
		}
	}
}
