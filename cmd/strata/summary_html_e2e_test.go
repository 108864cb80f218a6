package main

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/strata-iac/strata/internal/testenv"
)

// summaryWidth is the width of the summary's picture.
const summaryWidth = 1000

// TestSummaryInBrowser: the Markdown summary (docs/behaviour.md#summary)
// of a real plan of the nested fixture, after an apply and a change (base
// updated in place and auto-applied, a resource added to dev/network, one
// renamed in prod/network, so every unit after them is blocked), drawn as
// GitHub draws it: Markdown with its tables rendered, diff blocks coloured
// line by line and the Mermaid block drawn by mermaid's own bundle. The
// DOM shows mermaid drew the DAG as a flowchart with a box per unit filled
// by its status and the critical path bold, and the diff lines coloured;
// the screenshot is a PNG of the page's width and height, not blank.
func TestSummaryInBrowser(t *testing.T) {
	needTerraform(t)
	testenv.Chromium(t)
	mermaidJS := testenv.MermaidJS(t)
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixture(t, "nested"))); err != nil {
		t.Fatal(err)
	}
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s", r.code, r.stderr)
	}
	edit := func(rel, old, new string) {
		t.Helper()
		p := filepath.Join(root, rel)
		b := readFileT(t, p)
		if !strings.Contains(b, old) {
			t.Fatalf("%s has no %q", rel, old)
		}
		testenv.WriteFile(t, p, strings.Replace(b, old, new, 1))
	}
	edit("base/main.tf", `parts  = ["base", "base"]`, `parts  = ["base", "core"]`)
	edit("dev/network/main.tf", "output \"name\"", "resource \"terraform_data\" \"subnet\" {\n  input = \"${module.label.name}-a\"\n}\n\noutput \"name\"")
	edit("prod/network/main.tf", `resource "terraform_data" "this"`, `resource "terraform_data" "main"`)
	edit("prod/network/main.tf", "terraform_data.this.output", "terraform_data.main.output")
	edit("strata.yml", "    base:\n      tag_query: base\n", "    base:\n      tag_query: base\n      auto_apply: true\n")

	summary := filepath.Join(t.TempDir(), "summary.md")
	ci := append(env, "GITHUB_ACTIONS=true", "GITHUB_SERVER_URL=https://github.com", "GITHUB_REPOSITORY=example/infra",
		"GITHUB_RUN_ID=4711", "GITHUB_SHA=5d41402abc4b2a76b9719d911017c592ae1b2c3f", "GITHUB_BASE_REF=main")
	if r := runBin(t, root, ci, "plan", "--summary", summary); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	md := readFileT(t, summary)
	for _, want := range []string{"1 applied, 2 to change, 4 blocked", "```mermaid\nflowchart LR", "```diff", "| `dev/database@default` | blocked |"} {
		if !strings.Contains(md, want) {
			t.Fatalf("the summary has no %q:\n%s", want, md)
		}
	}

	dir := t.TempDir()
	page := filepath.Join(dir, "summary.html")
	doc := summaryPage(t, md, mermaidJS)
	for _, m := range regexp.MustCompile(`\bsrc="([^"]*)"`).FindAllSubmatch(doc, -1) {
		if !bytes.HasPrefix(m[1], []byte("file://")) {
			t.Errorf("the page loads %s", m[1])
		}
	}
	if bytes.Contains(doc, []byte("<link")) || bytes.Contains(doc, []byte("url(")) || bytes.Contains(doc, []byte("@import")) {
		t.Errorf("the page loads a stylesheet or image from elsewhere")
	}
	if err := os.WriteFile(page, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	browse := []string{"--hide-scrollbars", "--virtual-time-budget=10000"}
	dom := string(testenv.RunChromium(t, append(browse, fmt.Sprintf("--window-size=%d,800", summaryWidth), "--dump-dom", "file://"+page)...))
	if m := regexp.MustCompile(`data-mermaid="([^"]*)"`).FindStringSubmatch(dom); m == nil || m[1] != "ok" {
		t.Fatalf("mermaid did not draw the DAG (%v):\n%s", m, dom)
	}
	svg := regexp.MustCompile(`(?s)<pre class="mermaid"[^>]*><svg .*?</svg></pre>`).FindString(dom)
	if !strings.Contains(svg, `aria-roledescription="flowchart-v2"`) {
		t.Fatalf("no flowchart's <svg> in the Mermaid block:\n%s", dom)
	}
	for status, n := range map[string]int{"applied": 1, "planned": 2, "blocked": 4} {
		if got := len(regexp.MustCompile(`<g class="node default `+status+`[ "]`).FindAllString(svg, -1)); got != n {
			t.Errorf("the DAG has %d %s boxes, want %d", got, status, n)
		}
	}
	for _, want := range []string{"fill:#2da44e", "fill:#bf8700", "fill:#8250df", "edge-thickness-thick", "prod/database@default"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the DAG's <svg> has no %q", want)
		}
	}
	for _, want := range []string{
		`<span class="pl-mi1">+   resource "terraform_data" "subnet" {</span>`,
		`<span class="pl-md">-   resource "terraform_data" "this" {</span>`,
		`<span class="pl-mc">!       input  = "base-base" -&gt; "base-core"</span>`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the diff blocks have no %s", want)
		}
	}
	m := regexp.MustCompile(`data-height="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page did not say its height:\n%s", dom)
	}
	height, _ := strconv.Atoi(m[1])
	if height < 800 || height > 8000 {
		t.Fatalf("the page is %d px high", height)
	}

	shot := filepath.Join(dir, "summary.png")
	testenv.RunChromium(t, append(browse, fmt.Sprintf("--window-size=%d,%d", summaryWidth, height), "--screenshot="+shot, "file://"+page)...)
	checkScreenshot(t, shot, summaryWidth, height)
	t.Logf("screenshot: %s (%dx%d)", shot, summaryWidth, height)
	keepScreenshot(t, shot, "summary.png")
}

// summaryPage is the summary as an HTML page drawn like GitHub draws
// Markdown: GFM (tables, autolinks), the summary's <details> blocks kept
// and shown open, as a reader who opens them sees them, each diff line
// coloured by its first character, and the Mermaid block drawn by the
// bundle at mermaidJS. When mermaid is done, <body> says how it went
// (data-mermaid) and how high the page is (data-height).
func summaryPage(t *testing.T, md, mermaidJS string) []byte {
	t.Helper()
	gm := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(gmhtml.WithUnsafe(), renderer.WithNodeRenderers(util.Prioritized(forgeBlocks{}, 100))),
	)
	var body bytes.Buffer
	if err := gm.Convert([]byte(md), &body); err != nil {
		t.Fatal(err)
	}
	open := strings.ReplaceAll(body.String(), "<details>", "<details open>")
	var page bytes.Buffer
	fmt.Fprintf(&page, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>strata summary</title>
<style>%s</style>
<script src="%s"></script>
</head><body><article class="markdown-body">
%s</article>
<script>
function done(how) {
  document.body.dataset.mermaid = how;
  document.body.dataset.height = Math.ceil(document.documentElement.scrollHeight);
}
if (typeof mermaid === "undefined") {
  done("no mermaid");
} else {
  mermaid.initialize({startOnLoad: false, theme: "default"});
  mermaid.run({querySelector: "pre.mermaid"}).then(() => done("ok"), (e) => done("error: " + e));
}
</script>
</body></html>
`, summaryCSS, "file://"+filepath.ToSlash(mermaidJS), open)
	return page.Bytes()
}

