// Package contenthash computes what strata compares to know whether
// something changed: the content digest of a unit (its files, local
// modules, engine, workspace, variables, arguments and var file), which
// decides whether a saved plan may be reused and whether an apply is
// current, and the init fingerprint, which decides whether init may be
// skipped.
package contenthash

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

// DigestInput is everything that shapes a unit's plan (docs/behaviour.md#run-state). Paths
// are repo-relative and "/"-separated, "." for the root.
type DigestInput struct {
	Root string // absolute repo root
	Dir  string // unit dir
	// ModuleDirs are the dirs of the local modules the unit calls,
	// transitively.
	ModuleDirs []string
	// OtherRoots are the dirs of the other root modules. A subdirectory
	// of Dir or of a module dir that is one of them is left out.
	OtherRoots []string
	// FilePatterns are the unit's when_modified.file_patterns, expanded
	// to repo-relative doublestar patterns; a "!" prefix negates.
	FilePatterns []string
	// Reads are the files the unit and its local modules read
	// (docs/behaviour.md#files-a-unit-reads), as repo-relative doublestar
	// patterns: a file's path quoted, a fileset glob. No "!" pattern
	// leaves one out.
	Reads                 []string
	Engine, EngineVersion string
	Workspace, Stack      string
	Variables             map[string]string // resolved stack variables
	// EngineArgs are the effective engine arguments (extra_args,
	// targets, arguments after --), in order.
	EngineArgs []string
	VarFile    []byte // content of the JSON var file strata passes, if any
}

// digestVersion opens every content digest, so that a change to the
// layout below can never produce a digest equal to an older one.
const digestVersion = "strata content digest v1"

// Digest returns the content digest of a unit as "sha256:<hex>".
//
// The SHA-256 is taken over, in this order, each item framed by a big-endian
// uint64 length (or count) so that no two inputs collide by moving bytes
// from one item to the next:
//
//  1. digestVersion;
//  2. the tree files: every regular file under Dir and under each module
//     dir, recursively, sorted by repo-relative path, each as its path and
//     the SHA-256 of its content. Left out: .terraform, .strata, .git and
//     terraform.tfstate.d dirs, *.tfstate* files, and subdirectories that
//     are other roots. Git-ignored files count. A symlink to a file counts
//     with the content it points to; symlinks to dirs, dangling symlinks
//     and other non-regular files are skipped;
//  3. the pattern files: every other file a positive FilePatterns entry
//     matches and no negated one does, and every other file Reads
//     matches, with the same exclusions except other roots, sorted,
//     framed like the tree files;
//  4. engine name and version, workspace, stack;
//  5. the variables sorted by name, as name and value pairs;
//  6. the engine arguments in order;
//  7. the var file content (nil and empty are the same).
func Digest(in DigestInput) (string, error) {
	if in.Root == "" {
		return "", errors.New("content digest: no repository root")
	}
	tree := newTreeWalk(in.Root, in.OtherRoots)
	if err := tree.walkStart(in.Dir, "unit dir"); err != nil {
		return "", fmt.Errorf("content digest of %s: %w", in.Dir, err)
	}
	for _, m := range in.ModuleDirs {
		if err := tree.walkStart(m, "module dir"); err != nil {
			return "", fmt.Errorf("content digest of %s: %w", in.Dir, err)
		}
	}
	treeFiles := tree.files
	sort.Strings(treeFiles)

	patternFiles, err := matchFilePatterns(in.Root, in.FilePatterns, tree.seen)
	if err != nil {
		return "", fmt.Errorf("content digest of %s: %w", in.Dir, err)
	}
	if len(in.Reads) > 0 {
		counted := make(map[string]bool, len(tree.seen)+len(patternFiles))
		for f := range tree.seen {
			counted[f] = true
		}
		for _, f := range patternFiles {
			counted[f] = true
		}
		readFiles, err := matchFilePatterns(in.Root, in.Reads, counted)
		if err != nil {
			return "", fmt.Errorf("content digest of %s: %w", in.Dir, err)
		}
		patternFiles = append(patternFiles, readFiles...)
	}
	sort.Strings(patternFiles)

	d := newFileHasher(in.Root)
	d.out.string(digestVersion)
	for _, files := range [][]string{treeFiles, patternFiles} {
		d.out.count(len(files))
		for _, rel := range files {
			if err := d.file(rel); err != nil {
				return "", fmt.Errorf("content digest of %s: %w", in.Dir, err)
			}
		}
	}
	d.out.string(in.Engine)
	d.out.string(in.EngineVersion)
	d.out.string(in.Workspace)
	d.out.string(in.Stack)
	names := make([]string, 0, len(in.Variables))
	for name := range in.Variables {
		names = append(names, name)
	}
	sort.Strings(names)
	d.out.count(len(names))
	for _, name := range names {
		d.out.string(name)
		d.out.string(in.Variables[name])
	}
	d.out.strings(in.EngineArgs)
	d.out.bytes(in.VarFile)
	return "sha256:" + hex.EncodeToString(d.out.h.Sum(nil)), nil
}

