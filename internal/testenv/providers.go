package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/filelock"
)

// Provider is a real provider built from its Go module, as a mirror
// serves it.
type Provider struct {
	// Address is host/namespace/type: registry.terraform.io/hashicorp/time.
	Address string
	Version string
	// Platform is the OS_ARCH it is built for: linux_amd64.
	Platform string
	// Binary is the built plugin.
	Binary string
}

// Type is the provider's type, the last part of its address: time.
func (p Provider) Type() string { return p.Address[strings.LastIndex(p.Address, "/")+1:] }

// HostPlatform is this machine's OS_ARCH, as terraform names platforms.
const HostPlatform = runtime.GOOS + "_" + runtime.GOARCH

// TimeProvider is hashicorp/time 0.13.1 for this machine: time_static and
// time_sleep need no network at plan or apply.
func TimeProvider(t testing.TB) Provider {
	return TimeProviderAt(t, "0.13.1", HostPlatform)
}

// TimeProviderAt is hashicorp/time at version, built for platform.
func TimeProviderAt(t testing.TB, version, platform string) Provider {
	return BuildProvider(t, "github.com/hashicorp/terraform-provider-time", "registry.terraform.io/hashicorp/time", version, platform)
}

// BuildProvider builds a provider's Go module at version for platform
// (OS_ARCH), once per machine: the binary is kept under the user's cache
// dir, built under a file lock so test packages running at once build it
// once. Only the Go module proxy is reached: the module is downloaded
// into the module cache and built there, for any platform. In -short
// mode, or without the go command, the test is skipped.
func BuildProvider(t testing.TB, module, address, version, platform string) Provider {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a provider")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a provider with")
	}
	p := Provider{Address: address, Version: version, Platform: platform}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "strata-test", "providers", p.Type()+"_"+version+"_"+platform)
	bin := filepath.Join(dir, "terraform-provider-"+p.Type())
	p.Binary = bin
	if _, err := os.Stat(bin); err == nil {
		return p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	lock, err := filelock.Acquire(ctx, filepath.Join(dir, ".build.lock"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := os.Stat(bin); err == nil {
		return p
	}
	if err := buildModule(ctx, gobin, module+"@v"+version, platform, bin); err != nil {
		t.Fatal(err)
	}
	return p
}

// buildModule builds the main package at the root of module@version for
// platform into bin, from the module cache.
func buildModule(ctx context.Context, gobin, moduleVersion, platform, bin string) error {
	goos, goarch, ok := strings.Cut(platform, "_")
	if !ok {
		return fmt.Errorf("platform %q is not OS_ARCH", platform)
	}
	env := append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	dl := exec.CommandContext(ctx, gobin, "mod", "download", "-json", moduleVersion)
	dl.Env = env
	out, err := dl.Output()
	if err != nil {
		return fmt.Errorf("downloading %s: %v\n%s", moduleVersion, err, out)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("downloading %s: %s %v", moduleVersion, mod.Error, err)
	}
	build := exec.CommandContext(ctx, gobin, "build", "-trimpath", "-o", bin+".tmp", ".")
	build.Dir = mod.Dir
	build.Env = append(env, "GOOS="+goos, "GOARCH="+goarch)
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s for %s: %v\n%s", moduleVersion, platform, err, out)
	}
	return os.Rename(bin+".tmp", bin)
}

// FilesystemMirror lays providers out as terraform's filesystem_mirror
// reads them (unpacked: HOST/NS/TYPE/VERSION/OS_ARCH/terraform-provider-TYPE_vVERSION)
// and returns a CLI config file that installs them from there and from
// nowhere else.
func FilesystemMirror(t testing.TB, providers ...Provider) (mirror, cliConfig string) {
	t.Helper()
	mirror = t.TempDir()
	var includes []string
	for _, p := range providers {
		dir := filepath.Join(mirror, filepath.FromSlash(p.Address), p.Version, p.Platform)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p.Binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "terraform-provider-"+p.Type()+"_v"+p.Version), data, 0o755); err != nil {
			t.Fatal(err)
		}
		if inc := fmt.Sprintf("%q", p.Address); !slices.Contains(includes, inc) {
			includes = append(includes, inc)
		}
	}
	cliConfig = filepath.Join(t.TempDir(), "terraformrc")
	text := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [%s]\n  }\n}\n", mirror, strings.Join(includes, ", "))
	WriteFile(t, cliConfig, text)
	return mirror, cliConfig
}
