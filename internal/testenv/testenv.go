// Package testenv gives strata's tests their repositories and a hermetic
// engine environment: their own temp dirs, cache dir and CLI config file,
// nothing read from the machine's own configuration.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// WriteRepo writes files (path relative to the repo -> content) into a new
// temp dir and returns it.
func WriteRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		WriteFile(t, filepath.Join(root, name), content)
	}
	return root
}

// WriteFile writes a file, creating its directory.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// NeedTerraform skips a test in -short mode or when no terraform is on
// PATH.
func NeedTerraform(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs terraform")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform is not on PATH")
	}
}

// Env is a hermetic environment for strata and its engines: PATH, a temp
// HOME, an empty CLI config file, a temp strata cache, no update checks;
// extra entries are appended.
func Env(t testing.TB, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	rc := filepath.Join(home, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TF_CLI_CONFIG_FILE=" + rc,
		"STRATA_CACHE_DIR=" + filepath.Join(home, "cache"),
		"CHECKPOINT_DISABLE=1",
	}
	return append(env, extra...)
}
