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
	for {
		if spec, file, found, err := VersionFileIn(root, rel); found || err != nil {
			return spec, file, err == nil, err
		}
		if rel == "." {
			return Spec{}, "", false, nil
		}
		rel = filepath.Dir(rel)
	}
}

// VersionFileIn looks for a version file in the one dir rel (relative to
// root, already checked to stay inside it), not its parents: found says
// one is there, ok-or-error as VersionFile's. Callers that ask for many
// dirs under one root ask each dir once and reuse a dir's answer for the
// dirs below it.
func VersionFileIn(root, rel string) (spec Spec, file string, found bool, err error) {
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