// framer writes length-prefixed items to a hash.
type framer struct {
	h   hash.Hash
	buf [8]byte
}

func (f *framer) count(n int) {
	binary.BigEndian.PutUint64(f.buf[:], uint64(n))
	f.h.Write(f.buf[:])
}

func (f *framer) bytes(b []byte) {
	f.count(len(b))
	f.h.Write(b)
}

func (f *framer) string(s string) {
	f.count(len(s))
	io.WriteString(f.h, s)
}

func (f *framer) strings(ss []string) {
	f.count(len(ss))
	for _, s := range ss {
		f.string(s)
	}
}

// excludedDir reports whether a directory of that name never counts: the
// engine's data dir, strata's state dir, git's dir and the workspace state
// dir.
func excludedDir(name string) bool {
	switch name {
	case ".terraform", ".strata", ".git", "terraform.tfstate.d":
		return true
	}
	return false
}

// excludedFile reports whether a file of that name never counts: state
// files and their backups (`*.tfstate*`).
func excludedFile(name string) bool {
	return strings.Contains(name, ".tfstate")
}

// cleanRepoPath checks that a repo-relative dir stays inside the repository and
// returns it cleaned.
func cleanRepoPath(p string) (string, bool) {
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return p, false
	}
	return p, true
}

// joinRepoPath joins a repo-relative dir and a name.
func joinRepoPath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// treeWalk lists the tree files of a unit.
type treeWalk struct {
	root       string
	otherRoots map[string]bool
	seen       map[string]bool
	files      []string
}

func newTreeWalk(root string, otherRoots []string) *treeWalk {
	w := &treeWalk{root: root, otherRoots: make(map[string]bool, len(otherRoots)), seen: make(map[string]bool)}
	for _, r := range otherRoots {
		if c, ok := cleanRepoPath(r); ok {
			w.otherRoots[c] = true
		}
	}
	return w
}

