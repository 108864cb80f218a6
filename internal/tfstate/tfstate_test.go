package tfstate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestProbe(t *testing.T) {
	t.Parallel()
	state := `{"version": 4, "serial": 7, "lineage": "abc", "outputs": {}}`
	tests := []struct {
		name      string
		files     map[string]string
		workspace string
		want      Version
		err       error
	}{
		{"the default workspace", map[string]string{"main.tf": "", "terraform.tfstate": state}, "default", Version{7, "abc"}, nil},
		{"another workspace", map[string]string{"main.tf": "", "terraform.tfstate.d/dev/terraform.tfstate": state}, "dev", Version{7, "abc"}, nil},
		{"a local backend's path", map[string]string{"main.tf": "terraform {\n  backend \"local\" {\n    path = \"state/x.tfstate\"\n  }\n}\n", "state/x.tfstate": state}, "", Version{7, "abc"}, nil},
		{"an s3 backend", map[string]string{"main.tf": "terraform {\n  backend \"s3\" {}\n}\n", "terraform.tfstate": state}, "", Version{}, ErrUnsupported},
		{"a cloud block", map[string]string{"main.tf": "terraform {\n  cloud {}\n}\n"}, "", Version{}, ErrUnsupported},
		{"JSON configuration", map[string]string{"main.tf.json": "{}", "terraform.tfstate": state}, "", Version{}, ErrUnsupported},
		{"an encrypted state", map[string]string{"main.tf": "", "terraform.tfstate": `{"encrypted_data": "x", "meta": {}}`}, "", Version{}, ErrUnsupported},
		{"no state yet", map[string]string{"main.tf": ""}, "", Version{}, ErrUnsupported},
		{"a path that is not a literal", map[string]string{"main.tf": "terraform {\n  backend \"local\" {\n    path = var.p\n  }\n}\n"}, "", Version{}, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, text := range tt.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Probe(dir, tt.workspace)
			if got != tt.want || (tt.err == nil) != (err == nil) || (tt.err != nil && !errors.Is(err, tt.err)) {
				t.Errorf("got %+v, %v; want %+v, %v", got, err, tt.want, tt.err)
			}
		})
	}
}
