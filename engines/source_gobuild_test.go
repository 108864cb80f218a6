package engines

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTerraformInstallCmd(t *testing.T) {
	t.Setenv("GOOS", "windows")
	t.Setenv("GOFLAGS", "-mod=vendor")
	t.Setenv("CGO_ENABLED", "1")
	cmd := terraformInstallCmd(context.Background(), "go", mustVersion(t, "1.5.7"), "/cache/stage")
	want := []string{"go", "install", "-trimpath",
		"-ldflags", "-s -w -X github.com/hashicorp/terraform/version.dev=no",
		"github.com/hashicorp/terraform@v1.5.7"}
	if !slices.Equal(cmd.Args, want) {
		t.Errorf("args %q\nwant %q", cmd.Args, want)
	}
	if cmd.Dir != "/cache/stage" {
		t.Errorf("dir %q", cmd.Dir)
	}
	assertGoEnv(t, cmd.Env, "GOBIN=/cache/stage")
}

func TestTofuCmds(t *testing.T) {
	t.Setenv("GOWORK", "/somewhere/go.work")
	dl := tofuDownloadCmd(context.Background(), "/usr/bin/go", mustVersion(t, "1.8.8"), "/tmp/empty")
	if want := []string{"/usr/bin/go", "mod", "download", "-json", "github.com/opentofu/opentofu@v1.8.8"}; !slices.Equal(dl.Args, want) {
		t.Errorf("download args %q", dl.Args)
	}
	if dl.Dir != "/tmp/empty" {
		t.Errorf("download dir %q", dl.Dir)
	}
	assertGoEnv(t, dl.Env)

	b := tofuBuildCmd(context.Background(), "go", "/tmp/src", "/cache/stage/tofu")
	want := []string{"go", "build", "-trimpath",
		"-ldflags", "-s -w -X 'github.com/opentofu/opentofu/version.dev=no'",
		"-o", "/cache/stage/tofu", "./cmd/tofu"}
	if !slices.Equal(b.Args, want) {
		t.Errorf("build args %q\nwant %q", b.Args, want)
	}
	if b.Dir != "/tmp/src" {
		t.Errorf("build dir %q", b.Dir)
	}
	assertGoEnv(t, b.Env)
}

// assertGoEnv checks a child go command's environment: no cgo, no
// GOFLAGS, no workspace, no cross-compiling, plus extra.
func assertGoEnv(t *testing.T, env []string, extra ...string) {
	t.Helper()
	for _, kv := range append([]string{"CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off"}, extra...) {
		if !slices.Contains(env, kv) {
			t.Errorf("env lacks %s", kv)
		}
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOOS", "GOARCH", "GOEXPERIMENT":
			t.Errorf("env keeps %s", kv)
		case "CGO_ENABLED", "GOFLAGS", "GOWORK", "GOBIN":
			if !slices.Contains(append([]string{"CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off"}, extra...), kv) {
				t.Errorf("env keeps the parent's %s", kv)
			}
		}
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Error("env lost PATH")
	}
}

func TestGoBuildUsable(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	off := goBuildSource{&Installer{}}
	if err := off.usable(Terraform, mustVersion(t, "1.5.7")); err == nil || !strings.Contains(err.Error(), "not enabled: set STRATA_ENGINE_BUILD=go") {
		t.Errorf("disabled: %v", err)
	}
	on := goBuildSource{&Installer{Build: true}}
	for _, tt := range []struct {
		name, version string
		ok            bool
	}{
		{Terraform, "1.5.7", true},
		{Terraform, "1.8.5", true},
		{Terraform, "1.9.0-alpha20240501", false},
		{Terraform, "1.9.0", false},
		{Terraform, "1.11.4", false},
		{Tofu, "1.8.8", true},
		{Tofu, "1.10.6", true},
	} {
		err := on.usable(tt.name, mustVersion(t, tt.version))
		if (err == nil) != tt.ok {
			t.Errorf("%s %s: %v", tt.name, tt.version, err)
		}
		if err != nil && !strings.Contains(err.Error(), "only terraform ≤ 1.8 builds") {
			t.Errorf("%s %s: reason %v", tt.name, tt.version, err)
		}
	}
	missing := goBuildSource{&Installer{Build: true, GoCommand: filepath.Join(t.TempDir(), "go")}}
	if err := missing.usable(Tofu, mustVersion(t, "1.8.8")); err == nil || !strings.Contains(err.Error(), "cannot build without the go command") {
		t.Errorf("missing go: %v", err)
	}
}

// The final error gives the build source's reason with the others.
func TestUnbuildableTerraformIsExplained(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	in, _ := testInstaller(t)
	in.Offline, in.Build = true, true
	_, err := in.Install(context.Background(), Spec{Terraform, "1.9.8"})
	wantErrContains(t, err,
		"terraform 1.9.8 is not available:",
		"\n  download: offline (STRATA_ENGINES_OFFLINE)",
		"\n  build: terraform 1.9.8 cannot be built from the Go module proxy: from 1.9 on its go.mod has replace directives",
	)
}

// A build that fails reports the go command and the end of its output,
// and leaves nothing in the cache.
func TestGoBuildFailureIsReported(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	in, _ := testInstaller(t)
	in.Offline, in.Build = true, true
	// A proxy that has nothing makes the build fail at once, offline.
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOMODCACHE", t.TempDir())
	_, err := in.Install(context.Background(), Spec{Terraform, "1.5.7"})
	wantErrContains(t, err,
		"\n  build: go install -trimpath -ldflags -s -w -X github.com/hashicorp/terraform/version.dev=no github.com/hashicorp/terraform@v1.5.7: exit status 1",
		"module lookup disabled by GOPROXY=off",
	)
	if vs := in.cachedVersions(Terraform); len(vs) != 0 {
		t.Errorf("cache holds %v", vs)
	}
	assertNoDebris(t, filepath.Join(in.CacheDir, "engines", "terraform"))
}

func TestCopyTreeMakesFilesWritable(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	writeTree(t, src, map[string]string{"go.mod": "module x\n", "cmd/tofu/main.go": "package main\n"})
	if err := os.Chmod(filepath.Join(src, "go.mod"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dst, "go.mod"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("go.mod mode %v, %v", fi.Mode(), err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "cmd/tofu/main.go")); err != nil || string(b) != "package main\n" {
		t.Errorf("main.go %q, %v", b, err)
	}
}
