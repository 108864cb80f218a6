package engines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (path → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// versionFileCases are trees of version files, the dir whose engine is
// asked for, and the spec and file VersionFile finds there.
var versionFileCases = []struct {
	name  string
	files map[string]string
	dir   string
	want  Spec
	file  string // relative to root; empty when none is found
	err   string
}{{
	name:  "in the dir itself",
	files: map[string]string{"prod/net/.terraform-version": "1.5.7\n"},
	dir:   "prod/net",
	want:  Spec{Terraform, "1.5.7"},
	file:  "prod/net/.terraform-version",
}, {
	name:  "walks up to the root",
	files: map[string]string{".terraform-version": "1.5.7", "prod/net/main.tf": ""},
	dir:   "prod/net",
	want:  Spec{Terraform, "1.5.7"},
	file:  ".terraform-version",
}, {
	name: "nearest wins, whatever its engine",
	files: map[string]string{
		".terraform-version":       "1.5.7",
		"prod/.opentofu-version":   "~> 1.8",
		"prod/net/other/.ignored":  "",
		"dev/.terraform-version":   "1.6.6",
		"prod/net/.keep-this-file": "",
	},
	dir:  "prod/net",
	want: Spec{Tofu, "~> 1.8"},
	file: "prod/.opentofu-version",
}, {
	name:  "nearer terraform beats farther tofu",
	files: map[string]string{".opentofu-version": "1.8.8", "prod/.terraform-version": "1.5.7"},
	dir:   "prod/net",
	want:  Spec{Terraform, "1.5.7"},
	file:  "prod/.terraform-version",
}, {
	name:  "both in one directory: .opentofu-version wins",
	files: map[string]string{"prod/.terraform-version": "1.5.7", "prod/.opentofu-version": "1.8.8"},
	dir:   "prod",
	want:  Spec{Tofu, "1.8.8"},
	file:  "prod/.opentofu-version",
}, {
	name:  "the root dir itself",
	files: map[string]string{".opentofu-version": "latest"},
	dir:   ".",
	want:  Spec{Tofu, "latest"},
	file:  ".opentofu-version",
}, {
	name:  "comments, blank lines, a v prefix and CRLF",
	files: map[string]string{".terraform-version": "# pinned for prod\r\n\r\n  v1.5.7  # LTS\r\n1.6.0\r\n"},
	dir:   "a/b/c",
	want:  Spec{Terraform, "1.5.7"},
	file:  ".terraform-version",
}, {
	name:  "a constraint",
	files: map[string]string{".terraform-version": ">= 1.5, < 1.9"},
	dir:   ".",
	want:  Spec{Terraform, ">= 1.5, < 1.9"},
	file:  ".terraform-version",
}, {
	name:  "none",
	files: map[string]string{"prod/main.tf": ""},
	dir:   "prod",
}, {
	name:  "a partial version is an error naming the file and line",
	files: map[string]string{"prod/.terraform-version": "\n# comment\n1.5\n"},
	dir:   "prod",
	file:  "prod/.terraform-version",
	err:   `prod/.terraform-version:3: engine version "1.5": is not an exact version`,
}, {
	name:  "an empty file is an error",
	files: map[string]string{".opentofu-version": "# nothing\n\n"},
	dir:   ".",
	file:  ".opentofu-version",
	err:   ".opentofu-version: names no version",
}, {
	name:  "a directory named like a version file is not one",
	files: map[string]string{".terraform-version/x": "", "sub/.keep": ""},
	dir:   "sub",
	file:  ".terraform-version",
	err:   "is a directory",
}}

func TestVersionFile(t *testing.T) {
	t.Parallel()
	for _, tt := range versionFileCases {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tt.files)
			spec, file, ok, err := VersionFile(root, tt.dir)
			wantFile := ""
			if tt.file != "" {
				wantFile = filepath.Join(root, filepath.FromSlash(tt.file))
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || ok {
					t.Fatalf("got %+v %q %v, %v; want error %q", spec, file, ok, err, tt.err)
				}
				if file != wantFile {
					t.Errorf("file %q, want %q", file, wantFile)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tt.file != "") || spec != tt.want || file != wantFile {
				t.Errorf("got %+v %q %v; want %+v %q", spec, file, ok, tt.want, wantFile)
			}
		})
	}
}

// Files above the root do not count, and dirs are relative to the root or
// absolute inside it.
func TestVersionFileStaysInsideTheRoot(t *testing.T) {
	outer := t.TempDir()
	writeTree(t, outer, map[string]string{".terraform-version": "1.5.7", "repo/prod/main.tf": ""})
	root := filepath.Join(outer, "repo")

	if _, _, ok, err := VersionFile(root, "prod"); ok || err != nil {
		t.Errorf("found a version file above the root: %v %v", ok, err)
	}
	writeTree(t, root, map[string]string{".terraform-version": "1.6.6"})
	spec, file, ok, err := VersionFile(root, filepath.Join(root, "prod"))
	if err != nil || !ok || spec.Version != "1.6.6" || file != filepath.Join(root, ".terraform-version") {
		t.Errorf("absolute dir: %+v %q %v %v", spec, file, ok, err)
	}
	for _, dir := range []string{"..", "../x", outer} {
		if _, _, _, err := VersionFile(root, dir); err == nil || !strings.Contains(err.Error(), "is not inside") {
			t.Errorf("dir %q: %v", dir, err)
		}
	}
}
