package engines

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Version files, as tfenv, tofuenv and tenv read them.
const (
	TerraformVersionFile = ".terraform-version"
	TofuVersionFile      = ".opentofu-version"
)

// VersionFile looks for a version file in dir, then in each parent up to and
// including root, and returns the spec the nearest one asks for, the file's
// path (joined to root as given) and ok. A .terraform-version asks for
// terraform, a .opentofu-version for tofu. When one directory holds both,
// .opentofu-version wins: a repository that moved to OpenTofu often keeps
// .terraform-version for tools that read only that file, while nobody
// writes .opentofu-version by accident.
//
// dir is relative to root (a repository dir such as "prod/network", or
// ".") or an absolute path inside root. A file holds one version (exact,
// a constraint or "latest") on its first line that is neither blank nor a
// "#" comment; an error names the file and line.
func VersionFile(root, dir string) (spec Spec, file string, ok bool, err error) {
	rel, err := relativeDir(root, dir)
	if err != nil {
		return Spec{}, "", false, err
	}
	return (&VersionFiles{Root: root}).find(rel)
}

// VersionFiles answers VersionFile for many dirs under one root, each dir
// looked at once: a dir's answer is its own file's, else its parent's.
// It is safe for concurrent use.
type VersionFiles struct {
	Root string
	mu   sync.Mutex
	memo map[string]versionAnswer
}

type versionAnswer struct {
	spec  Spec
	file  string
	found bool
	err   error
}

// Find is VersionFile(v.Root, dir) for a dir relative to the root.
func (v *VersionFiles) Find(dir string) (spec Spec, file string, ok bool, err error) {
	rel, err := relativeDir(v.Root, dir)
	if err != nil {
		return Spec{}, "", false, err
	}
	return v.find(rel)
}

func (v *VersionFiles) find(rel string) (Spec, string, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a := v.answer(rel)
	return a.spec, a.file, a.found && a.err == nil, a.err
}

// answer is the nearest version file at or above rel. Callers hold v.mu.
func (v *VersionFiles) answer(rel string) versionAnswer {
	if a, ok := v.memo[rel]; ok {
		return a
	}
	var a versionAnswer
	a.spec, a.file, a.found, a.err = versionFileIn(v.Root, rel)
	if !a.found && rel != "." {
		a = v.answer(filepath.Dir(rel))
	}
	if v.memo == nil {
		v.memo = map[string]versionAnswer{}
	}
	v.memo[rel] = a
	return a
}

// versionFileIn looks for a version file in the one dir rel, not its
// parents: found says one is there.
func versionFileIn(root, rel string) (spec Spec, file string, found bool, err error) {
	for _, f := range []struct{ file, name string }{
		{TofuVersionFile, Tofu},
		{TerraformVersionFile, Terraform},
	} {
		path := filepath.Join(root, rel, f.file)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Spec{}, path, true, err
		}
		spec, err := parseVersionFile(f.name, path, b)
		return spec, path, true, err
	}
	return Spec{}, "", false, nil
}

// relativeDir returns dir relative to root, refusing a dir outside it.
func relativeDir(root, dir string) (string, error) {
	rel := filepath.Clean(dir)
	if filepath.IsAbs(dir) {
		absRoot, err := filepath.Abs(root)
		if err != nil {
			return "", err
		}
		if rel, err = filepath.Rel(absRoot, rel); err != nil {
			return "", err
		}
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is not inside %s", dir, root)
	}
	return rel, nil
}

func parseVersionFile(name, path string, b []byte) (Spec, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimSpace(strings.TrimPrefix(text, "\ufeff"))
		if text == "" {
			continue
		}
		spec, err := ParseSpec(name, text)
		if err != nil {
			return Spec{}, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		return spec, nil
	}
	if err := sc.Err(); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	return Spec{}, fmt.Errorf("%s: names no version", path)
}
