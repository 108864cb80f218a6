package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
)

// TestGraphHTMLInBrowser: after a real apply of the nested fixture,
// `graph --format html` writes a page a headless browser draws (a
// 1280x800 screenshot that is not blank) and whose script runs (the DOM
// shows the page marked and the first unit's panel shown).
func TestGraphHTMLInBrowser(t *testing.T) {
	needTerraform(t)
	testenv.Chromium(t)
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixture(t, "nested"))); err != nil {
		t.Fatal(err)
	}
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	r := runBin(t, root, env, "graph", "--format", "html")
	if r.code != 0 {
		t.Fatalf("graph: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"base@default", "prod/service@default", `class="bar" data-step="apply"`, "applied"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "graph.html")
	if err := os.WriteFile(page, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	shot := filepath.Join(dir, "graph.png")
	testenv.RunChromium(t, "--screenshot="+shot, "--window-size=1280,800", "file://"+page)
	checkScreenshot(t, shot, 1280, 800)
	dom := string(testenv.RunChromium(t, "--dump-dom", "file://"+page))
	t.Logf("browser took %s for the screenshot and the DOM", time.Since(started).Round(time.Millisecond))
	if !strings.Contains(dom, `<html lang="en" class="js">`) || strings.Count(dom, `class="panel shown"`) != 1 ||
		!strings.Contains(dom, `class="node selected"`) {
		t.Errorf("the page's script did not run:\n%s", dom)
	}
	t.Logf("screenshot: %s", shot)
	keepScreenshot(t, shot, "graph.png")
}

// keepScreenshot copies a screenshot to $STRATA_SCREENSHOT_DIR as name,
// when set (make pictures: the pictures under docs/).
func keepScreenshot(t *testing.T, shot, name string) {
	t.Helper()
	out := os.Getenv("STRATA_SCREENSHOT_DIR")
	if out == "" {
		return
	}
	b, err := os.ReadFile(shot)
	if err == nil {
		err = os.WriteFile(filepath.Join(out, name), b, 0o644)
	}
	if err != nil {
		t.Fatalf("copying the screenshot to %s: %v", out, err)
	}
}

// checkScreenshot: a PNG of the window's size, width x height, with more
// than one colour.
func checkScreenshot(t *testing.T, path string, width, height int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if s := img.Bounds().Size(); s.X != width || s.Y != height {
		t.Fatalf("the screenshot is %v, want %dx%d", s, width, height)
	}
	colours := map[[4]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 4 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 4 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("the screenshot has %d colours: the page was not drawn", len(colours))
	}
}
