package stacks

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// corpusDir holds real Terrateam configs with the outcome check must give
// (shared/terrateam-configs/EXPECTED.tsv beside the repository).
func corpusDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{os.Getenv("STRATA_TERRATEAM_CORPUS"), "../../shared/terrateam-configs", "../shared/terrateam-configs"} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "EXPECTED.tsv")); err == nil {
			return d
		}
	}
	t.Skip("terrateam-configs corpus not found beside the repository")
	return ""
}

// serverOnly are the keys only a Terrateam server can act on: they keep
// their warning, and the README says what replaces each.
var serverOnly = map[string]bool{"indexer": true, "tree_builder": true, "config_builder": true, "batch_runs": true}

func TestTerrateamCorpus(t *testing.T) {
	dir := corpusDir(t)
	f, err := os.Open(filepath.Join(dir, "EXPECTED.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	n := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 {
			continue
		}
		file, expect := cols[0], cols[3]
		n++
		t.Run(file, func(t *testing.T) {
			root := t.TempDir()
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(root, ".terrateam"), 0o755); err != nil {
				t.Fatal(err)
			}
			cfgPath := filepath.Join(root, ".terrateam", "config.yml")
			if err := os.WriteFile(cfgPath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Load(root, cfgPath)
			if p == nil {
				t.Fatalf("load: %v", err)
			}
			errs := p.Diagnostics.Errors()
			// Every key a real config holds is acted on, but those only
			// Terrateam's server can act on.
			for _, d := range p.Diagnostics {
				if d.Severity == config.SeverityWarning && strings.Contains(d.Message, "accepted and ignored") && !serverOnly[strings.SplitN(d.Key, ".", 2)[0]] {
					t.Errorf("a key strata does not act on: %s", d)
				}
			}
			switch {
			case expect == "accept":
				if len(errs) > 0 {
					t.Errorf("expected accept, got errors:\n%v", err)
				}
			case strings.HasPrefix(expect, "reject "):
				key := strings.TrimPrefix(expect, "reject ")
				if len(errs) == 0 {
					t.Fatalf("expected an error naming %q, got none", key)
				}
				found := false
				for _, d := range errs {
					if d.Pos.Line > 0 && d.Pos.Col > 0 && d.File == ".terrateam/config.yml" && strings.Contains(d.String(), key) {
						found = true
					}
				}
				if !found {
					t.Errorf("expected an error at file:line:col naming %q, got:\n%v", key, err)
				}
			default:
				t.Fatalf("unknown expectation %q", expect)
			}
		})
	}
	if n != 32 {
		t.Errorf("corpus has %d configs, expected 32", n)
	}
}