func (w *treeWalk) abs(rel string) string {
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

// walkStart walks the tree under a unit or module dir; what names the dir
// in errors. The start dir itself is walked even when it is another root.
func (w *treeWalk) walkStart(dir, what string) error {
	rel, ok := cleanRepoPath(dir)
	if !ok {
		return fmt.Errorf("%s %s is outside the repository", what, dir)
	}
	fi, err := os.Stat(w.abs(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s does not exist", what, dir)
		}
		return fmt.Errorf("%s %s: %w", what, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a directory", what, dir)
	}
	return w.walk(rel)
}

func (w *treeWalk) walk(rel string) error {
	entries, err := os.ReadDir(w.abs(rel))
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		p := joinRepoPath(rel, name)
		switch t := e.Type(); {
		case t.IsDir():
			if excludedDir(name) || w.otherRoots[p] {
				continue
			}
			if err := w.walk(p); err != nil {
				return err
			}
		case t.IsRegular():
			if !excludedFile(name) {
				w.add(p)
			}
		case t&fs.ModeSymlink != 0:
			// Only links to files count: following links to dirs could
			// loop.
			if excludedFile(name) {
				continue
			}
			if fi, err := os.Stat(w.abs(p)); err == nil && fi.Mode().IsRegular() {
				w.add(p)
			}
		}
	}
	return nil
}

func (w *treeWalk) add(rel string) {
	if !w.seen[rel] {
		w.seen[rel] = true
		w.files = append(w.files, rel)
	}
}

// patternWalk is one walk of the repository for the positive patterns that
// share a literal base dir.
type patternWalk struct {
	base     string
	patterns []string
	maxDepth int // deepest level of files below base that can match; -1: any
}

// matchFilePatterns returns the files, other than those in counted, that a
// positive pattern matches and no negated one does. Rather than
// doublestar.GlobWalk, which cannot be kept out of .terraform under a `**`
// without also hiding every dotfile, it walks os.DirFS(root) from each
// pattern's literal base, pruning the excluded dirs, and matches paths with
// doublestar. A pattern that leaves the repository matches nothing.
func matchFilePatterns(root string, patterns []string, counted map[string]bool) ([]string, error) {
	walks, negated, err := planPatternWalks(patterns)
	if err != nil || len(walks) == 0 {
		return nil, err
	}
	fsys := os.DirFS(root)
	found := make(map[string]bool)
	var out []string
	for _, pw := range walks {
		if out, err = pw.collect(fsys, negated, counted, found, out); err != nil {
			return nil, fmt.Errorf("file patterns under %s: %w", pw.base, err)
		}
	}
	return out, nil
}

// planPatternWalks returns one walk per literal base dir of the positive
// patterns, in base order, and the negated patterns.
func planPatternWalks(patterns []string) ([]*patternWalk, []string, error) {
	var negated []string
	walks := make(map[string]*patternWalk)
	var bases []string
	for _, raw := range patterns {
		p, neg := strings.CutPrefix(raw, "!")
		if !doublestar.ValidatePattern(p) {
			return nil, nil, fmt.Errorf("file pattern %q is not valid", raw)
		}
		if neg {
			negated = append(negated, p)
			continue
		}
		base, rest := doublestar.SplitPattern(p)
		if !fs.ValidPath(base) || hasExcludedDir(base) {
			continue
		}
		depth := -1
		if !strings.Contains(rest, "**") && !strings.Contains(rest, "{") {
			depth = strings.Count(rest, "/") + 1
		}
		pw := walks[base]
		if pw == nil {
			pw = &patternWalk{base: base, maxDepth: depth}
			walks[base] = pw
			bases = append(bases, base)
		} else if pw.maxDepth >= 0 && (depth < 0 || depth > pw.maxDepth) {
			pw.maxDepth = depth
		}
		pw.patterns = append(pw.patterns, p)
	}
	sort.Strings(bases)
	out := make([]*patternWalk, len(bases))
	for i, base := range bases {
		out[i] = walks[base]
	}
	return out, negated, nil
}

// collect appends to out, and marks found, the files under the walk's base
// that the patterns select and that are not yet counted or found.
func (pw *patternWalk) collect(fsys fs.FS, negated []string, counted, found map[string]bool, out []string) ([]string, error) {
	base := pw.base
	baseDepth := 0
	if base != "." {
		baseDepth = strings.Count(base, "/") + 1
	}
	err := fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				return fs.SkipAll
			}
			return err
		}
		depth := 0
		if p != "." {
			depth = strings.Count(p, "/") + 1 - baseDepth
		}
		if d.IsDir() {
			if p != base && (excludedDir(d.Name()) || (pw.maxDepth >= 0 && depth >= pw.maxDepth)) {
				return fs.SkipDir
			}
			return nil
		}
		if counted[p] || found[p] || excludedFile(d.Name()) {
			return nil
		}
		if !matchAnyPattern(pw.patterns, p) || matchAnyPattern(negated, p) {
			return nil
		}
		if !isRegularFile(fsys, p, d) {
			return nil
		}
		found[p] = true
		out = append(out, p)
		return nil
	})
	return out, err
}

// isRegularFile reports whether the entry d at p is a regular file or a
// symbolic link to one.
func isRegularFile(fsys fs.FS, p string, d fs.DirEntry) bool {
	t := d.Type()
	if t&fs.ModeSymlink == 0 {
		return t.IsRegular()
	}
	fi, err := fs.Stat(fsys, p)
	return err == nil && fi.Mode().IsRegular()
}

// hasExcludedDir reports whether a repo-relative path lies in an excluded
// dir.
func hasExcludedDir(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if excludedDir(seg) {
			return true
		}
	}
	return false
}

func matchAnyPattern(patterns []string, p string) bool {
	for _, pat := range patterns {
		if doublestar.MatchUnvalidated(pat, p) {
			return true
		}
	}
	return false
}

// fileHasher frames files into the digest: each file is hashed on its own,
// streaming through one reused buffer, and the digest takes its path and
// that hash.
type fileHasher struct {
	root  string
	out   framer
	inner hash.Hash
	buf   []byte
	sum   [sha256.Size]byte
}

func newFileHasher(root string) *fileHasher {
	return &fileHasher{root: root, out: framer{h: sha256.New()}, inner: sha256.New(), buf: make([]byte, 32<<10)}
}

func (d *fileHasher) file(rel string) error {
	f, err := os.Open(filepath.Join(d.root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	defer f.Close()
	d.inner.Reset()
	for {
		n, err := f.Read(d.buf)
		d.inner.Write(d.buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", rel, err)
		}
	}
	d.out.string(rel)
	d.out.bytes(d.inner.Sum(d.sum[:0]))
	return nil
}
