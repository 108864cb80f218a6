package ci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/git"
)

// TestInstallScript runs the install script of the emitted workflow and
// the action against releases served on loopback: a release's archive is
// unpacked and put on the job's PATH only when checksums.txt vouches for
// it; a development build's workflow asks for a version.
func TestInstallScript(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sha256sum", "tar", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	archive := fmt.Sprintf("strata_1.2.3_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	bin := []byte("#!/bin/sh\necho strata v1.2.3\n")
	tw.WriteHeader(&tar.Header{Name: "strata", Mode: 0o755, Size: int64(len(bin))})
	tw.Write(bin)
	tw.Close()
	zw.Close()
	sum := sha256.Sum256(tgz.Bytes())
	checksums := map[string]string{
		"v1.2.3": fmt.Sprintf("%x  %s\n%x  strata_1.2.3_windows_amd64.zip\n", sum, archive, sha256.Sum256(nil)),
		"v1.2.4": fmt.Sprintf("%x  %s\n", sha256.Sum256([]byte("another build")), strings.Replace(archive, "1.2.3", "1.2.4", 1)),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch {
		case name == "checksums.txt" && checksums[v] != "":
			fmt.Fprint(w, checksums[v])
		case strings.HasPrefix(name, "strata_") && strings.HasSuffix(name, ".tar.gz"):
			w.Write(tgz.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	install := func(version string) (string, string, error) {
		tmp := t.TempDir()
		path := filepath.Join(tmp, "github_path")
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", InstallScript)
		cmd.Env = append(os.Environ(), "STRATA_VERSION="+version, "STRATA_RELEASES_URL="+srv.URL, "RUNNER_TEMP="+tmp, "GITHUB_PATH="+path)
		out, err := cmd.CombinedOutput()
		added, _ := os.ReadFile(path)
		return string(out), strings.TrimSpace(string(added)), err
	}
	out, added, err := install("v1.2.3")
	if err != nil || added == "" {
		t.Fatalf("v1.2.3: %v\n%s", err, out)
	}
	if got, err := exec.Command(filepath.Join(added, "strata")).Output(); err != nil || string(got) != "strata v1.2.3\n" {
		t.Errorf("the installed strata: %q, %v", got, err)
	}
	// An archive checksums.txt does not vouch for never reaches PATH.
	if out, added, err := install("v1.2.4"); err == nil || added != "" {
		t.Errorf("v1.2.4 with a wrong checksum: %v, PATH %q\n%s", err, added, out)
	}
	if out, _, err := install(""); err == nil || !strings.Contains(out, "no strata version") {
		t.Errorf("no version: %v\n%s", err, out)
	}
}

// TestVersionShapes: the versions an emitted workflow installs by default
// (a release, or a commit whole or abbreviated) and the commit IDs a merge
// target may be.
func TestVersionShapes(t *testing.T) {
	hex40 := strings.Repeat("0a", 20)
	for v, want := range map[string]string{
		"v1.2.3": "v1.2.3", "v1.2.3-rc.1": "v1.2.3-rc.1", "0a210e3": "0a210e3", hex40: hex40, " v1.2.3\n": "v1.2.3",
		"dev": "", "v1.2.3-dirty-x y": "", "0a210e": "", hex40 + "a": "", "0A210E3": "", "v1.2": "", "1.2.3": "",
	} {
		if got := DefaultStrataVersion(v); got != want {
			t.Errorf("DefaultStrataVersion(%q) = %q, want %q", v, got, want)
		}
	}
	for s, want := range map[string]bool{
		hex40: true, hex40 + strings.Repeat("f", 24): true,
		hex40[:39]: false, hex40 + "f": false, strings.ToUpper(hex40): false, hex40[:39] + "g": false, "": false,
	} {
		if got := git.CommitID(s); got != want {
			t.Errorf("git.CommitID(%q) = %v, want %v", s, got, want)
		}
	}
}
