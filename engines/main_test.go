package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-version"
)

// localTerraform is the real terraform the install tests package into
// their loopback mirrors: the one on PATH (CI puts one there on a machine
// that has none).
var localTerraform = func() string {
	if p, err := exec.LookPath("terraform"); err == nil {
		return p
	}
	return "/usr/local/bin/terraform"
}()

// localTerraformVersion is what localTerraform reports; probed once.
var (
	probeOnce    sync.Once
	probeVersion *version.Version
	probeErr     error
)

// fixtureRoot holds files shared by the tests of one run (mirror trees
// built from localTerraform); TestMain removes it.
var fixtureRoot string

// Child-process mode: TestMain runs one install and exits, so tests can
// start real concurrent strata-like processes from the test binary.
const (
	envChild     = "STRATA_ENGINES_TEST_CHILD"
	envChildSpec = "STRATA_ENGINES_TEST_SPEC"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "install" {
		os.Exit(childInstall())
	}
	var err error
	fixtureRoot, err = os.MkdirTemp("", "strata-engines-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// terraform warns on stderr when TF_CLI_CONFIG_FILE names a missing
	// file; give every engine the tests run an empty one.
	cfg := filepath.Join(fixtureRoot, "empty.tfrc")
	if err := os.WriteFile(cfg, nil, 0o644); err == nil {
		os.Setenv("TF_CLI_CONFIG_FILE", cfg)
	}
	code := m.Run()
	os.RemoveAll(fixtureRoot)
	os.Exit(code)
}

// childResult is what a child install prints on stdout.
type childResult struct {
	Path    string `json:"path"`
	Source  string `json:"source"`
	Version string `json:"version"`
}

// childInstall installs $STRATA_ENGINES_TEST_SPEC ("terraform 1.11.4")
// with an Installer from the environment and an empty search path, so the
// engine must come from the cache or the mirror. Progress goes to stderr.
func childInstall() int {
	in, err := NewInstallerFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	in.SearchPath = []string{}
	in.Progress = func(s string) { fmt.Fprintln(os.Stderr, "progress:", s) }
	name, ver, _ := strings.Cut(os.Getenv(envChildSpec), " ")
	e, err := in.Install(context.Background(), Spec{Name: name, Version: ver})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(childResult{Path: e.Path, Source: e.Source, Version: e.Version.String()})
	return 0
}

// needTerraform skips a test when the machine has no terraform to package,
// and returns its version.
func needTerraform(t testing.TB) *version.Version {
	t.Helper()
	probeOnce.Do(func() {
		var id identity
		id, probeErr = identify(context.Background(), localTerraform)
		if probeErr == nil && id.name != Terraform {
			probeErr = fmt.Errorf("%s is %s", localTerraform, id.name)
		}
		probeVersion = id.version
	})
	if probeErr != nil {
		t.Skipf("needs a real terraform at %s: %v", localTerraform, probeErr)
	}
	return probeVersion
}

// needTerraformNewerThanListed skips the tests whose loopback mirror
// lists fixed versions (listedOnly) beside the local terraform's and
// expect constraints to resolve among them as if the local one were the
// newest release: they need a local terraform newer than every listed
// version (1.11.4 on this project's machines). A machine whose only
// terraform is one strata built (1.5.7, see .ci/run) runs the rest.
func needTerraformNewerThanListed(t testing.TB) {
	t.Helper()
	v := needTerraform(t)
	for _, l := range listedOnly {
		lv := version.Must(version.NewVersion(l))
		if lv.Prerelease() == "" && !v.GreaterThan(lv) {
			t.Skipf("the local terraform %s is not newer than %s, which the test mirror lists", v, l)
		}
	}
}

// testInstaller returns an Installer on a fresh cache with an empty search
// path, so nothing outside the test is found, and mirrors that refuse
// connections until a test sets its own, so nothing reaches the internet;
// warnings are collected.
func testInstaller(t testing.TB) (*Installer, *[]string) {
	t.Helper()
	var mu sync.Mutex
	warnings := &[]string{}
	in := &Installer{
		CacheDir:        t.TempDir(),
		SearchPath:      []string{},
		TerraformMirror: closedURL(t),
		TofuMirror:      closedURL(t),
		Warn: func(s string) {
			mu.Lock()
			defer mu.Unlock()
			*warnings = append(*warnings, s)
		},
	}
	return in, warnings
}

// copySource installs a copy of an existing binary through the Installer's
// real lock, staging, verification and rename; tests use it to fill a cache
// without a mirror.
type copySource struct{ from string }

func (copySource) kind() string                          { return "copy" }
func (copySource) installs() bool                        { return true }
func (copySource) usable(string, *version.Version) error { return nil }

func (c copySource) get(_ context.Context, name string, _ *version.Version, dir string) (string, error) {
	dst := filepath.Join(dir, binaryName(name))
	return dst, copyFile(c.from, dst, 0o755)
}

// seedCache installs localTerraform into in's cache.
func seedCache(t testing.TB, in *Installer) *Engine {
	t.Helper()
	v := needTerraform(t)
	e, err := in.installWith(context.Background(), copySource{localTerraform}, Terraform, v)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// relabel identifies binaries for real, then calls terraform tofu: the tofu
// mirror tests serve the local terraform as a tofu release, because no tofu
// binary exists on a test machine. Every test that uses it says so.
func relabel(ctx context.Context, path string) (identity, error) {
	id, err := identify(ctx, path)
	if err == nil && id.name == Terraform {
		id.name = Tofu
	}
	return id, err
}

func mustVersion(t testing.TB, s string) *version.Version {
	t.Helper()
	v, err := version.NewVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantErrContains(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got nil", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not contain %q:\n%v", p, err)
		}
	}
}

// entries lists a directory's names.
func entries(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}
