package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-iac/strata/ci"
)

// The release the build tests make: the host's archive of testVersion,
// its entries at testEpoch.
const (
	testVersion = "v1.2.3"
	testEpoch   = 1700000000
)

// hostRelease is the host's archive and checksums.txt, built once by
// `make release` for every test that needs them.
var hostRelease struct {
	once sync.Once
	tmp  string
	dist string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if hostRelease.tmp != "" {
		os.RemoveAll(hostRelease.tmp)
	}
	os.Exit(code)
}

func hostPlatform(t *testing.T) Platform {
	t.Helper()
	p := Platform{runtime.GOOS, runtime.GOARCH}
	if !slices.Contains(Platforms, p) {
		t.Skipf("no release is built for %s", p)
	}
	return p
}

// madeRelease is the dist directory `make release` wrote the host's
// archive and checksums.txt to.
func madeRelease(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds strata")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on PATH")
	}
	p := hostPlatform(t)
	hostRelease.once.Do(func() {
		hostRelease.tmp, hostRelease.err = os.MkdirTemp("", "strata-release-test-")
		if hostRelease.err != nil {
			return
		}
		hostRelease.dist = filepath.Join(hostRelease.tmp, "dist")
		cmd := exec.Command("make", "-s", "release", "VERSION="+testVersion,
			fmt.Sprintf("SOURCE_DATE_EPOCH=%d", testEpoch), "PLATFORMS="+p.String(), "DIST="+hostRelease.dist)
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			hostRelease.err = fmt.Errorf("make release: %v\n%s", err, out)
		}
	})
	if hostRelease.err != nil {
		t.Fatal(hostRelease.err)
	}
	return hostRelease.dist
}

// TestReleaseIsReproducible: a second build of the same tree, version and
// time, through Build rather than make, gives the same bytes.
func TestReleaseIsReproducible(t *testing.T) {
	first := madeRelease(t)
	second := filepath.Join(t.TempDir(), "dist")
	p := hostPlatform(t)
	arts, err := Build(context.Background(), Options{
		Root: filepath.Join("..", ".."), Dist: second, Version: testVersion,
		Time: time.Unix(testEpoch, 0), Platforms: []Platform{p},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 1 || arts[0].Name != ArchiveName(testVersion, p) {
		t.Fatalf("Build wrote %v; want the archive %s", arts, ArchiveName(testVersion, p))
	}
	want := []string{ChecksumsFile, arts[0].Name}
	for _, dist := range []string{first, second} {
		if got := dirNames(t, dist); !slices.Equal(got, want) {
			t.Errorf("%s holds %v; want %v", dist, got, want)
		}
	}
	for _, name := range want {
		a, errA := os.ReadFile(filepath.Join(first, name))
		b, errB := os.ReadFile(filepath.Join(second, name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds (%d and %d bytes; %v, %v)", name, len(a), len(b), errA, errB)
		}
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

// TestReleaseHoldsWhatItShould: the host's archive holds the binary and
// the repository's files as they are, and checksums.txt vouches for it.
func TestReleaseHoldsWhatItShould(t *testing.T) {
	dist := madeRelease(t)
	p := hostPlatform(t)
	name := ArchiveName(testVersion, p)
	b, err := os.ReadFile(filepath.Join(dist, name))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dist, ChecksumsFile))
	if want := fmt.Sprintf("%x  %s\n", sha256.Sum256(b), name); err != nil || string(sums) != want {
		t.Errorf("checksums.txt is %q, %v; want %q", sums, err, want)
	}
	files, err := repoFiles(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{BinaryName(p)}
	for _, f := range files {
		wantNames = append(wantNames, f.name)
	}
	slices.Sort(wantNames)
	entries := readArchive(t, archiveFormat(p), b)
	if got := archiveNames(entries); !slices.Equal(got, wantNames) {
		t.Fatalf("%s holds %v; want %v", name, got, wantNames)
	}
	for _, e := range entries {
		if !e.mtime.Equal(time.Unix(testEpoch, 0)) {
			t.Errorf("%s: time %v; want %v", e.name, e.mtime, time.Unix(testEpoch, 0))
		}
		if e.name == BinaryName(p) {
			continue
		}
		if src, err := os.ReadFile(filepath.Join("..", "..", e.name)); err != nil || string(src) != e.body {
			t.Errorf("%s in the archive is not the repository's (%v)", e.name, err)
		}
	}
}

// TestInstallScriptInstallsRelease: the install script of the emitted
// workflow and the action installs the archive `make release` built,
// served as a release is, and the strata it puts on PATH reports the
// release; an archive checksums.txt does not vouch for is refused.
func TestInstallScriptInstallsRelease(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sha256sum", "tar", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	dist := madeRelease(t)
	p := hostPlatform(t)
	if archiveFormat(p) != "tar.gz" {
		t.Skipf("the install script installs tar.gz archives; %s has a %s", p, archiveFormat(p))
	}
	out, dir, err := installFrom(t, dist)
	if err != nil || dir == "" {
		t.Fatalf("install: %v, PATH %q\n%s", err, dir, out)
	}
	got, err := exec.Command(filepath.Join(dir, "strata"), "version").Output()
	want := fmt.Sprintf("strata %s (%s, %s)\n", testVersion, runtime.Version(), p)
	if err != nil || string(got) != want {
		t.Fatalf("the installed strata says %q, %v; want %q", got, err, want)
	}
	// The release's own version is what a workflow it emits installs.
	if v := ci.DefaultStrataVersion(strings.Fields(string(got))[1]); v != testVersion {
		t.Errorf("a workflow the release emits installs %q; want %q", v, testVersion)
	}

	// Another archive under the release's name: checksums.txt refuses it.
	tampered := t.TempDir()
	sums, err := os.ReadFile(filepath.Join(dist, ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, tampered, ChecksumsFile, string(sums), 0o644)
	script := writeFile(t, t.TempDir(), "strata", "#!/bin/sh\necho tampered\n", 0o755)
	entries := []entry{{name: "strata", path: script, mode: 0o755}}
	if _, err := writeArchive(filepath.Join(tampered, ArchiveName(testVersion, p)), "tar.gz", entries, time.Unix(testEpoch, 0)); err != nil {
		t.Fatal(err)
	}
	out, dir, err = installFrom(t, tampered)
	if err == nil || dir != "" || !strings.Contains(out, "FAILED") {
		t.Errorf("a tampered archive: %v, PATH %q\n%s", err, dir, out)
	}
}

// installFrom runs the install script for testVersion against dist served
// as a release's downloads, and returns its output and the directory it
// added to the job's PATH.
func installFrom(t *testing.T, dist string) (string, string, error) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/"+testVersion+"/", http.StripPrefix("/"+testVersion+"/", http.FileServer(http.Dir(dist))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tmp := t.TempDir()
	path := filepath.Join(tmp, "github_path")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", ci.InstallScript)
	cmd.Env = append(os.Environ(), "STRATA_VERSION="+testVersion, "STRATA_RELEASES_URL="+srv.URL,
		"RUNNER_TEMP="+tmp, "GITHUB_PATH="+path)
	out, err := cmd.CombinedOutput()
	added, _ := os.ReadFile(path)
	dir := strings.TrimSpace(string(added))
	if err != nil {
		if _, serr := os.Stat(filepath.Join(tmp, "strata-"+testVersion, "strata")); serr == nil {
			t.Errorf("a refused archive was unpacked")
		}
	}
	return string(out), dir, err
}
