// Package release builds strata's release archives and their
// checksums.txt with the Go toolchain alone, as .goreleaser.yaml describes
// them (docs/ci.md#release-archives). The two must agree; a test reads
// .goreleaser.yaml and checks that they do.
package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Platform is one GOOS/GOARCH a release has an archive for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are every platform of a release: .goreleaser.yaml's goos ×
// goarch.
var Platforms = []Platform{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

const (
	// Project names the archives: strata_<version>_<os>_<arch>.
	Project = "strata"
	// MainPackage is the package the binary is built from.
	MainPackage = "./cmd/strata"
	// Tags are the build tags of the release, as `make build` uses them.
	Tags = "urfave_cli_no_docs,disable_grpc_modules"
	// ChecksumsFile lists the SHA-256 of every archive.
	ChecksumsFile = "checksums.txt"
)

// Files are the patterns of the repository's files every archive holds
// beside the binary. A pattern without a wildcard must match a file; one
// with a wildcard may match none (a clone without a LICENSE).
var Files = []string{"README.md", "LICENSE*", "action.yml"}

// Options are what Build builds.
type Options struct {
	// Root is the module's root directory: the binary is built there and
	// Files are read from there.
	Root string
	// Dist is the directory the archives and checksums.txt are written to.
	// It is made when missing; archives and a checksums.txt already in it
	// are replaced, anything else there is refused.
	Dist string
	// Version is what the binary reports (main.version): a tag (v1.2.3)
	// or the output of git describe. File names drop its leading v.
	Version string
	// Time is every archive entry's modification time: the commit's, so
	// two builds of one commit give identical archives.
	Time time.Time
	// Platforms to build; nil builds all of Platforms.
	Platforms []Platform
	// Log receives a line per archive written; nil is quiet.
	Log io.Writer
}

// Artifact is one archive Build wrote.
type Artifact struct {
	Platform Platform
	Name     string // the file's name in Dist
	SHA256   string // lower-case hex
}

// versionPattern is a version a file name and -ldflags can carry: no
// spaces, quotes or path separators.
var versionPattern = regexp.MustCompile(`^v?[0-9A-Za-z][0-9A-Za-z.+_-]*$`)

// FileVersion is the version in the archives' names: Version without its
// leading v, as GoReleaser's {{ .Version }}.
func FileVersion(version string) string { return strings.TrimPrefix(version, "v") }

// ArchiveName is the archive of one platform: a zip for Windows, a gzipped
// tar for the rest.
func ArchiveName(version string, p Platform) string {
	return fmt.Sprintf("%s_%s_%s_%s.%s", Project, FileVersion(version), p.OS, p.Arch, archiveFormat(p))
}

func archiveFormat(p Platform) string {
	if p.OS == "windows" {
		return "zip"
	}
	return "tar.gz"
}

// BinaryName is the binary's name in the archive of p.
func BinaryName(p Platform) string {
	if p.OS == "windows" {
		return Project + ".exe"
	}
	return Project
}

// LDFlags are the linker flags of a release built as version.
func LDFlags(version string) string { return "-s -w -X main.version=" + version }

// ParsePlatforms reads a comma-separated list of os/arch; "" is all of
// Platforms.
func ParsePlatforms(s string) ([]Platform, error) {
	if strings.TrimSpace(s) == "" {
		return slices.Clone(Platforms), nil
	}
	var out []Platform
	for _, f := range strings.Split(s, ",") {
		osName, arch, _ := strings.Cut(strings.TrimSpace(f), "/")
		p := Platform{osName, arch}
		if !slices.Contains(Platforms, p) {
			return nil, fmt.Errorf("platform %q is not one a release is built for: want some of %s", f, platformList())
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func platformList() string {
	names := make([]string, len(Platforms))
	for i, p := range Platforms {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}

// Build builds the binary of each platform, archives it with Files and
// writes the archives and checksums.txt into Dist, each archive as a
// release publishes it.
func Build(ctx context.Context, o Options) ([]Artifact, error) {
	platforms, err := o.check()
	if err != nil {
		return nil, err
	}
	files, err := repoFiles(o.Root)
	if err != nil {
		return nil, err
	}
	if err := prepareDist(o.Dist); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "strata-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var arts []Artifact
	for _, p := range platforms {
		bin := filepath.Join(tmp, p.OS+"_"+p.Arch, BinaryName(p))
		if err := buildBinary(ctx, o.Root, o.Version, p, bin); err != nil {
			return nil, err
		}
		entries := append([]entry{{name: BinaryName(p), path: bin, mode: 0o755}}, files...)
		name := ArchiveName(o.Version, p)
		sum, err := writeArchive(filepath.Join(o.Dist, name), archiveFormat(p), entries, o.Time)
		if err != nil {
			return nil, err
		}
		arts = append(arts, Artifact{Platform: p, Name: name, SHA256: sum})
		if o.Log != nil {
			fmt.Fprintf(o.Log, "%s  %s\n", sum, filepath.Join(o.Dist, name))
		}
	}
	if err := writeChecksums(filepath.Join(o.Dist, ChecksumsFile), arts); err != nil {
		return nil, err
	}
	return arts, nil
}

// earliest and latest bound the times a zip's MS-DOS date holds.
var (
	earliest = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2107, 12, 31, 0, 0, 0, 0, time.UTC)
)

// check reports what is wrong with o, and the platforms it builds.
func (o Options) check() ([]Platform, error) {
	if !versionPattern.MatchString(o.Version) {
		return nil, fmt.Errorf("version %q: want a tag such as v1.2.3 or git describe's output (letters, digits, . + _ -)", o.Version)
	}
	if o.Time.Before(earliest) || o.Time.After(latest) {
		return nil, fmt.Errorf("time %s for the archives' entries: want the commit's time, between 1980 and 2107", o.Time.UTC().Format(time.RFC3339))
	}
	if o.Dist == "" {
		return nil, errors.New("no directory for the archives: give one (make release writes dist)")
	}
	if _, err := os.Stat(filepath.Join(o.Root, "go.mod")); err != nil {
		return nil, fmt.Errorf("%q is not the module's root (no go.mod there): build from the clone's root", o.Root)
	}
	platforms := o.Platforms
	if platforms == nil {
		platforms = Platforms
	}
	if len(platforms) == 0 {
		return nil, errors.New("no platform to build")
	}
	for _, p := range platforms {
		if !slices.Contains(Platforms, p) {
			return nil, fmt.Errorf("platform %s is not one a release is built for: want some of %s", p, platformList())
		}
	}
	return platforms, nil
}

// buildBinary builds the binary of p into out as the release is built:
// static, without paths of this machine, with Tags and LDFlags, for the
// baseline of each architecture (GoReleaser's default).
func buildBinary(ctx context.Context, root, version string, p Platform, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", Tags,
		"-ldflags", LDFlags(version), "-o", out, MainPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOAMD64=v1", "GOARM64=v8.0")
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build of %s for %s: %v\n%s", MainPackage, p, err, output.Bytes())
	}
	return nil
}

// repoFiles are the entries Files name in root, sorted by name.
func repoFiles(root string) ([]entry, error) {
	var out []entry
	for _, pattern := range Files {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, fmt.Errorf("file pattern %q: %v", pattern, err)
		}
		if len(matches) == 0 && !strings.ContainsAny(pattern, "*?[") {
			return nil, fmt.Errorf("%s is not in %s: every archive holds it", pattern, root)
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			if err != nil {
				return nil, err
			}
			if !info.Mode().IsRegular() {
				return nil, fmt.Errorf("%s is not a regular file: an archive holds files only", m)
			}
			out = append(out, entry{name: filepath.Base(m), path: m, mode: 0o644})
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// prepareDist makes dist, or empties it of earlier archives and
// checksums; anything else in it is refused rather than removed.
func prepareDist(dist string) error {
	if err := os.MkdirAll(dist, 0o755); err != nil {
		return err
	}
	list, err := os.ReadDir(dist)
	if err != nil {
		return err
	}
	for _, e := range list {
		if !isReleaseFile(e.Name()) || !e.Type().IsRegular() {
			return fmt.Errorf("%s holds %s, which is no release archive: give an empty or new directory", dist, e.Name())
		}
	}
	for _, e := range list {
		if err := os.Remove(filepath.Join(dist, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func isReleaseFile(name string) bool {
	if name == ChecksumsFile {
		return true
	}
	return strings.HasPrefix(name, Project+"_") && (strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".zip"))
}
