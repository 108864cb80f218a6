package engines

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// unreadable is a file terraform-config-inspect panics on instead of
// reporting it: required_providers belongs inside a terraform block.
const unreadable = "required_providers {\n  x = {}\n}\n"

func TestInspectModule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		fs    func(tfconfig.FS) tfconfig.FS
		file  string // the file the error names; "" for no error
	}{
		{"readable", map[string]string{"main.tf": `variable "v" {}`}, nil, ""},
		{"a top-level required_providers", map[string]string{"a.tf": `variable "v" {}`, "bad.tf": unreadable, "z.tf": `output "o" { value = 1 }`}, nil, "bad.tf"},
		{"as tofu reads it", map[string]string{"main.tf": `variable "v" {}`, "main.tofu": unreadable}, func(fs tfconfig.FS) tfconfig.FS { return tofuFS{fs} }, "main.tofu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.files)
			fs := tfconfig.NewOsFs()
			if tc.fs != nil {
				fs = tc.fs(fs)
			}
			mod, err := InspectModule(fs, dir)
			if tc.file == "" {
				if err != nil || mod == nil || mod.Variables["v"] == nil {
					t.Fatalf("InspectModule = %v, %v; want the module", mod, err)
				}
				return
			}
			var ie *InspectError
			if !errors.As(err, &ie) || mod != nil {
				t.Fatalf("InspectModule = %v, %v; want an *InspectError", mod, err)
			}
			want := "terraform-config-inspect cannot read " + filepath.Join(dir, tc.file) + `: unhandled block type "required_providers"`
			if ie.Dir != dir || err.Error() != want {
				t.Errorf("error %q (dir %s), want %q", err, ie.Dir, want)
			}
		})
	}
}

// TestCheckRequiredVersionUnreadable checks that a module the library cannot
// read is left for the engine, like a syntax error, instead of panicking.
func TestCheckRequiredVersionUnreadable(t *testing.T) {
	for _, e := range []*Engine{engineAt(Terraform, "1.5.7"), engineAt(Tofu, "1.8.8")} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"versions.tf": `terraform { required_version = ">= 99" }`, "bad.tf": unreadable, "bad.tofu": unreadable})
		if err := CheckRequiredVersion(dir, e, nil); err != nil {
			t.Errorf("%s: %v, want nil", e.Name, err)
		}
	}
}
