package engines

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// child is a test binary re-executed to install like a separate strata
// process would.
type child struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	lines  chan string // stderr, line by line
}

func startChild(t *testing.T, cacheDir, mirrorURL, spec string) *child {
	t.Helper()
	_, pub := testKeys(t)
	c := &child{lines: make(chan string, 100)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(),
		envChild+"=install",
		envChildSpec+"="+spec,
		"STRATA_CACHE_DIR="+cacheDir,
		"STRATA_TERRAFORM_MIRROR="+mirrorURL,
		"STRATA_TERRAFORM_MIRROR_KEY="+pub,
		"STRATA_ENGINE_BUILD=",
		"STRATA_ENGINES_OFFLINE=",
		// hc-install keeps the archive in the temporary directory.
		"TMPDIR="+t.TempDir(),
	)
	c.cmd.Stdout = &c.stdout
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	})
	return c
}

// waitLine waits for a stderr line containing s.
func (c *child) waitLine(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child ended before printing %q", s)
			}
			if strings.Contains(line, s) {
				return
			}
		case <-timeout:
			t.Fatalf("child did not print %q", s)
		}
	}
}

func (c *child) result(t *testing.T) childResult {
	t.Helper()
	var rest []string
	for line := range c.lines {
		rest = append(rest, line)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child install failed: %v\n%s", err, strings.Join(rest, "\n"))
	}
	var r childResult
	if err := json.Unmarshal(c.stdout.Bytes(), &r); err != nil {
		t.Fatalf("child printed %q: %v", c.stdout.String(), err)
	}
	return r
}

// Two processes install one version at once: the second waits on the
// lock, finds the first one's binary in the cache, and the mirror serves
// the archive once.
func TestInstallAcrossProcesses(t *testing.T) {
	v := needTerraform(t).String()
	m := newHashicorpMirror(t)
	started := make(chan struct{}, 2)
	release := make(chan struct{})
	m.set(func(m *mirror) {
		m.onArchive = func(w http.ResponseWriter, b []byte) {
			started <- struct{}{}
			<-release
			w.Write(b)
		}
	})
	cache := t.TempDir()

	first := startChild(t, cache, m.URL, "terraform "+v)
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatal("the first process never asked for the archive")
	}
	second := startChild(t, cache, m.URL, "terraform "+v)
	second.waitLine(t, "waiting for another strata process to install terraform "+v)
	close(release)

	a, b := first.result(t), second.result(t)
	if a.Source != SourceDownload || b.Source != SourceCache {
		t.Errorf("sources %q and %q, want download and cache", a.Source, b.Source)
	}
	if a.Path != b.Path || a.Version != v {
		t.Errorf("results %+v and %+v", a, b)
	}
	if n := m.archiveRequests.Load(); n != 1 {
		t.Errorf("archive fetched %d times, want 1", n)
	}
	dir := filepath.Join(cache, "engines", "terraform")
	if got := entries(t, dir); !slices.Equal(got, []string{"." + v + ".lock", v}) {
		t.Errorf("cache holds %q", got)
	}
	if got := entries(t, filepath.Join(dir, v)); !slices.Equal(got, []string{manifestName, "LICENSE.txt", "terraform"}) && !slices.Equal(got, []string{manifestName, "terraform"}) {
		t.Errorf("version directory holds %q", got)
	}
	id, err := identify(context.Background(), a.Path)
	if err != nil || id.name != Terraform || id.version.String() != v {
		t.Errorf("installed binary identifies as %+v, %v", id, err)
	}
}

// A process killed halfway through a download leaves no binary at the
// final path, and its lock dies with it: the next install proceeds at once
// and clears the debris.
func TestInstallKilledMidDownload(t *testing.T) {
	v := needTerraform(t)
	m := newHashicorpMirror(t)
	half := make(chan struct{}, 1)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	m.set(func(m *mirror) {
		m.onArchive = func(w http.ResponseWriter, b []byte) {
			w.Write(b[:len(b)/2])
			w.(http.Flusher).Flush()
			half <- struct{}{}
			<-done
		}
	})
	cache := t.TempDir()
	c := startChild(t, cache, m.URL, "terraform "+v.String())
	select {
	case <-half:
	case <-time.After(2 * time.Minute):
		t.Fatal("the child never started the download")
	}
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()

	dir := filepath.Join(cache, "engines", "terraform")
	final := filepath.Join(dir, v.String())
	if _, err := os.Stat(final); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the killed install left %s: %v", final, err)
	}
	var debris []string
	for _, n := range entries(t, dir) {
		if strings.HasPrefix(n, ".tmp-") {
			debris = append(debris, n)
		}
	}
	if len(debris) != 1 {
		t.Errorf("want the killed install's staging directory, cache holds %q", entries(t, dir))
	}

	m.set(func(m *mirror) { m.onArchive = nil })
	_, pub := testKeys(t)
	in := &Installer{CacheDir: cache, SearchPath: []string{}, TerraformMirror: m.URL, TerraformMirrorKey: pub}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := in.Install(ctx, Spec{Terraform, v.String()})
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != SourceDownload || e.Path != filepath.Join(final, "terraform") {
		t.Errorf("got %+v", e)
	}
	assertNoDebris(t, dir)
}
