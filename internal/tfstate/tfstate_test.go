package tfstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		testenv.WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), text)
	}
}

func backendTF(typ, body string) string {
	return "terraform {\n  backend \"" + typ + "\" {\n" + body + "\n  }\n}\n"
}

const s3Body = `bucket = "tfstate"
key = "net/terraform.tfstate"
region = "eu-west-1"
use_lockfile = true
skip_credentials_validation = true`

func TestLocate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		files         map[string]string
		workspace     string
		backendConfig []string
		env           map[string]string
		path          string // under the module dir, for the local backend
		bucket, key   string
		err           error
	}{
		{name: "no backend", files: map[string]string{"main.tf": ""}, path: "terraform.tfstate"},
		{name: "another workspace", files: map[string]string{"main.tf": ""}, workspace: "dev", path: "terraform.tfstate.d/dev/terraform.tfstate"},
		{name: "a local backend's path", files: map[string]string{"main.tf": backendTF("local", `path = "state/x.tfstate"`)}, path: "state/x.tfstate"},
		{name: "a local path in another workspace", files: map[string]string{"main.tf": backendTF("local", `path = "state/x.tfstate"
workspace_dir = "ws"`)}, workspace: "dev", path: "ws/dev/x.tfstate"},
		{name: "-backend-config path", files: map[string]string{"main.tf": backendTF("local", "")}, backendConfig: []string{"path=one.tfstate"}, path: "one.tfstate"},
		{name: "an override file's backend wins", files: map[string]string{"a_override.tf": backendTF("local", `path = "over.tfstate"`), "b.tf": backendTF("s3", s3Body)}, path: "over.tfstate"},
		{name: "s3, default workspace", files: map[string]string{"main.tf": backendTF("s3", s3Body)}, bucket: "s3://tfstate?region=eu-west-1", key: "net/terraform.tfstate"},
		{name: "s3, another workspace", files: map[string]string{"main.tf": backendTF("s3", s3Body)}, workspace: "dev", bucket: "s3://tfstate?region=eu-west-1", key: "env:/dev/net/terraform.tfstate"},
		{name: "s3, a workspace key prefix", files: map[string]string{"main.tf": backendTF("s3", s3Body+"\nworkspace_key_prefix = \"ws\"")}, workspace: "dev", bucket: "s3://tfstate?region=eu-west-1", key: "ws/dev/net/terraform.tfstate"},
		{name: "s3, endpoint and path style", files: map[string]string{"main.tf": backendTF("s3", s3Body+"\nendpoints = { s3 = \"http://127.0.0.1:9000\" }\nuse_path_style = true")},
			bucket: "s3://tfstate?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&use_path_style=true", key: "net/terraform.tfstate"},
		{name: "s3, a partial config completed by -backend-config", files: map[string]string{"main.tf": backendTF("s3", ""), "backend.hcl": "bucket = \"b\"\nregion = \"us-east-2\"\n"},
			backendConfig: []string{"BACKEND.HCL", "key=stack/one.tfstate", "use_path_style=true"}, bucket: "s3://b?region=us-east-2&use_path_style=true", key: "stack/one.tfstate"},
		{name: "s3, the region from the environment", files: map[string]string{"main.tf": backendTF("s3", `bucket = "b"
key = "k"`)}, env: map[string]string{"AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"}, bucket: "s3://b?region=ap-south-1", key: "k"},
		{name: "s3, keys given as arguments", files: map[string]string{"main.tf": backendTF("s3", s3Body+"\naccess_key = \"AKIA\"")}, err: ErrUnsupported},
		{name: "s3, a role to assume", files: map[string]string{"main.tf": backendTF("s3", s3Body+"\nassume_role = { role_arn = \"arn\" }")}, err: ErrUnsupported},
		{name: "s3, a customer key", files: map[string]string{"main.tf": backendTF("s3", s3Body)}, backendConfig: []string{"sse_customer_key=x"}, err: ErrUnsupported},
		{name: "s3 without a key", files: map[string]string{"main.tf": backendTF("s3", `bucket = "b"
region = "r"`)}, err: ErrUnsupported},
		{name: "gcs", files: map[string]string{"main.tf": backendTF("gcs", `bucket = "tf"
prefix = "net/"`)}, workspace: "dev", bucket: "gs://tf", key: "net/dev.tfstate"},
		{name: "gcs without a prefix", files: map[string]string{"main.tf": backendTF("gcs", `bucket = "tf"`)}, bucket: "gs://tf", key: "default.tfstate"},
		{name: "gcs with credentials", files: map[string]string{"main.tf": backendTF("gcs", `bucket = "tf"
credentials = "key.json"`)}, err: ErrUnsupported},
		{name: "an azurerm backend", files: map[string]string{"main.tf": backendTF("azurerm", "")}, err: ErrUnsupported},
		{name: "a cloud block", files: map[string]string{"main.tf": "terraform {\n  cloud {}\n}\n"}, err: ErrUnsupported},
		{name: "JSON configuration", files: map[string]string{"main.tf.json": "{}"}, err: ErrUnsupported},
		{name: "a path that is not a literal", files: map[string]string{"main.tf": backendTF("local", "path = var.p")}, err: ErrUnsupported},
		{name: "two backend blocks", files: map[string]string{"a.tf": backendTF("local", ""), "b.tf": backendTF("local", "")}, err: ErrUnsupported},
		{name: "the backend in TF_CLI_ARGS_init", files: map[string]string{"main.tf": ""}, env: map[string]string{"TF_CLI_ARGS_init": "-backend-config=path=x"}, err: ErrUnsupported},
		{name: "credentials the engine gets apart", files: map[string]string{"main.tf": backendTF("s3", s3Body)}, env: map[string]string{"AWS_PROFILE": "strata-test-other-" + os.Getenv("AWS_PROFILE")}, err: ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			var bc []string
			for _, b := range tt.backendConfig {
				if b == "BACKEND.HCL" {
					b = filepath.Join(dir, "backend.hcl")
				}
				bc = append(bc, b)
			}
			env := envFor(tt.env)
			l, err := Locate(dir, tt.workspace, bc, env)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("got %+v, %v; want %v", l, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Location{Bucket: tt.bucket, Key: tt.key}
			if tt.path != "" {
				want = Location{Path: filepath.Join(dir, filepath.FromSlash(tt.path))}
			}
			if l.Path != want.Path || l.Bucket != want.Bucket || l.Key != want.Key {
				t.Errorf("got %s (%+v); want %s", l, l, want)
			}
		})
	}
}

