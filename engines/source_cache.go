package engines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/strata-iac/strata/internal/atomicfile"
)

// The cache holds one directory per engine version:
//
//	<CacheDir>/engines/<name>/<version>/<binary>
//	<CacheDir>/engines/<name>/<version>/.strata-engine.json   the manifest
//	<CacheDir>/engines/<name>/.<version>.lock                 the install lock
//	<CacheDir>/engines/<name>/.tmp-<version>-*/               staging
//	<CacheDir>/engines/<name>/versions.json                   the last listing
//
// A version directory only ever appears by renaming a staging directory
// whose binary has been verified, so a crash mid-install leaves staging
// debris (removed by the next install of that version), never a half binary
// at the final path.
const manifestName = ".strata-engine.json"

// manifest records the verification of a cached binary. While the binary's
// size and modification time are those recorded, a cache hit trusts the
// recorded "version -json" result instead of running the binary again,
// which keeps resolving a cached engine to a few system calls.
type manifest struct {
	Name       string    `json:"name"`
	Version    string    `json:"version"`
	Binary     string    `json:"binary"`
	Size       int64     `json:"size"`
	ModTime    int64     `json:"mtime_unix_nano"`
	Source     string    `json:"source"`
	VerifiedAt time.Time `json:"verified_at"`
}

func (in *Installer) engineDir(name string) string {
	return filepath.Join(in.CacheDir, "engines", name)
}

func (in *Installer) versionDir(name string, v *version.Version) string {
	return filepath.Join(in.engineDir(name), v.String())
}

// cacheSource finds an engine in strata's cache.
type cacheSource struct{ in *Installer }

func (cacheSource) kind() string                          { return SourceCache }
func (cacheSource) installs() bool                        { return false }
func (cacheSource) usable(string, *version.Version) error { return nil }

func (c cacheSource) get(ctx context.Context, name string, v *version.Version, _ string) (string, error) {
	if c.in.CacheDir == "" {
		return "", errors.New("no cache directory")
	}
	dir := c.in.versionDir(name, v)
	bin := filepath.Join(dir, binaryName(name))
	fi, err := os.Stat(bin)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", bin)
		}
		return "", err
	}
	if m, err := readManifest(dir); err == nil && m.describes(name, v, fi) {
		return bin, nil
	}
	// No manifest, or the binary changed since it was verified: verify it
	// now and record the result.
	id, err := c.in.identifyBinary(ctx, bin)
	if err == nil {
		err = id.check(bin, name, v)
	}
	if err != nil {
		return "", fmt.Errorf("cached binary fails verification: %w", err)
	}
	if err := writeManifest(dir, name, v, fi, SourceCache); err != nil {
		c.in.warn(fmt.Sprintf("cannot record the verification of %s: %v", bin, err))
	}
	return bin, nil
}

func (m *manifest) describes(name string, v *version.Version, fi os.FileInfo) bool {
	return m.Name == name && m.Version == v.String() && m.Binary == fi.Name() &&
		m.Size == fi.Size() && m.ModTime == fi.ModTime().UnixNano()
}

func readManifest(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// writeManifest writes dir's manifest atomically (temporary file, then
// rename), so a reader sees the old manifest or the new one.
func writeManifest(dir, name string, v *version.Version, fi os.FileInfo, src string) error {
	m := manifest{
		Name:       name,
		Version:    v.String(),
		Binary:     fi.Name(),
		Size:       fi.Size(),
		ModTime:    fi.ModTime().UnixNano(),
		Source:     src,
		VerifiedAt: time.Now().UTC(),
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, manifestName), append(b, '\n'))
}

// writeFileAtomic writes a cache file readable by others (0644).
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, 0o644)
}

// cachedVersions lists the versions of name that have a directory in the
// cache, without verifying them.
func (in *Installer) cachedVersions(name string) []*version.Version {
	entries, err := os.ReadDir(in.engineDir(name))
	if err != nil {
		return nil
	}
	var vs []*version.Version
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if v, err := version.NewVersion(e.Name()); err == nil && v.String() == e.Name() {
			vs = append(vs, v)
		}
	}
	return vs
}
