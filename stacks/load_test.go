package stacks

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// TestOneDocument: a config is one YAML document. A second document with
// content is an error at its start, in every config file strata reads; a
// "---" before the document, a trailing one with nothing after, and empty
// documents around the config are accepted and the config is read whole.
func TestOneDocument(t *testing.T) {
	t.Parallel()
	const body = "dirs:\n  a: {tags: [net]}\nstacks:\n  names:\n    net: {tag_query: net}\n"
	cases := []struct {
		name string
		cfg  string
		// wantErr is the error after the file name, "" for none.
		wantErr string
	}{
		{name: "plain", cfg: body},
		{name: "leading marker", cfg: "---\n" + body},
		{name: "trailing marker", cfg: body + "---\n"},
		{name: "trailing marker and comment", cfg: body + "---\n# end\n"},
		{name: "document end", cfg: body + "...\n"},
		{name: "empty documents around", cfg: "---\n---\n" + body + "---\n---\n"},
		{name: "second document", cfg: body + "---\nparallel_runs: 2\n",
			wantErr: ":6:1: a second YAML document starts here; one document expected (the config starts at line 1: merge the two, or remove the document marker)"},
		{name: "second document after leading marker", cfg: "---\n" + body + "---\nparallel_runs: 2\n",
			wantErr: ":7:1: a second YAML document starts here; one document expected (the config starts at line 2: merge the two, or remove the document marker)"},
		{name: "content after an empty first document", cfg: "---\n---\n" + body + "--- {}\n",
			wantErr: ":8:1: a second YAML document starts here; one document expected (the config starts at line 3: merge the two, or remove the document marker)"},
		{name: "explicit null is content", cfg: body + "--- ~\n",
			wantErr: ":6:1: a second YAML document starts here; one document expected (the config starts at line 1: merge the two, or remove the document marker)"},
		{name: "syntax error in a second document", cfg: body + "---\nb: [\n",
			wantErr: ":8:1: invalid YAML: did not find expected node content"},
	}
	for _, file := range []string{config.StrataConfigFile, config.TerrateamConfigFile, config.TerrateamConfigFileYAML} {
		for _, tc := range cases {
			t.Run(file+"/"+tc.name, func(t *testing.T) {
				root := testRepo(t, "", "a")
				cfgPath := filepath.Join(root, filepath.FromSlash(file))
				testenv.WriteFile(t, cfgPath, tc.cfg)
				p, err := Load(root, cfgPath)
				if p == nil {
					t.Fatalf("load: %v", err)
				}
				errs := p.Diagnostics.Errors()
				if tc.wantErr != "" {
					want := file + tc.wantErr
					if len(errs) != 1 || errs[0].String() != want {
						t.Fatalf("want exactly one error\n  %s\ngot:\n%s", want, diagText(errs))
					}
					return
				}
				if len(errs) != 0 {
					t.Fatalf("want no error, got:\n%s", diagText(errs))
				}
				if got := strings.Join(membership(p)["net"], ","); got != "a@default" {
					t.Errorf("stack net holds %q, want the config read whole (a@default)", got)
				}
			})
		}
	}
}
