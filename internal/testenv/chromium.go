package testenv

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

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
