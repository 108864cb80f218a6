package ci

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks"
)

// layeredRepo writes a repository of layers×width units, each its own
// stack l<i>c<j> that plans after l<i-1>c<j> and l<i-1>c<j+1 mod width>:
// a DAG of layers waves, each unit waiting for two of the layer before.
// The units named in fail fail their apply.
func layeredRepo(t testing.TB, layers, width int, fail ...string) string {
	t.Helper()
	files := map[string]string{}
	var cfg strings.Builder
	cfg.WriteString("dirs:\n")
	for i := 0; i < layers; i++ {
		for j := 0; j < width; j++ {
			fmt.Fprintf(&cfg, "  l%d/c%d: {tags: [l%dc%d]}\n", i, j, i, j)
		}
	}
	cfg.WriteString("stacks:\n  names:\n")
	failing := map[string]bool{}
	for _, f := range fail {
		failing[f] = true
	}
	for i := 0; i < layers; i++ {
		for j := 0; j < width; j++ {
			fmt.Fprintf(&cfg, "    l%dc%d:\n      tag_query: l%dc%d\n", i, j, i, j)
			if i > 0 {
				fmt.Fprintf(&cfg, "      rules:\n        plan_after: [l%dc%d", i-1, j)
				if k := (j + 1) % width; k != j {
					fmt.Fprintf(&cfg, ", l%dc%d", i-1, k)
				}
				cfg.WriteString("]\n")
			}
			dir := fmt.Sprintf("l%d/c%d", i, j)
			tf := fmt.Sprintf("resource \"terraform_data\" \"x\" {\n  input = %q\n", dir)
			if failing[dir] {
				tf += "  provisioner \"local-exec\" {\n    command = \"exit 3\"\n  }\n"
			}
			tf += "}\n\noutput \"name\" {\n  value = terraform_data.x.output\n}\n"
			files[dir+"/main.tf"] = tf
		}
	}
	files["strata.yml"] = cfg.String()
	return testenv.WriteRepo(t, files)
}

func loadRepo(t testing.TB, root string) *stacks.Project {
	t.Helper()
	p, err := stacks.Load(root, root+"/strata.yml")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

func selectAll(t testing.TB, p *stacks.Project) *stacks.Run {
	t.Helper()
	run, err := p.Select(stacks.Selection{Cwd: ".", All: true})
	if err != nil {
		t.Fatal(err)
	}
	return run
}
