// Package safepath builds file paths from names that come from a
// repository's config or from the environment (stack names, workspaces,
// dirs), refusing any path that would leave the directory it belongs in,
// lexically or through a symbolic link.
package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// ErrEscapes is the error of a path that would leave its directory.
var ErrEscapes = errors.New("leaves its directory")

// Join joins elems onto base, each a relative path (slash or OS
// separated), and checks the result stays at or under base: lexically,
// and after resolving the symbolic links of the part of it that exists.
func Join(base string, elems ...string) (string, error) {
	p, err := joinLexically(base, elems)
	if err != nil {
		return "", err
	}
	if err := Within(base, p); err != nil {
		return "", err
	}
	return p, nil
}

// joinLexically joins elems onto base and checks, without reading the
// file system, that the result stays at or under base.
func joinLexically(base string, elems []string) (string, error) {
	for _, e := range elems {
		if filepath.IsAbs(e) || filepath.VolumeName(e) != "" || strings.HasPrefix(e, "/") {
			return "", fmt.Errorf("%q: an absolute path %w %s", e, ErrEscapes, base)
		}
	}
	parts := make([]string, 0, len(elems)+1)
	parts = append(parts, base)
	for _, e := range elems {
		parts = append(parts, filepath.FromSlash(e))
	}
	p := filepath.Join(parts...)
	if !within(filepath.Clean(base), p) {
		return "", fmt.Errorf("%s %w %s", p, ErrEscapes, base)
	}
	return p, nil
}

// Base is a directory many paths are built under. Its own symbolic links
// are resolved once, when it is made or, for a directory made later, on
// the first Join after it exists, so each Join reads only the part of its
// path below the directory, where Join reads every component from /. It
// gives the same answers as Join as long as the directory itself is not
// replaced by a link afterwards; a link anywhere below it is always seen.
type Base struct {
	path string                 // cleaned
	real atomic.Pointer[string] // path with its links resolved; nil while it does not exist
}

// NewBase makes a Base of the directory at path. A path that does not
// exist yet is allowed: each Join then checks it the way Join does.
func NewBase(path string) (*Base, error) {
	path = filepath.Clean(path)
	b := &Base{path: path}
	if _, _, err := b.resolved(); err != nil {
		return nil, err
	}
	return b, nil
}

// resolved is the directory with its links resolved, found once it
// exists; absent says nothing is at its path (one Lstat while so), and ""
// with !absent is a link that leads nowhere yet.
func (b *Base) resolved() (real string, absent bool, err error) {
	if r := b.real.Load(); r != nil {
		return *r, false, nil
	}
	if _, err := os.Lstat(b.path); errors.Is(err, fs.ErrNotExist) {
		return "", true, nil
	}
	real, err = filepath.EvalSymlinks(b.path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	b.real.Store(&real)
	return real, false, nil
}

// Path is the directory, as it was given (cleaned).
func (b *Base) Path() string { return b.path }

// Join is safepath.Join(b.Path(), elems...).
func (b *Base) Join(elems ...string) (string, error) {
	p, err := joinLexically(b.path, elems)
	if err != nil {
		return "", err
	}
	base, absent, err := b.resolved()
	if err != nil {
		return "", err
	}
	if absent {
		// Nothing is at the directory's path, so nothing below it: the
		// lexical check is the whole check.
		return p, nil
	}
	if base == "" {
		if err := Within(b.path, p); err != nil {
			return "", err
		}
		return p, nil
	}
	rel, err := filepath.Rel(b.path, p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return p, nil
	}
	comps := strings.Split(rel, string(filepath.Separator))
	cur := base
	for i, c := range comps {
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing below exists: the lexical check is the whole check.
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			real, err := resolveExisting(filepath.Join(append([]string{next}, comps[i+1:]...)...))
			if err != nil {
				return "", err
			}
			if !within(base, real) {
				return "", fmt.Errorf("%s (%s) %w %s", p, real, ErrEscapes, b.path)
			}
			return p, nil
		}
		cur = next
	}
	return p, nil
}

// Within checks that p, with the symbolic links of its existing part
// resolved, is at or under base (whose own links are resolved too).
func Within(base, p string) error {
	realBase, err := resolveExisting(base)
	if err != nil {
		return err
	}
	realP, err := resolveExisting(p)
	if err != nil {
		return err
	}
	if !within(realBase, realP) {
		return fmt.Errorf("%s (%s) %w %s", p, realP, ErrEscapes, base)
	}
	return nil
}

// resolveExisting resolves the links of the longest existing prefix of p
// and appends the rest unchanged.
func resolveExisting(p string) (string, error) {
	p = filepath.Clean(p)
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator)) && !filepath.IsAbs(rel)
}
