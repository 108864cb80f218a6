package testenv

import (
	"fmt"
	"strings"
)

// Layered is the repository of a sharded run at scale, as bench/ci, ci's
// tests and stacks' config benchmark use it: layers×width root modules
// l<i>/c<j>, each one terraform_data resource with an output, and each its
// own stack (tag l<i>c<j>) that plans after two units of the layer before,
// the same column and the next one. fail names dirs whose resource fails
// when applied. It returns every file by path: strata.yml and each
// l<i>/c<j>/main.tf.
func Layered(layers, width int, fail ...string) map[string]string {
	files := map[string]string{}
	failing := map[string]bool{}
	for _, f := range fail {
		failing[f] = true
	}
	var cfg strings.Builder
	cfg.WriteString("dirs:\n")
	for i := 0; i < layers; i++ {
		for j := 0; j < width; j++ {
			fmt.Fprintf(&cfg, "  l%d/c%d: {tags: [l%dc%d]}\n", i, j, i, j)
		}
	}
	cfg.WriteString("stacks:\n  names:\n")
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
	return files
}
