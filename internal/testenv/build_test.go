package testenv

import (
	"os"
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
