package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	// Binary is the built plugin.
	Binary string
}

// TimeProvider is hashicorp/time 0.13.1: time_static and time_sleep
// need no network at plan or apply.
func TimeProvider(t testing.TB) Provider {
	return BuildProvider(t, "github.com/hashicorp/terraform-provider-time", "registry.terraform.io/hashicorp/time", "0.13.1")
}

// BuildProvider builds a provider's Go module at version, once per
// machine: the binary is kept under the user's cache dir, built under a
// file lock so test packages running at once build it once. Only the Go
// module proxy is reached. In -short mode, or without the go command, the
// test is skipped.
func BuildProvider(t testing.TB, module, address, version string) Provider {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a provider")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a provider with")
	}
	typ := address[strings.LastIndex(address, "/")+1:]
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "strata-test", "providers", typ+"_"+version+"_"+runtime.GOOS+"_"+runtime.GOARCH)
	bin := filepath.Join(dir, "terraform-provider-"+typ)
	p := Provider{Address: address, Version: version, Binary: bin}
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
	cmd := exec.CommandContext(ctx, gobin, "install", module+"@v"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s@v%s: %v\n%s", module, version, err, out)
	}
	return p
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
		typ := p.Address[strings.LastIndex(p.Address, "/")+1:]
		dir := filepath.Join(mirror, filepath.FromSlash(p.Address), p.Version, runtime.GOOS+"_"+runtime.GOARCH)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p.Binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "terraform-provider-"+typ+"_v"+p.Version), data, 0o755); err != nil {
			t.Fatal(err)
		}
		includes = append(includes, fmt.Sprintf("%q", p.Address))
	}
	cliConfig = filepath.Join(t.TempDir(), "terraformrc")
	text := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [%s]\n  }\n}\n", mirror, strings.Join(includes, ", "))
	WriteFile(t, cliConfig, text)
	return mirror, cliConfig
}
