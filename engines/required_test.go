package engines

import (
	"errors"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

func engineAt(name, v string) *Engine {
	return &Engine{Name: name, Version: version.Must(version.NewVersion(v))}
}

// requiredVersionCases are module dirs, the engine that runs them, and
// what CheckRequiredVersion says.
var requiredVersionCases = []struct {
	name   string
	files  map[string]string
	engine *Engine
	err    string // empty: satisfied
}{{
	name:   "no terraform block",
	files:  map[string]string{"main.tf": `resource "null_resource" "x" {}`},
	engine: engineAt(Terraform, "1.5.7"),
}, {
	name:   "satisfied",
	files:  map[string]string{"versions.tf": `terraform { required_version = "~> 1.5.0" }`},
	engine: engineAt(Terraform, "1.5.7"),
}, {
	name:   "not satisfied: names the constraint and the engine",
	files:  map[string]string{"versions.tf": `terraform { required_version = ">= 1.6" }`},
	engine: engineAt(Terraform, "1.5.7"),
	err:    `required_version ">= 1.6" is not satisfied by terraform 1.5.7`,
}, {
	name: "every block counts",
	files: map[string]string{
		"a.tf": `terraform { required_version = ">= 1.0" }`,
		"b.tf": `terraform { required_version = "< 1.5" }`,
	},
	engine: engineAt(Tofu, "1.8.8"),
	err:    `required_version "< 1.5" is not satisfied by tofu 1.8.8`,
}, {
	name:   "JSON configuration",
	files:  map[string]string{"main.tf.json": `{"terraform": {"required_version": ">= 2.0"}}`},
	engine: engineAt(Terraform, "1.11.4"),
	err:    `required_version ">= 2.0" is not satisfied by terraform 1.11.4`,
}, {
	name:   "a constraint that does not parse",
	files:  map[string]string{"versions.tf": `terraform { required_version = "about 1.5" }`},
	engine: engineAt(Terraform, "1.5.7"),
	err:    `required_version "about 1.5": `,
}, {
	name: "tofu reads .tofu files, which replace their .tf twins",
	files: map[string]string{
		"versions.tf":   `terraform { required_version = ">= 99.0" }`,
		"versions.tofu": `terraform { required_version = ">= 1.8" }`,
	},
	engine: engineAt(Tofu, "1.8.8"),
}, {
	name: "terraform ignores .tofu files",
	files: map[string]string{
		"versions.tf":   `terraform { required_version = ">= 99.0" }`,
		"versions.tofu": `terraform { required_version = ">= 1.8" }`,
	},
	engine: engineAt(Terraform, "1.8.5"),
	err:    `required_version ">= 99.0" is not satisfied by terraform 1.8.5`,
}, {
	name:   "tofu reads .tofu.json",
	files:  map[string]string{"main.tofu.json": `{"terraform": {"required_version": "< 1.8"}}`},
	engine: engineAt(Tofu, "1.8.8"),
	err:    `required_version "< 1.8" is not satisfied by tofu 1.8.8`,
}, {
	name: "a syntax error is left for the engine",
	files: map[string]string{
		"broken.tf":   `resource "x" {`,
		"versions.tf": `terraform { required_version = ">= 1.5" }`,
	},
	engine: engineAt(Terraform, "1.5.7"),
}}

func TestCheckRequiredVersion(t *testing.T) {
	t.Parallel()
	for _, tt := range requiredVersionCases {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			err := CheckRequiredVersion(dir, tt.engine, nil)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErrContains(t, err, dir+": "+tt.err)
			var rve *RequiredVersionError
			if !errors.As(err, &rve) || rve.Engine != tt.engine {
				t.Errorf("want *RequiredVersionError for the engine, got %#v", err)
			}
		})
	}
}

func TestCheckRequiredVersionMissingDir(t *testing.T) {
	t.Parallel()
	if err := CheckRequiredVersion(t.TempDir()+"/nope", engineAt(Terraform, "1.5.7"), nil); err == nil {
		t.Error("want an error for a missing module dir")
	}
}

// TestCheckRequiredVersionReadsThroughReader: the module a project already
// read is the one checked for terraform (no second read of the dir); tofu
// reads the dir itself, since its .tofu files replace the .tf ones.
func TestCheckRequiredVersionReadsThroughReader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"main.tf":   `terraform { required_version = ">= 1.0" }`,
		"main.tofu": `terraform { required_version = ">= 99.0" }`,
	})
	reads := 0
	read := func(string) (*tfconfig.Module, error) {
		reads++
		return &tfconfig.Module{RequiredCore: []string{">= 2.0"}}, nil
	}
	err := CheckRequiredVersion(dir, engineAt(Terraform, "1.5.7"), read)
	wantErrContains(t, err, `required_version ">= 2.0" is not satisfied`)
	if reads != 1 {
		t.Errorf("terraform: the reader was called %d times, want 1", reads)
	}
	reads = 0
	err = CheckRequiredVersion(dir, engineAt(Tofu, "1.8.8"), read)
	wantErrContains(t, err, `required_version ">= 99.0" is not satisfied`)
	if reads != 0 {
		t.Errorf("tofu: the reader was called %d times, want its own read", reads)
	}
	if err := CheckRequiredVersion(dir, engineAt(Terraform, "1.5.7"), func(string) (*tfconfig.Module, error) {
		return nil, errors.New("unreadable")
	}); err != nil {
		t.Errorf("a module the reader could not read is left to the engine, got %v", err)
	}
}
