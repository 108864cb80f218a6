package testenv

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The release, `make build`, the tests that run the built binary and every
// `go install` strata shows or ships build strata with the same tags.
func TestBuildTagsAsShipped(t *testing.T) {
	for file, want := range map[string]string{
		"../../Makefile":                             "TAGS     := " + BuildTags + "\n",
		"../../.goreleaser.yaml":                     "- -tags=" + BuildTags + "\n",
		"../../README.md":                            "go install -tags " + BuildTags + " ",
		"../../action.yml":                           "go install -tags " + BuildTags + " ",
		"../../docs/examples/ci/github-caller.yml":   "go install -tags " + BuildTags + " ",
		"../../docs/examples/ci/github-workflow.yml": "go install -tags " + BuildTags + " ",
		"../../ci/emit_github.go":                    `installTags = "` + BuildTags + `"`,
		"../../internal/release/release.go":          `Tags = "` + BuildTags + `"`,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not build with %q", file, want)
		}
	}
}

// The repository explains itself: its code and docs cite docs/, never a
// section number of a document a clone does not hold.
func TestNoOutsideCitations(t *testing.T) {
	cite := regexp.MustCompile(`§\s*\d|SPEC\.md|SPEC\s+docs/`)
	eachRepoLine(t, func(rel string, n int, line string) {
		if cite.MatchString(line) {
			t.Errorf("%s:%d cites a document outside the repository: %s", rel, n, strings.TrimSpace(line))
		}
	})
}

// Every docs/<file>.md#<section> the code and docs cite is a heading of
// that file.
func TestDocCitationsResolve(t *testing.T) {
	cite := regexp.MustCompile(`docs/([A-Za-z0-9_./-]+\.md)#([A-Za-z0-9_-]+)`)
	sections := map[string]map[string]bool{}
	headingsOf := func(doc string) map[string]bool {
		if h, ok := sections[doc]; ok {
			return h
		}
		h := map[string]bool{}
		if b, err := os.ReadFile(filepath.Join("../../docs", filepath.FromSlash(doc))); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "#") {
					h[anchorOf(strings.TrimLeft(line, "#"))] = true
				}
			}
		}
		sections[doc] = h
		return h
	}
	eachRepoLine(t, func(rel string, n int, line string) {
		for _, m := range cite.FindAllStringSubmatch(line, -1) {
			if !headingsOf(m[1])[m[2]] {
				t.Errorf("%s:%d cites %s, which has no such section", rel, n, m[0])
			}
		}
	})
}

// anchorOf is the anchor a Markdown heading gets: lower case, spaces as
// dashes, other punctuation dropped.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachRepoLine calls f with every line of the repository's code, docs and
// fixtures (path relative to the root, line number from 1).
func eachRepoLine(t *testing.T, f func(rel string, n int, line string)) {
	t.Helper()
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "node_modules", ".strata", ".terraform":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yml", ".yaml", ".sh", ".tf":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(b), "\n") {
			f(filepath.ToSlash(rel), i+1, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMakeInstall: the README's install from a clone puts a strata into
// GOBIN that names the clone's commit.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata")
	}
	if err := exec.Command("git", "-C", filepath.Join("..", ".."), "rev-parse", "HEAD").Run(); err != nil {
		t.Skip("not a git clone: the version would be dev")
	}
	bin := t.TempDir()
	cmd := exec.Command("make", "-s", "install")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "strata"), "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "strata ") || strings.HasPrefix(string(out), "strata dev ") {
		t.Errorf("the installed strata says %q, %v; want its commit", out, err)
	}
}
