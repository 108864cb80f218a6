package testenv

import (
	"os"
	"strings"
	"testing"
)

// The release, `make build` and the tests that run the built binary build
// strata with the same tags.
func TestBuildTagsAsShipped(t *testing.T) {
	for file, want := range map[string]string{
		"../../Makefile":         "TAGS     := " + BuildTags + "\n",
		"../../.goreleaser.yaml": "-tags=" + BuildTags + "]",
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
