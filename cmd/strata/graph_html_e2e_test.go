package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
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
// shows the page marked and the first unit's panel shown). In the DOM,
// each child stack's box lies inside its nested stack's, and the picture
// is the window's width, less the margins, in a window wider than it
// needs, keeping its pitch and scrolling in a narrower one.
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

	// A rule on a nested stack is one edge between the nested stacks'
	// boxes, not one per leaf pair.
	if n := strings.Count(r.stdout, "<title>stack dev -&gt; stack prod (apply, apply_after)"); n != 1 {
		t.Errorf("the rule prod apply_after dev is drawn %d times between the boxes of dev and prod, want once", n)
	}
	parents := map[string]string{"base": "", "dev": "", "prod": "", "dev-network": "dev", "dev-database": "dev", "dev-service": "dev",
		"prod-network": "prod", "prod-database": "prod", "prod-service": "prod"}
	for _, width := range []int{1280, 2600} {
		m := measureGraphPage(t, r.stdout, width)
		box := map[string]pageRect{}
		for _, b := range m.Boxes {
			box[b.Stack] = b.Rect
			if want, ok := parents[b.Stack]; !ok || b.In != want {
				t.Errorf("at %dpx, box %s is in %q, want %q", width, b.Stack, b.In, want)
			}
		}
		if len(box) != len(parents) {
			t.Errorf("at %dpx, %d boxes, want %d", width, len(box), len(parents))
		}
		for _, b := range m.Boxes {
			if b.In != "" && !box[b.In].holds(b.Rect) {
				t.Errorf("at %dpx, the box of %s %+v is not inside its parent %s's %+v", width, b.Stack, b.Rect, b.In, box[b.In])
			}
		}
		for _, n := range m.Nodes {
			if n.W < 199 || n.W > 201 {
				t.Errorf("at %dpx, a unit is drawn %.0fpx wide, want 200: the picture was scaled", width, n.W)
			}
		}
		// The frame around the picture is the window's width, less the
		// page's margins; the picture fills it, or keeps its pitch and
		// scrolls when that is wider.
		if m.Scroll.W < float64(m.Inner-64) || m.Scroll.W > float64(m.Inner) {
			t.Errorf("at %dpx, the frame is %.0fpx wide in a window of %d", width, m.Scroll.W, m.Inner)
		}
		room := m.Scroll.W - 10
		if want := max(room, m.Natural); m.DAG.W < want-2 || m.DAG.W > want+2 {
			t.Errorf("at %dpx, the picture is %.0fpx wide, want %.0f (room %.0f, its own width %.0f)", width, m.DAG.W, want, room, m.Natural)
		}
		t.Logf("at %dpx: frame %.0fpx, picture %.0fpx, its narrowest %.0fpx", width, m.Scroll.W, m.DAG.W, m.Natural)
	}
	if wide, narrow := measureGraphPage(t, r.stdout, 2600), measureGraphPage(t, r.stdout, 1280); wide.DAG.W <= narrow.DAG.W || narrow.DAG.W <= narrow.Scroll.W {
		t.Errorf("the picture is %.0fpx wide in a wide window and %.0fpx in a narrow one (frame %.0fpx): want it to spread in the wide one and scroll in the narrow one",
			wide.DAG.W, narrow.DAG.W, narrow.Scroll.W)
	}
}

// pageRect is an element's rectangle on the page, in CSS pixels.
type pageRect struct{ X, Y, W, H float64 }

// holds says r holds o inside it.
func (r pageRect) holds(o pageRect) bool {
	return o.X > r.X && o.Y > r.Y && o.X+o.W < r.X+r.W && o.Y+o.H < r.Y+r.H
}

// pageMeasures is what a browser measured of the graph page's DAG.
type pageMeasures struct {
	Inner   int
	Natural float64
	Scroll  pageRect
	DAG     pageRect
	Boxes   []struct {
		Stack, In string
		Rect      pageRect
	}
	Nodes []pageRect
}

// measureGraphPage draws the graph page in a headless browser window
// width pixels wide, with a script added after the page's own that
// writes what it measured into the DOM.
func measureGraphPage(t *testing.T, page string, width int) pageMeasures {
	t.Helper()
	const measure = `<script>
(function () {
  var dag = document.getElementById("dag");
  function r(e) { var b = e.getBoundingClientRect(); return {X: b.left, Y: b.top, W: b.width, H: b.height}; }
  var out = {Inner: window.innerWidth, Natural: +dag.getAttribute("data-width"), Scroll: r(dag.parentNode), DAG: r(dag), Boxes: [], Nodes: []};
  dag.querySelectorAll(".stackbox").forEach(function (g) {
    out.Boxes.push({Stack: g.getAttribute("data-stack"), In: g.getAttribute("data-in"), Rect: r(g.querySelector("rect"))});
  });
  dag.querySelectorAll(".node rect").forEach(function (e) { out.Nodes.push(r(e)); });
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = btoa(JSON.stringify(out));
  document.body.appendChild(pre);
})();
</script>
</body>`
	file := filepath.Join(t.TempDir(), "measure.html")
	if err := os.WriteFile(file, []byte(strings.Replace(page, "</body>", measure, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	dom := string(testenv.RunChromium(t, "--dump-dom", fmt.Sprintf("--window-size=%d,800", width), "file://"+file))
	_, rest, ok := strings.Cut(dom, `<pre id="measured">`)
	text, _, ok2 := strings.Cut(rest, "</pre>")
	if !ok || !ok2 {
		t.Fatalf("the page measured nothing at %dpx:\n%s", width, dom)
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	var m pageMeasures
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		t.Fatalf("what the page measured at %dpx: %v\n%s", width, err, text)
	}
	if m.Inner != width {
		t.Fatalf("the window is %dpx wide, want %d", m.Inner, width)
	}
	return m
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
