package engines

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-version"
)

// goBuildSource builds an engine from the Go module proxy (STRATA_ENGINE_BUILD=go),
// the way air-gapped users with a proxy mirror get engines:
//
//   - terraform ≤ 1.8 with "go install …/terraform@vX" (later versions carry
//     replace directives and leave nested modules out of the module zip, so
//     they cannot be built from the proxy);
//   - tofu by downloading its module, copying it somewhere writable and
//     running "go build ./cmd/tofu" inside the copy ("go install" refuses
//     its module-to-module replace).
//
// Both stamp version.dev=no so the binary reports 1.8.8, not 1.8.8-dev.
type goBuildSource struct{ in *Installer }

func (goBuildSource) kind() string   { return SourceBuild }
func (goBuildSource) installs() bool { return true }

// firstUnbuildableTerraform is the first terraform version whose module
// cannot be built from the proxy.
var firstUnbuildableTerraform = version.Must(version.NewVersion("1.9.0"))

func (g goBuildSource) usable(name string, v *version.Version) error {
	if !g.in.Build {
		return errors.New("not enabled: set STRATA_ENGINE_BUILD=go to build engines from the Go module proxy")
	}
	if name == Terraform && v.Core().GreaterThanOrEqual(firstUnbuildableTerraform) {
		return fmt.Errorf("terraform %s cannot be built from the Go module proxy: from 1.9 on its go.mod has replace directives to nested modules the module zip leaves out; only terraform ≤ 1.8 builds", v)
	}
	if _, err := exec.LookPath(g.goCommand()); err != nil {
		return fmt.Errorf("cannot build without the go command: %w", err)
	}
	return nil
}

func (g goBuildSource) goCommand() string {
	if g.in.GoCommand != "" {
		return g.in.GoCommand
	}
	return "go"
}

func (g goBuildSource) get(ctx context.Context, name string, v *version.Version, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, g.in.buildTimeout())
	defer cancel()
	g.in.progress(fmt.Sprintf("building %s %s from the Go module proxy (this takes minutes)", name, v))
	if name == Terraform {
		if err := runGo(terraformInstallCmd(ctx, g.goCommand(), v, dir)); err != nil {
			return "", err
		}
		return filepath.Join(dir, binaryName(Terraform)), nil
	}
	return g.buildTofu(ctx, v, dir)
}

func (g goBuildSource) buildTofu(ctx context.Context, v *version.Version, dir string) (string, error) {
	scratch, err := os.MkdirTemp("", "strata-opentofu-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)

	// "go mod download" runs in an empty directory so no enclosing module
	// or workspace takes part.
	empty := filepath.Join(scratch, "empty")
	src := filepath.Join(scratch, "src")
	if err := os.Mkdir(empty, 0o755); err != nil {
		return "", err
	}
	dl := tofuDownloadCmd(ctx, g.goCommand(), v, empty)
	var out bytes.Buffer
	dl.Stdout = &out
	if err := runGo(dl); err != nil {
		return "", err
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &mod); err != nil {
		return "", fmt.Errorf("go mod download -json printed %q: %w", firstLine(out.Bytes()), err)
	}
	if mod.Error != "" {
		return "", fmt.Errorf("go mod download %s@v%s: %s", tofuModule, v, mod.Error)
	}
	// tofu is built as the main module (its replace directive is honoured
	// only there), in a writable copy: the module cache is read-only.
	if err := copyTree(mod.Dir, src); err != nil {
		return "", fmt.Errorf("copying %s: %w", mod.Dir, err)
	}
	bin := filepath.Join(dir, binaryName(Tofu))
	if err := runGo(tofuBuildCmd(ctx, g.goCommand(), src, bin)); err != nil {
		return "", err
	}
	return bin, nil
}

// terraformInstallCmd builds the command that installs terraform v into
// gobin.
func terraformInstallCmd(ctx context.Context, goCmd string, v *version.Version, gobin string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goCmd, "install", "-trimpath",
		"-ldflags", "-s -w -X "+terraformModule+"/version.dev=no",
		terraformModule+"@v"+v.String())
	cmd.Dir = gobin
	cmd.Env = goEnv("GOBIN=" + gobin)
	return cmd
}

// tofuDownloadCmd builds the command that puts tofu v's module in the
// module cache and prints where.
func tofuDownloadCmd(ctx context.Context, goCmd string, v *version.Version, dir string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goCmd, "mod", "download", "-json", tofuModule+"@v"+v.String())
	cmd.Dir = dir
	cmd.Env = goEnv()
	return cmd
}

// tofuBuildCmd builds the command that compiles tofu from its module copy
// in src into out.
func tofuBuildCmd(ctx context.Context, goCmd, src, out string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath",
		"-ldflags", "-s -w -X '"+tofuModule+"/version.dev=no'",
		"-o", out, "./cmd/tofu")
	cmd.Dir = src
	cmd.Env = goEnv()
	return cmd
}

// goEnv is the environment of a child go command: the user's (GOPROXY,
// GOMODCACHE, GOCACHE, credentials), without what would change the result
// (cross-compiling, a workspace, cgo, GOFLAGS such as -mod=vendor), plus
// extra.
func goEnv(extra ...string) []string {
	drop := map[string]bool{
		"CGO_ENABLED": true, "GOFLAGS": true, "GOWORK": true, "GOBIN": true,
		"GOOS": true, "GOARCH": true, "GOEXPERIMENT": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	return append(env, extra...)
}

// runGo runs a go command, keeping the end of its output for the error.
func runGo(cmd *exec.Cmd) error {
	var tail tailBuffer
	if cmd.Stdout == nil {
		cmd.Stdout = &tail
	}
	cmd.Stderr = &tail
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(tail.String()))
	}
	return nil
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct{ b []byte }

const tailSize = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = t.b[len(t.b)-tailSize:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// copyTree copies the regular files and directories under src to dst,
// making them writable by the owner.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, target, info.Mode().Perm()|0o200)
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