// forgeBlocks renders fenced code blocks as GitHub does: a diff block's
// lines coloured by their first character (the classes of GitHub's
// highlighter: + inserted, - deleted, ! changed), a Mermaid block as the
// source mermaid draws, any other as plain code.
type forgeBlocks struct{}

func (forgeBlocks) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.FencedCodeBlock)
		var text strings.Builder
		for i := 0; i < b.Lines().Len(); i++ {
			seg := b.Lines().At(i)
			text.Write(seg.Value(source))
		}
		src := strings.TrimSuffix(text.String(), "\n")
		switch string(b.Language(source)) {
		case "mermaid":
			fmt.Fprintf(w, "<pre class=\"mermaid\">%s</pre>\n", html.EscapeString(src))
		case "diff":
			_, _ = w.WriteString(`<div class="highlight highlight-source-diff"><pre>`)
			for i, line := range strings.Split(src, "\n") {
				if i > 0 {
					_ = w.WriteByte('\n')
				}
				class := map[byte]string{'+': "pl-mi1", '-': "pl-md", '!': "pl-mc"}[firstByte(line)]
				if class == "" {
					_, _ = w.WriteString(html.EscapeString(line))
					continue
				}
				fmt.Fprintf(w, `<span class="%s">%s</span>`, class, html.EscapeString(line))
			}
			_, _ = w.WriteString("</pre></div>\n")
		default:
			fmt.Fprintf(w, "<div class=\"highlight\"><pre><code>%s</code></pre></div>\n", html.EscapeString(src))
		}
		return ast.WalkSkipChildren, nil
	})
}

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// summaryCSS is a light theme after GitHub's Markdown: its font stacks,
// headings, tables, code blocks and diff colours.
const summaryCSS = `
html { background: #fff; }
body { margin: 0; padding: 24px 32px; color: #1f2328; background: #fff;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
  font-size: 14px; line-height: 1.5; }
.markdown-body > *:first-child { margin-top: 0; }
h2, h3 { font-weight: 600; line-height: 1.25; margin: 24px 0 16px; }
h2 { font-size: 1.5em; padding-bottom: .3em; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 1.25em; }
p, table, details, .highlight, pre.mermaid { margin: 0 0 16px; }
a { color: #0969da; text-decoration: none; }
code, pre { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; font-size: 12px; }
code { padding: .2em .4em; background: rgba(129, 139, 152, .12); border-radius: 6px; }
table { border-collapse: collapse; border-spacing: 0; }
th, td { padding: 6px 13px; border: 1px solid #d1d9e0; }
th { font-weight: 600; text-align: left; }
tr { background: #fff; border-top: 1px solid #d1d9e0b3; }
tr:nth-child(2n) { background: #f6f8fa; }
summary { cursor: pointer; margin-bottom: 8px; }
.highlight pre { margin: 0; padding: 16px; overflow: auto; line-height: 1.45; color: #1f2328; background: #f6f8fa; border-radius: 6px; }
.highlight pre code { padding: 0; background: none; }
.pl-mi1 { color: #116329; background: #dafbe1; }
.pl-md { color: #82071e; background: #ffebe9; }
.pl-mc { color: #953800; background: #ffd8b5; }
pre.mermaid { padding: 16px; background: #fff; border: 1px solid #d1d9e0; border-radius: 6px; text-align: center; }
`
