package engines

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hashicorp/go-version"
)

// pathSource finds an engine among the executables named terraform or tofu
// in the search path. A binary is never trusted by its name: each candidate
// is run with "version -json" and taken only when it reports the engine and
// version asked for.
type pathSource struct{ in *Installer }

func (pathSource) kind() string                          { return SourcePath }
func (pathSource) installs() bool                        { return false }
func (pathSource) usable(string, *version.Version) error { return nil }

func (p pathSource) get(ctx context.Context, name string, v *version.Version, _ string) (string, error) {
	cands := p.in.candidates(name)
	if len(cands) == 0 {
		return "", fmt.Errorf("no %s executable in %s", binaryName(name), p.in.searchDescription())
	}
	var seen []string
	for _, c := range cands {
		id, err := p.in.identifyBinary(ctx, c)
		if err != nil {
			seen = append(seen, err.Error())
			continue
		}
		if err := id.check(c, name, v); err != nil {
			seen = append(seen, err.Error())
			continue
		}
		return c, nil
	}
	return "", fmt.Errorf("no %s %s in %s:\n%s", name, v, p.in.searchDescription(), strings.Join(seen, "\n"))
}

// FindOnPath returns the first executable called name in the search path
// that runs as that engine, whatever its version: the engine of a unit
// that names none (the caller warns, as docs/behaviour.md#engines asks).
func (in *Installer) FindOnPath(ctx context.Context, name string) (*Engine, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	cands := in.candidates(name)
	if len(cands) == 0 {
		return nil, fmt.Errorf("no %s executable in %s", binaryName(name), in.searchDescription())
	}
	var seen []string
	for _, c := range cands {
		id, err := in.identifyBinary(ctx, c)
		if err == nil && id.name != name {
			err = fmt.Errorf("%s is %s %s, not %s", c, id.name, id.version, name)
		}
		if err != nil {
			seen = append(seen, err.Error())
			continue
		}
		return &Engine{Name: name, Version: id.version, Path: c, Source: SourcePath}, nil
	}
	return nil, fmt.Errorf("no %s in %s:\n%s", name, in.searchDescription(), strings.Join(seen, "\n"))
}

// wellKnownDirs are searched after PATH: the places package managers and
// release archives usually put engines, which a minimal CI PATH may lack.
func wellKnownDirs() []string {
	if runtime.GOOS == "windows" {
		return nil
	}
	dirs := []string{"/usr/local/bin", "/usr/bin", "/opt/homebrew/bin", "/snap/bin"}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "bin"), filepath.Join(home, "bin"))
	}
	return dirs
}

func (in *Installer) searchDirs() []string {
	if in.SearchPath != nil {
		return in.SearchPath
	}
	return append(filepath.SplitList(os.Getenv("PATH")), wellKnownDirs()...)
}

func (in *Installer) searchDescription() string {
	if in.SearchPath != nil {
		if len(in.SearchPath) == 0 {
			return "the search path (empty)"
		}
		return "the search path (" + strings.Join(in.SearchPath, string(os.PathListSeparator)) + ")"
	}
	return "PATH or " + strings.Join(wellKnownDirs(), ", ")
}

// candidates lists the executables named like the engine in the search
// directories, in order, each real file once.
func (in *Installer) candidates(name string) []string {
	var out []string
	seen := map[string]bool{}
	for _, dir := range in.searchDirs() {
		if dir == "" {
			dir = "."
		}
		p, err := filepath.Abs(filepath.Join(dir, binaryName(name)))
		if err != nil {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || (runtime.GOOS != "windows" && fi.Mode()&0o111 == 0) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, p)
	}
	return out
}

// pathEngines identifies every candidate for name in the search path; it
// serves the offline resolution of constraints.
func (in *Installer) pathEngines(ctx context.Context, name string) []*Engine {
	var out []*Engine
	for _, c := range in.candidates(name) {
		id, err := in.identifyBinary(ctx, c)
		if err != nil || id.name != name {
			continue
		}
		out = append(out, &Engine{Name: name, Version: id.version, Path: c, Source: SourcePath})
	}
	return out
}

// identifyBinary identifies a binary once per Installer and file state.
func (in *Installer) identifyBinary(ctx context.Context, path string) (identity, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return identity{}, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
	if id, ok := in.identities.Load(key); ok {
		return id.(identity), nil
	}
	if id, ok := in.knownIdentity(key); ok {
		in.identities.Store(key, id)
		return id, nil
	}
	ident := in.identify
	if ident == nil {
		ident = identify
	}
	id, err := ident(ctx, path)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return identity{}, ctx.Err()
		}
		return identity{}, err
	}
	in.identities.Store(key, id)
	in.rememberIdentity(key, id)
	return id, nil
}
