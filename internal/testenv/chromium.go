package testenv

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Tool finds a test tool (actionlint, shellcheck, …) on PATH; without it
// the test is skipped, unless STRATA_TEST_TOOLS=1 (make test, which
// installs the tools into bin/tools, and then it must be there).
func Tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("STRATA_TEST_TOOLS") == "1" {
			t.Fatalf("%s is not on PATH; make tools installs it into bin/tools", name)
		}
		t.Skipf("%s is not on PATH (make tools installs it into bin/tools)", name)
	}
	return p
}

// ChromiumPath is where Debian's chromium package puts the browser.
const ChromiumPath = "/usr/bin/chromium"

// Chromium skips the test when the browser is not installed, unless
// STRATA_TEST_TOOLS=1 (CI installs it, and then it must be).
func Chromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("STRATA_TEST_TOOLS") == "1" {
			t.Fatalf("%s is missing (%v); CI installs Debian's chromium package", ChromiumPath, err)
		}
		t.Skipf("%s is missing: no browser test (CI installs Debian's chromium package)", ChromiumPath)
	}
	return ChromiumPath
}

// RunChromium runs the headless browser with args after its own: a new
// profile, no network of its own, bounded in time. It returns stdout.
func RunChromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := Chromium(t)
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	var stderr []byte
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr)
	}
	return out
}

// MermaidJSEnv names a mermaid browser bundle (dist/mermaid.min.js of
// mermaid's npm package) in place of the one make tools installs.
const MermaidJSEnv = "STRATA_MERMAID_JS"

// MermaidJS is the mermaid browser bundle a page loads to draw a Mermaid
// block: $STRATA_MERMAID_JS, else bin/tools/mermaid.min.js at the
// module's root (make tools installs it from npm). It skips the test when
// there is none, unless STRATA_TEST_TOOLS=1 (make test installs it, and
// then it must be there).
func MermaidJS(t *testing.T) string {
	t.Helper()
	path := os.Getenv(MermaidJSEnv)
	if path == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(root, "bin", "tools", "mermaid.min.js")
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		if os.Getenv("STRATA_TEST_TOOLS") == "1" {
			t.Fatalf("no mermaid bundle at %s (%v); make tools installs it from npm", path, err)
		}
		t.Skipf("no mermaid bundle at %s: no Mermaid drawing test (make tools installs it from npm, or set %s)", path, MermaidJSEnv)
	}
	return abs
}

// moduleRoot is the nearest directory at or above the working directory
// that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
