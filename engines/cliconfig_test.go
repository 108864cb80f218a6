package engines

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLockMirror(t *testing.T) {
	tests := []struct {
		name, file, text string
		want             []string
		wantErr          bool
	}{
		{name: "no provider_installation", file: "rc", text: "plugin_cache_dir = \"/c\"\n"},
		{name: "filesystem mirror", file: "rc", text: "provider_installation {\n  filesystem_mirror {\n    path = \"/m\"\n    include = [\"registry.terraform.io/*/*\"]\n  }\n  direct {\n    exclude = [\"registry.terraform.io/*/*\"]\n  }\n}\n", want: []string{"-fs-mirror=/m"}},
		{name: "network mirror", file: "rc", text: "provider_installation {\n  network_mirror {\n    url = \"https://mirror.example/\"\n  }\n}\n", want: []string{"-net-mirror=https://mirror.example/"}},
		{name: "direct first", file: "rc", text: "provider_installation {\n  direct {\n    exclude = [\"example.com/*/*\"]\n  }\n  network_mirror {\n    url = \"https://mirror.example/\"\n  }\n}\n"},
		{name: "network mirror before a filesystem one", file: "rc", text: "provider_installation {\n  network_mirror {\n    url = \"https://a/\"\n  }\n  filesystem_mirror {\n    path = \"/m\"\n  }\n}\n", want: []string{"-net-mirror=https://a/"}},
		{name: "json", file: "rc.json", text: `{"provider_installation": {"filesystem_mirror": {"path": "/j"}}}`, want: []string{"-fs-mirror=/j"}},
		{name: "mirror without its path", file: "rc", text: "provider_installation {\n  filesystem_mirror {\n  }\n}\n", wantErr: true},
		{name: "not HCL", file: "rc", text: "provider_installation {\n", wantErr: true},
		{name: "missing file", file: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "missing")
			if tt.file != "" {
				path = filepath.Join(t.TempDir(), tt.file)
				if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			fsMirror, netMirror, err := LockMirror(path)
			var got []string
			if fsMirror != "" {
				got = append(got, "-fs-mirror="+fsMirror)
			}
			if netMirror != "" {
				got = append(got, "-net-mirror="+netMirror)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCLIConfigFile(t *testing.T) {
	home := t.TempDir()
	for _, n := range []string{".terraformrc", ".tofurc"} {
		if err := os.WriteFile(filepath.Join(home, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := CLIConfigFile("terraform", map[string]string{"HOME": home}); got != filepath.Join(home, ".terraformrc") {
		t.Errorf("terraform: %s", got)
	}
	if got := CLIConfigFile("tofu", map[string]string{"HOME": home}); got != filepath.Join(home, ".tofurc") {
		t.Errorf("tofu: %s", got)
	}
	if got := CLIConfigFile("tofu", map[string]string{"HOME": home, "TF_CLI_CONFIG_FILE": "/x"}); got != "/x" {
		t.Errorf("TF_CLI_CONFIG_FILE: %s", got)
	}
	if got := CLIConfigFile("terraform", map[string]string{}); got != "" {
		t.Errorf("no home: %s", got)
	}
}
