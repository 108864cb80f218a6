package stacks

import (
	"fmt"
	"path"
	"strings"
)

// Tree is what loading reads of a repository's files, apart from the
// config: every dir that holds Terraform files, those files' names, and
// the local modules each dir calls. Reading it means listing every dir and
// reading, or parsing, every file, which on a large repository costs more
// than the rest of loading. A sharded CI run reads it once, in `ci start`,
// and every job of the run, on the same commit, builds its project from
// that tree instead (docs/ci.md#a-job).
type Tree struct {
	Dirs []TreeDir `json:"dirs"`
}

// TreeDir is one dir of a Tree.
type TreeDir struct {
	// Dir is repo-relative, "/"-separated, "." for the root.
	Dir string `json:"dir"`
	// Files are the names of its *.tf, *.tf.json and *.tofu files.
	Files []string `json:"files"`
	// Calls are the repo-relative dirs of the local modules its files
	// call, sorted.
	Calls []string `json:"calls,omitempty"`
}

// Tree returns the tree the project was built from.
func (p *Project) Tree() *Tree {
	t := &Tree{Dirs: make([]TreeDir, len(p.sds))}
	for i, sd := range p.sds {
		t.Dirs[i] = TreeDir{Dir: sd.dir, Files: sd.files, Calls: p.ModuleCalls[sd.dir]}
	}
	return t
}

// maxTreeDirs bounds a tree a project is built from: ten times the largest
// repositories strata is measured on.
const maxTreeDirs = 100_000

// sourceDirs checks a tree that comes from outside the repository (the
// state bucket) and turns it into what a scan returns: every dir and call
// a clean relative path that does not leave the root or enter a dir a scan
// skips, every file a Terraform file name, dirs sorted and unique.
func (t *Tree) sourceDirs() ([]sourceDir, map[string][]string, error) {
	if len(t.Dirs) > maxTreeDirs {
		return nil, nil, fmt.Errorf("the tree has %d dirs; expected at most %d", len(t.Dirs), maxTreeDirs)
	}
	sds := make([]sourceDir, len(t.Dirs))
	calls := make(map[string][]string)
	for i, d := range t.Dirs {
		if !treePath(d.Dir, false) {
			return nil, nil, fmt.Errorf("the tree has dir %q; expected a clean path inside the repository", d.Dir)
		}
		if i > 0 && t.Dirs[i-1].Dir >= d.Dir {
			return nil, nil, fmt.Errorf("the tree has dir %q after %q; expected dirs sorted, each once", d.Dir, t.Dirs[i-1].Dir)
		}
		if len(d.Files) == 0 {
			return nil, nil, fmt.Errorf("the tree has dir %q without files; expected the Terraform files it holds", d.Dir)
		}
		for _, f := range d.Files {
			if strings.ContainsAny(f, `/\`) || !isTerraformFile(f) {
				return nil, nil, fmt.Errorf("the tree has file %q in %s; expected the name of a Terraform file", f, d.Dir)
			}
		}
		for _, c := range d.Calls {
			if !treePath(c, true) {
				return nil, nil, fmt.Errorf("the tree has dir %s calling %q; expected a clean path inside the repository", d.Dir, c)
			}
		}
		sds[i] = sourceDir{dir: d.Dir, files: d.Files}
		if len(d.Calls) > 0 {
			calls[d.Dir] = d.Calls
		}
	}
	return sds, calls, nil
}

// treePath reports whether p is a path a scan could return: "." or a clean
// relative path inside the root, of names a scan does not skip unless
// hidden is allowed (a module call may name any dir inside the root).
func treePath(p string, hidden bool) bool {
	if p == "." {
		return true
	}
	if p == "" || path.Clean(p) != p || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, `\`) {
		return false
	}
	for _, name := range strings.Split(p, "/") {
		if !hidden && skipDir(name) {
			return false
		}
	}
	return true
}
