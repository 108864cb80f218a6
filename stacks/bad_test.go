package stacks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// TestBadConfigs runs the corpora under testdata/bad (configs wrong only
// against their repository) and config/testdata/bad (configs wrong in
// themselves, which the config package parses alone too): each file is a
// strata.yml whose header names the dirs of its repository (`# dirs:`) and
// the one diagnostic a whole load must give (`# error:` or `# warning:`),
// exactly. Every bad config gives that one precise message and nothing
// else wrong, never a panic.
func TestBadConfigs(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.yml")
	inConfig, err2 := filepath.Glob("config/testdata/bad/*.yml")
	files = append(files, inConfig...)
	if err = errors.Join(err, err2); err != nil || len(inConfig) == 0 || len(files) == len(inConfig) {
		t.Fatalf("no bad configs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var dirs []string
			var wantErr, wantWarn string
			for _, line := range strings.Split(string(data), "\n") {
				switch {
				case strings.HasPrefix(line, "# dirs: "):
					dirs = strings.Fields(strings.TrimPrefix(line, "# dirs: "))
				case strings.HasPrefix(line, "# error: "):
					wantErr = strings.TrimPrefix(line, "# error: ")
				case strings.HasPrefix(line, "# warning: "):
					wantWarn = strings.TrimPrefix(line, "# warning: ")
				}
			}
			root := testRepo(t, string(data), dirs...)
			_, diags := loadDiags(t, root)
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
			if !hasExact(diags.Warnings(), wantWarn) {
				t.Errorf("want warning\n  %s\ngot:\n%s", wantWarn, diagText(diags.Warnings()))
			}
		})
	}
}

func hasExact(ds config.Diagnostics, s string) bool {
	for _, d := range ds {
		if d.String() == s {
			return true
		}
	}
	return false
}
