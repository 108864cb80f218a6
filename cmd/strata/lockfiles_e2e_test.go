package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// otherPlatform is a platform that is not this machine's, for a lock file
// made here to be used there.
func otherPlatform() string {
	if testenv.HostPlatform == "darwin_arm64" {
		return "linux_amd64"
	}
	return "darwin_arm64"
}

// lockHashes are the hashes a lock file lists, sorted.
func lockHashes(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hashes := regexp.MustCompile(`"(h1|zh):[^"]+"`).FindAllString(string(data), -1)
	slices.Sort(hashes)
	return hashes
}

// mirrorHash is the h1: hash of a provider package in an unpacked
// filesystem mirror, as the engines compute it.
func mirrorHash(t *testing.T, mirror string, p testenv.Provider) string {
	t.Helper()
	h, err := dirhash.HashDir(filepath.Join(mirror, filepath.FromSlash(p.Address), p.Version, p.Platform), "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return `"` + h + `"`
}

// stepCounts counts the steps of each name in a report.
func stepCounts(rep *report.Report) map[string]int {
	n := map[string]int{}
	for _, u := range rep.Units {
		for _, s := range u.Steps {
			n[s.Name]++
		}
	}
	return n
}

// TestLockPlatforms: with lock_platforms declared, the lock files inits
// write hold the hashes of every declared platform, not only this
// machine's (the plugin cache gives the engine only this platform's), and
// units with the same providers get the same lock file from one engine
// lock command. A lock file that lacks a platform, as one made on a
// laptop before the declaration, is completed by strata providers lock;
// lock files already complete are left as they are.
func TestLockPlatforms(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	host := testenv.TimeProvider(t)
	other := testenv.TimeProviderAt(t, "0.13.1", otherPlatform())
	mirror, rc := testenv.FilesystemMirror(t, host, other)
	const units = 4
	files := map[string]string{"strata.yml": fmt.Sprintf("lock_platforms: [%s, %s]\ndirs:\n", testenv.HostPlatform, otherPlatform())}
	for i := range units {
		files["strata.yml"] += fmt.Sprintf("  u%d: {}\n", i)
		files[fmt.Sprintf("u%d/main.tf", i)] = timeModule
	}
	root := testenv.WriteRepo(t, files)
	env := testenv.Env(t, "TF_CLI_CONFIG_FILE="+rc)
	rep := filepath.Join(t.TempDir(), "report.json")
	if r := runBin(t, root, env, "init", "--all", "-j", "2", "--report", rep); r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := []string{mirrorHash(t, mirror, host), mirrorHash(t, mirror, other)}
	slices.Sort(want)
	lockOf := func(i int) string { return filepath.Join(root, fmt.Sprintf("u%d", i), ".terraform.lock.hcl") }
	first, _ := os.ReadFile(lockOf(0))
	for i := range units {
		if got := lockHashes(t, lockOf(i)); !slices.Equal(got, want) {
			t.Errorf("u%d's lock file lists %v, want both platforms' %v", i, got, want)
		}
		if data, _ := os.ReadFile(lockOf(i)); string(data) != string(first) {
			t.Errorf("u%d's lock file differs from u0's:\n%s\n%s", i, data, first)
		}
	}
	n := stepCounts(readReport(t, rep))
	if n[report.StepLock] != 1 || n[report.StepLockShared] != units-1 {
		t.Errorf("steps %v: want the engine's lock command once and its lock file shared by the %d others", n, units-1)
	}

	// Inits that leave the lock files alone run no lock command.
	if r := runBin(t, root, env, "init", "--all", "--report", rep); r.code != 0 {
		t.Fatalf("second init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := stepCounts(readReport(t, rep)); n[report.StepLock]+n[report.StepLockShared] != 0 {
		t.Errorf("second init ran lock steps: %v", n)
	}

	// A lock file made before the declaration: this platform's hash only.
	otherHash := mirrorHash(t, mirror, other)
	var kept []string
	for _, line := range strings.Split(string(first), "\n") {
		if !strings.Contains(line, otherHash) {
			kept = append(kept, line)
		}
	}
	testenv.WriteFile(t, lockOf(2), strings.Join(kept, "\n"))
	if got := lockHashes(t, lockOf(2)); len(got) != 1 {
		t.Fatalf("the edited lock file lists %v", got)
	}
	if r := runBin(t, root, env, "providers", "lock", "--report", rep); r.code != 0 {
		t.Fatalf("providers lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for i := range units {
		if data, _ := os.ReadFile(lockOf(i)); string(data) != string(first) {
			t.Errorf("after providers lock, u%d's lock file:\n%s\nwant\n%s", i, data, first)
		}
	}
	if got := readReport(t, rep).Command; got != "providers lock" {
		t.Errorf("report command %q", got)
	}

	// The lock files work: a plan installs from the cache and plans.
	if r := runBin(t, root, env, "plan", "--all"); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "time_static.x will be created") {
		t.Errorf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestProvidersLockArguments: the engine's own arguments go to its lock
// command (a platform the mirror lacks fails the unit, naming it), a bad
// platform is refused before anything runs, and the engine's other
// providers subcommands still pass through.
func TestProvidersLockArguments(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	_, rc := testenv.FilesystemMirror(t, testenv.TimeProvider(t))
	root := timeRepo(t, 1)
	env := testenv.Env(t, "TF_CLI_CONFIG_FILE="+rc)
	r := runBin(t, filepath.Join(root, "u0"), env, "providers", "lock", "-platform=windows_386")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "not available for") {
		t.Errorf("a platform the mirror lacks: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, root, env, "providers", "lock", "-platform", "windows")
	if r.code != 1 || !strings.Contains(r.stderr, "expected a platform OS_ARCH") {
		t.Errorf("a bad platform: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "u0", ".terraform.lock.hcl")); err == nil {
		t.Errorf("a refused command wrote a lock file")
	}
	r = runBin(t, filepath.Join(root, "u0"), env, "providers")
	if r.code != 0 || !strings.Contains(r.stdout, "provider[registry.terraform.io/hashicorp/time] 0.13.1") {
		t.Errorf("providers passes through: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestUpgradedConstraint: a constraint raised past the locked version
// stops the plan with the engine's word to run init -upgrade; strata
// init -upgrade at the root then moves every unit's lock file to the same
// new version from the mirror, and the plan runs.
func TestUpgradedConstraint(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	_, rc := testenv.FilesystemMirror(t, testenv.TimeProvider(t), testenv.TimeProviderAt(t, "0.14.2", testenv.HostPlatform))
	const units = 3
	root := timeRepo(t, units)
	env := testenv.Env(t, "TF_CLI_CONFIG_FILE="+rc)
	if r := runBin(t, root, env, "init", "--all"); r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for i := range units {
		testenv.WriteFile(t, filepath.Join(root, fmt.Sprintf("u%d", i), "main.tf"), strings.Replace(timeModule, `"0.13.1"`, `">= 0.14"`, 1))
	}
	r := runBin(t, root, env, "plan", "--all")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "-upgrade") {
		t.Fatalf("plan past the lock: exit %d, want 1 naming -upgrade\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "init", "--all", "-upgrade"); r.code != 0 {
		t.Fatalf("init -upgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	first, _ := os.ReadFile(filepath.Join(root, "u0", ".terraform.lock.hcl"))
	if !strings.Contains(string(first), `version     = "0.14.2"`) {
		t.Fatalf("u0's lock file after init -upgrade:\n%s", first)
	}
	for i := 1; i < units; i++ {
		if data, _ := os.ReadFile(filepath.Join(root, fmt.Sprintf("u%d", i), ".terraform.lock.hcl")); string(data) != string(first) {
			t.Errorf("u%d's lock file differs from u0's:\n%s", i, data)
		}
	}
	if r := runBin(t, root, env, "plan", "--all"); r.code != 0 {
		t.Errorf("plan after the upgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
