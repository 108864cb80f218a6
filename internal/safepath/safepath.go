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
)

// ErrEscapes is the error of a path that would leave its directory.
var ErrEscapes = errors.New("leaves its directory")

// Join joins elems onto base, each a relative path (slash or OS
// separated), and checks the result stays at or under base: lexically,
// and after resolving the symbolic links of the part of it that exists.
func Join(base string, elems ...string) (string, error) {
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
	if err := Within(base, p); err != nil {
		return "", err
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
