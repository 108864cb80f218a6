package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The release, `make build`, the tests that run the built binary and every
// `go install` strata shows or ships build strata with the same tags.
func TestBuildTagsAsShipped(t *testing.T) {
	for file, want := range map[string]string{
		"../../Makefile":                           "TAGS     := " + BuildTags + "\n",
		"../../.goreleaser.yaml":                   "-tags=" + BuildTags + "]",
		"../../README.md":                          "go install -tags " + BuildTags + " ",
		"../../action.yml":                         "go install -tags " + BuildTags + " ",
		"../../docs/examples/ci/github-caller.yml": "go install -tags " + BuildTags + " ",
		"../../docs/examples/ci/strata.yml":        "go install -tags " + BuildTags + " ",
		"../../ci/emit.go":                         `installTags = "` + BuildTags + `"`,
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
		for i, line := range strings.Split(string(b), "\n") {
			if cite.MatchString(line) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d cites a document outside the repository: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
