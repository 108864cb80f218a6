package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadConfigs runs the corpus under testdata/bad: each file is a
// strata.yml with the one diagnostic parsing it must give (`# error:` or
// `# warning:`), exactly, and nothing else wrong, never a panic. These are
// the configs wrong in themselves; the stacks package runs them again
// through a whole load, with its own corpus of configs wrong only against
// a repository (`# dirs:` names the repository's root modules there).
func TestBadConfigs(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad configs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var wantErr, wantWarn string
			for _, line := range strings.Split(string(data), "\n") {
				switch {
				case strings.HasPrefix(line, "# error: "):
					wantErr = strings.TrimPrefix(line, "# error: ")
				case strings.HasPrefix(line, "# warning: "):
					wantWarn = strings.TrimPrefix(line, "# warning: ")
				}
			}
			if wantErr == "" && wantWarn == "" {
				t.Fatal("the file names no # error: and no # warning:")
			}
			_, diags := Parse("strata.yml", data)
			errs := diags.Errors()
			if wantErr != "" {
				if len(errs) != 1 || errs[0].String() != wantErr {
					t.Errorf("want exactly one error\n  %s\ngot:\n%s", wantErr, diagText(errs))
				}
				return
			}
			if len(errs) != 0 {
				t.Errorf("want no error, got:\n%s", diagText(errs))
			}
			found := false
			for _, d := range diags.Warnings() {
				found = found || d.String() == wantWarn
			}
			if !found {
				t.Errorf("want warning\n  %s\ngot:\n%s", wantWarn, diagText(diags.Warnings()))
			}
		})
	}
}