// envFor is the process environment with over set on top, as the
// engine's environment of a unit is.
func envFor(over map[string]string) map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range over {
		env[k] = v
	}
	return env
}

func TestReadVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, state string
		want        Version
		err         error
	}{
		{"terraform's order", `{"version": 4, "terraform_version": "1.11.4", "serial": 7, "lineage": "abc", "outputs": {}, "resources": []}`, Version{7, "abc"}, nil},
		{"the rest is not read", `{"serial": 3, "lineage": "l", "resources": [` + strings.Repeat("x", 100), Version{3, "l"}, nil},
		{"another order", `{"outputs": {"a": {"value": [1, {"b": 2}]}}, "lineage": "l", "serial": 0}`, Version{0, "l"}, nil},
		{"an encrypted state", `{"encrypted_data": "x", "meta": {}}`, Version{}, ErrUnsupported},
		{"no lineage", `{"serial": 1}`, Version{}, ErrUnsupported},
		{"not JSON", `terraform`, Version{}, ErrUnsupported},
		{"an array", `[1]`, Version{}, ErrUnsupported},
	}
	for _, tt := range tests {
		got, err := readVersion(strings.NewReader(tt.state), "state")
		if got != tt.want || (tt.err == nil) != (err == nil) || (tt.err != nil && !errors.Is(err, tt.err)) {
			t.Errorf("%s: got %+v, %v; want %+v, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestProbeLocal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.tf": "", "terraform.tfstate.d/dev/terraform.tfstate": `{"version": 4, "serial": 2, "lineage": "x"}`})
	var stores Stores
	if _, v, err := Probe(context.Background(), &stores, dir, "dev", nil, nil); err != nil || v != (Version{2, "x"}) {
		t.Errorf("dev: %+v, %v", v, err)
	}
	if _, _, err := Probe(context.Background(), &stores, dir, "default", nil, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("no state yet: %v; want ErrUnsupported", err)
	}
}

func TestConfirm(t *testing.T) {
	t.Parallel()
	engine := `{"version": 3, "backend": {"type": "s3", "config": {"bucket": "tfstate", "key": "net/terraform.tfstate", "region": "eu-west-1",
		"endpoints": {"s3": null, "sts": "x"}, "use_path_style": null, "workspace_key_prefix": null, "use_lockfile": true, "profile": null}, "hash": 1}}`
	tests := []struct {
		name, main, engine string
		ok                 bool
	}{
		{"the engine's backend", backendTF("s3", s3Body), engine, true},
		{"another key", backendTF("s3", strings.Replace(s3Body, "net/", "app/", 1)), engine, false},
		{"a path style the engine did not use", backendTF("s3", s3Body+"\nuse_path_style = true"), engine, false},
		{"another backend type", backendTF("local", ""), engine, false},
		{"no backend, none recorded", "", "", true},
		{"a block, none recorded", backendTF("s3", s3Body), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := map[string]string{"main.tf": tt.main}
			if tt.engine != "" {
				files[".terraform/terraform.tfstate"] = tt.engine
			}
			writeFiles(t, dir, files)
			l, err := Locate(dir, "", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Confirm(filepath.Join(dir, ".terraform")); (err == nil) != tt.ok {
				t.Errorf("Confirm: %v; want ok %t", err, tt.ok)
			}
		})
	}
}

// FuzzReadVersion: any bytes give a version with a lineage or an error
// that is ErrUnsupported, never a panic.
func FuzzReadVersion(f *testing.F) {
	f.Add(`{"version": 4, "serial": 7, "lineage": "abc", "outputs": {}}`)
	f.Add(`{"encrypted_data": "x"}`)
	f.Add(`{"serial": "7", "lineage": 1}`)
	f.Fuzz(func(t *testing.T, state string) {
		v, err := readVersion(strings.NewReader(state), "state")
		if err == nil && v.Lineage == "" {
			t.Errorf("%q: no lineage and no error", state)
		}
		if err != nil && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: %v is not ErrUnsupported", state, err)
		}
	})
}

// FuzzBackendConfig: any -backend-config value over an s3 backend gives a
// location or ErrUnsupported, never a panic.
func FuzzBackendConfig(f *testing.F) {
	f.Add("key=a/b.tfstate")
	f.Add("endpoints={s3=\"http://x\"}")
	f.Add("use_path_style=true")
	f.Add("workspace_key_prefix=")
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(backendTF("s3", s3Body)), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, item string) {
		if !strings.Contains(item, "=") {
			return // a file path: read from disk, not fuzzed
		}
		if _, err := Locate(dir, "dev", []string{item}, nil); err != nil && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: %v is not ErrUnsupported", item, err)
		}
	})
}
