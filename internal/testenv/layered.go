package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// WriteLayered writes the repository Layered returns into dir: the sparse
// shape of the scale benchmarks, every unit a stack of its own with two
// rules.
func WriteLayered(dir string, layers, width int) error {
	return writeFiles(dir, Layered(layers, width))
}

// WriteStacked writes into dir the dense shape of the scale benchmarks:
// stacks stacks s<i> of perStack root modules s<i>/u<j> each, one
// terraform_data resource apiece. Membership is a tag on a glob, as a real
// config writes it (dirs: {"s3/**": {tags: [s3]}}), and stack s<i> plans
// after s<i-1>, so each rule joins two stacks of perStack units.
func WriteStacked(dir string, stacks, perStack int) error {
	var cfg strings.Builder
	cfg.WriteString("dirs:\n")
	for i := 0; i < stacks; i++ {
		fmt.Fprintf(&cfg, "  \"s%d/**\": {tags: [s%d]}\n", i, i)
	}
	cfg.WriteString("stacks:\n  names:\n")
	for i := 0; i < stacks; i++ {
		fmt.Fprintf(&cfg, "    s%d:\n      tag_query: s%d\n", i, i)
		if i > 0 {
			fmt.Fprintf(&cfg, "      rules: {plan_after: [s%d]}\n", i-1)
		}
	}
	if err := writeFiles(dir, map[string]string{"strata.yml": cfg.String()}); err != nil {
		return err
	}
	for i := 0; i < stacks; i++ {
		files := make(map[string]string, perStack)
		for j := 0; j < perStack; j++ {
			d := fmt.Sprintf("s%d/u%d", i, j)
			files[d+"/main.tf"] = fmt.Sprintf("resource \"terraform_data\" \"x\" {\n  input = %q\n}\n", d)
		}
		if err := writeFiles(dir, files); err != nil {
			return err
		}
	}
	return nil
}

// WriteGrouped writes into dir the sparse shape in stacks of group units:
// layers×width root modules l<i>/g<k>/c<j>, column j in group k = j/group,
// a stack l<i>g<k> for each group (a tag on the glob l<i>/g<k>/**), each
// planning after two stacks of the layer before, the same group and the
// next. At 50,000 units a stack per unit (WriteLayered) is a 5.6 MiB
// config, over the config's bound of 2 MiB
// (docs/behaviour.md#where-this-differs-from-the-shared-specification);
// stacks of 4 units keep it under 1.5 MiB.
func WriteGrouped(dir string, layers, width, group int) error {
	groups := (width + group - 1) / group
	var cfg strings.Builder
	cfg.WriteString("dirs:\n")
	for i := 0; i < layers; i++ {
		for k := 0; k < groups; k++ {
			fmt.Fprintf(&cfg, "  l%d/g%d/**: {tags: [l%dg%d]}\n", i, k, i, k)
		}
	}
	cfg.WriteString("stacks:\n  names:\n")
	for i := 0; i < layers; i++ {
		for k := 0; k < groups; k++ {
			fmt.Fprintf(&cfg, "    l%dg%d:\n      tag_query: l%dg%d\n", i, k, i, k)
			if i > 0 {
				fmt.Fprintf(&cfg, "      rules: {plan_after: [l%dg%d", i-1, k)
				if n := (k + 1) % groups; n != k {
					fmt.Fprintf(&cfg, ", l%dg%d", i-1, n)
				}
				cfg.WriteString("]}\n")
			}
		}
	}
	if err := writeFiles(dir, map[string]string{"strata.yml": cfg.String()}); err != nil {
		return err
	}
	for i := 0; i < layers; i++ {
		files := make(map[string]string, width)
		for j := 0; j < width; j++ {
			d := fmt.Sprintf("l%d/g%d/c%d", i, j/group, j)
			files[d+"/main.tf"] = fmt.Sprintf("resource \"terraform_data\" \"x\" {\n  input = %q\n}\n", d)
		}
		if err := writeFiles(dir, files); err != nil {
			return err
		}
	}
	return nil
}

// ScaleShape is a generated repository of the scale benchmarks
// (docs/architecture.md#the-graph).
type ScaleShape struct {
	// Name is the shape and its number of units: dense-10000.
	Name  string
	Units int
	// Write writes the repository into a dir.
	Write func(dir string) error
}

// ScaleShapes are the repositories of the scale benchmarks: dense, stacks
// of 1,000 units each planning after the one before (WriteStacked);
// sparse, a stack per unit with two rules (WriteLayered); grouped, stacks
// of 4 units with two rules (WriteGrouped), the sparse shape that a config
// can hold at 50,000 units.
var ScaleShapes = []ScaleShape{
	{"dense-10000", 10000, func(dir string) error { return WriteStacked(dir, 10, 1000) }},
	{"sparse-10000", 10000, func(dir string) error { return WriteLayered(dir, 10, 1000) }},
	{"grouped-10000", 10000, func(dir string) error { return WriteGrouped(dir, 10, 1000, 4) }},
	{"dense-50000", 50000, func(dir string) error { return WriteStacked(dir, 50, 1000) }},
	{"grouped-50000", 50000, func(dir string) error { return WriteGrouped(dir, 50, 1000, 4) }},
}

// writeFiles writes each file of files, by path under dir, creating its
// directory.
func writeFiles(dir string, files map[string]string) error {
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ScaleRepos are the repositories a test process generated for the scale
// benchmarks, each shape once; RemoveAll removes them when the process
// ends (from TestMain).
type ScaleRepos struct {
	dirs map[string]string
}

// Repo generates the repository of a shape the first time it is asked
// for, and returns its dir.
func (r *ScaleRepos) Repo(tb testing.TB, shape ScaleShape) string {
	tb.Helper()
	if dir, ok := r.dirs[shape.Name]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "strata-scale-"+shape.Name+"-")
	if err != nil {
		tb.Fatal(err)
	}
	if r.dirs == nil {
		r.dirs = map[string]string{}
	}
	r.dirs[shape.Name] = dir
	if err := shape.Write(dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// RemoveAll removes every repository generated.
func (r *ScaleRepos) RemoveAll() {
	for _, dir := range r.dirs {
		os.RemoveAll(dir)
	}
}
