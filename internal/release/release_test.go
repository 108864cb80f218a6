package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/strata-iac/strata/internal/testenv"
)

// goreleaserConfig is the part of .goreleaser.yaml that says what the
// archives are. Unknown keys fail the decoding: a key added there that
// changes the archives (a name template, a wrapping directory) must be
// added here, and to the package, too.
type goreleaserConfig struct {
	Version     int    `yaml:"version"`
	ProjectName string `yaml:"project_name"`
	Builds      []struct {
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		LDFlags []string `yaml:"ldflags"`
		GOOS    []string `yaml:"goos"`
		GOARCH  []string `yaml:"goarch"`
	} `yaml:"builds"`
	Archives []struct {
		Formats         []string `yaml:"formats"`
		FormatOverrides []struct {
			GOOS    string   `yaml:"goos"`
			Formats []string `yaml:"formats"`
		} `yaml:"format_overrides"`
		Files []string `yaml:"files"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string `yaml:"algorithm"`
	} `yaml:"checksum"`
	Dockers   any `yaml:"dockers"`
	Changelog any `yaml:"changelog"`
}

// TestGoreleaserAgrees: .goreleaser.yaml and this package build the same
// archives, from the same binary, with the same checksums file.
func TestGoreleaserAgrees(t *testing.T) {
	b, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c goreleaserConfig
	if err := dec.Decode(&c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if c.ProjectName != Project || len(c.Builds) != 1 || len(c.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml: project %q, %d builds, %d archives; want %q, one build, one archive", c.ProjectName, len(c.Builds), len(c.Archives), Project)
	}
	build, archive := c.Builds[0], c.Archives[0]
	checks := []struct {
		what      string
		got, want any
	}{
		{"main", build.Main, MainPackage},
		{"binary", build.Binary, Project},
		{"env", build.Env, []string{"CGO_ENABLED=0"}},
		{"flags", build.Flags, []string{"-trimpath", "-tags=" + Tags}},
		{"ldflags", build.LDFlags, []string{LDFlags("{{ .Tag }}")}},
		{"files", archive.Files, Files},
		{"checksum name", c.Checksum.NameTemplate, ChecksumsFile},
		{"checksum algorithm", c.Checksum.Algorithm, "sha256"},
		{"tags of make build", Tags, testenv.BuildTags},
	}
	for _, c := range checks {
		if !equalYAML(c.got, c.want) {
			t.Errorf("%s: .goreleaser.yaml has %q, the package %q", c.what, c.got, c.want)
		}
	}
	var platforms []Platform
	for _, goos := range build.GOOS {
		for _, goarch := range build.GOARCH {
			platforms = append(platforms, Platform{goos, goarch})
		}
	}
	if !equalSets(platforms, Platforms) {
		t.Errorf("platforms: .goreleaser.yaml builds %v, the package %v", platforms, Platforms)
	}
	for _, p := range Platforms {
		want := archive.Formats
		for _, o := range archive.FormatOverrides {
			if o.GOOS == p.OS {
				want = o.Formats
			}
		}
		if len(want) != 1 || want[0] != archiveFormat(p) {
			t.Errorf("%s: .goreleaser.yaml archives it as %v, the package as %s", p, want, archiveFormat(p))
		}
	}
}

func equalYAML(a, b any) bool {
	as, aok := a.([]string)
	bs, bok := b.([]string)
	if aok && bok {
		return slices.Equal(as, bs)
	}
	return a == b
}

func equalSets(a, b []Platform) bool {
	less := func(x, y Platform) int { return strings.Compare(x.String(), y.String()) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, less)
	slices.SortFunc(b, less)
	return slices.Equal(a, b)
}

// TestNames: the archives' names are the ones the install script
// downloads (docs/ci.md#installing-strata-in-a-job).
func TestNames(t *testing.T) {
	for _, c := range []struct {
		version string
		p       Platform
		want    string
	}{
		{"v1.2.3", Platform{"linux", "amd64"}, "strata_1.2.3_linux_amd64.tar.gz"},
		{"v1.2.3-rc.1", Platform{"darwin", "arm64"}, "strata_1.2.3-rc.1_darwin_arm64.tar.gz"},
		{"v1.2.3", Platform{"windows", "arm64"}, "strata_1.2.3_windows_arm64.zip"},
		{"3ca0682-dirty", Platform{"linux", "arm64"}, "strata_3ca0682-dirty_linux_arm64.tar.gz"},
	} {
		if got := ArchiveName(c.version, c.p); got != c.want {
			t.Errorf("ArchiveName(%q, %s) = %q, want %q", c.version, c.p, got, c.want)
		}
	}
	if BinaryName(Platform{"windows", "amd64"}) != "strata.exe" || BinaryName(Platform{"darwin", "amd64"}) != "strata" {
		t.Errorf("binary names: %q, %q", BinaryName(Platform{"windows", "amd64"}), BinaryName(Platform{"darwin", "amd64"}))
	}
	if got := LDFlags("v1.2.3"); got != "-s -w -X main.version=v1.2.3" {
		t.Errorf("LDFlags = %q", got)
	}
}

func TestParsePlatforms(t *testing.T) {
	all, err := ParsePlatforms("")
	if err != nil || !slices.Equal(all, Platforms) {
		t.Errorf(`ParsePlatforms("") = %v, %v; want every platform`, all, err)
	}
	some, err := ParsePlatforms("linux/amd64, windows/arm64,linux/amd64")
	if want := []Platform{{"linux", "amd64"}, {"windows", "arm64"}}; err != nil || !slices.Equal(some, want) {
		t.Errorf("ParsePlatforms = %v, %v; want %v", some, err, want)
	}
	for _, bad := range []string{"plan9/386", "linux", "linux/amd64,"} {
		if _, err := ParsePlatforms(bad); err == nil || !strings.Contains(err.Error(), "want some of darwin/amd64") {
			t.Errorf("ParsePlatforms(%q): %v; want an error naming the platforms", bad, err)
		}
	}
}

// writeFile writes a file of the test and returns its path.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestArchiveEntries: an archive holds its entries sorted by name, owned
// by 0:0, at the given time, with fixed modes; the sources' own modes and
// times change nothing in its bytes.
func TestArchiveEntries(t *testing.T) {
	src, out := t.TempDir(), t.TempDir()
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	contents := map[string]string{"strata": "#!/bin/sh\necho hi\n", "README.md": "# strata\n", "action.yml": "name: strata\n"}
	entries := []entry{
		{name: "strata", path: writeFile(t, src, "strata", contents["strata"], 0o700), mode: 0o755},
		{name: "README.md", path: writeFile(t, src, "README.md", contents["README.md"], 0o600), mode: 0o644},
		{name: "action.yml", path: writeFile(t, src, "action.yml", contents["action.yml"], 0o664), mode: 0o644},
	}
	wantNames := []string{"README.md", "action.yml", "strata"}
	wantMode := map[string]os.FileMode{"strata": 0o755, "README.md": 0o644, "action.yml": 0o644}
	for _, format := range []string{"tar.gz", "zip"} {
		first := filepath.Join(out, "first."+format)
		sum, err := writeArchive(first, format, entries, mtime)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(first)
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s: writeArchive's sum %s is not the file's %x", format, sum, h)
		}
		got := readArchive(t, format, b)
		if names := archiveNames(got); !slices.Equal(names, wantNames) {
			t.Errorf("%s: entries %v, want %v", format, names, wantNames)
		}
		for _, e := range got {
			if e.body != contents[e.name] || e.mode != wantMode[e.name] || !e.mtime.Equal(mtime) || e.owner != "0:0" {
				t.Errorf("%s: %s is %q, mode %v, time %v, owner %s; want %q, %v, %v, 0:0", format, e.name, e.body, e.mode, e.mtime, e.owner, contents[e.name], wantMode[e.name], mtime)
			}
		}
		// Other modes and times on the sources, and another order: the
		// same bytes.
		for _, e := range entries {
			os.Chmod(e.path, 0o777)
			os.Chtimes(e.path, time.Now(), time.Now().Add(-time.Hour))
		}
		second := filepath.Join(out, "second."+format)
		reversed := slices.Clone(entries)
		slices.Reverse(reversed)
		if sum2, err := writeArchive(second, format, reversed, mtime); err != nil || sum2 != sum {
			t.Errorf("%s: a second archive of the same files: %s, %v; want %s", format, sum2, err, sum)
		}
	}
	if _, err := writeArchive(filepath.Join(out, "x.rar"), "rar", entries, mtime); err == nil || !strings.Contains(err.Error(), "want tar.gz or zip") {
		t.Errorf("an unknown format: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "x.rar")); !os.IsNotExist(err) {
		t.Errorf("a failed archive is left behind: %v", err)
	}
}

// archived is one entry read back from an archive.
type archived struct {
	name, body, owner string
	mode              os.FileMode
	mtime             time.Time
}

func archiveNames(entries []archived) []string {
	var names []string
	for _, e := range entries {
		names = append(names, e.name)
	}
	return names
}

// readArchive reads every entry of a gzipped tar or a zip, in order.
func readArchive(t *testing.T, format string, b []byte) []archived {
	t.Helper()
	var out []archived
	if format == "zip" {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, archived{name: f.Name, body: string(body), owner: "0:0", mode: f.Mode(), mtime: f.Modified})
		}
		return out
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("the gzip header names %q at %v; want neither", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg {
			t.Errorf("%s: type %c, want a regular file", hdr.Name, hdr.Typeflag)
		}
		owner := fmt.Sprintf("%d:%d%s%s", hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname)
		out = append(out, archived{name: hdr.Name, body: string(body), owner: owner, mode: os.FileMode(hdr.Mode), mtime: hdr.ModTime})
	}
}

// TestChecksumsFile: checksums.txt is GoReleaser's: "<sha256>  <name>"
// lines sorted by name, whatever order the archives were built in.
func TestChecksumsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), ChecksumsFile)
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	arts := []Artifact{
		{Name: "strata_1.2.3_windows_amd64.zip", SHA256: sum("w")},
		{Name: "strata_1.2.3_darwin_arm64.tar.gz", SHA256: sum("d")},
		{Name: "strata_1.2.3_linux_amd64.tar.gz", SHA256: sum("l")},
	}
	if err := writeChecksums(path, arts); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := sum("d") + "  strata_1.2.3_darwin_arm64.tar.gz\n" +
		sum("l") + "  strata_1.2.3_linux_amd64.tar.gz\n" +
		sum("w") + "  strata_1.2.3_windows_amd64.zip\n"
	if string(got) != want {
		t.Errorf("checksums.txt:\n%s\nwant:\n%s", got, want)
	}
}

// TestBuildRefuses: what Build cannot build from is reported before
// anything is built or removed.
func TestBuildRefuses(t *testing.T) {
	root, bare := t.TempDir(), t.TempDir()
	for _, dir := range []string{root, bare} {
		writeFile(t, dir, "go.mod", "module example.com/x\n", 0o644)
		writeFile(t, dir, "action.yml", "name: x\n", 0o644)
	}
	writeFile(t, root, "README.md", "# x\n", 0o644)
	foreign := t.TempDir()
	kept := writeFile(t, foreign, "notes.txt", "mine\n", 0o644)
	good := Options{Root: root, Dist: t.TempDir(), Version: "v1.2.3", Time: time.Unix(1700000000, 0)}
	for _, c := range []struct {
		what string
		edit func(*Options)
		want string
	}{
		{"no version", func(o *Options) { o.Version = "" }, `version "": want a tag`},
		{"a version with a space", func(o *Options) { o.Version = "v1 2" }, `version "v1 2"`},
		{"a version with a slash", func(o *Options) { o.Version = "../v1" }, `version "../v1"`},
		{"no time", func(o *Options) { o.Time = time.Time{} }, "want the commit's time"},
		{"no dist", func(o *Options) { o.Dist = "" }, "no directory for the archives"},
		{"no module", func(o *Options) { o.Root = t.TempDir() }, "no go.mod there"},
		{"no platform", func(o *Options) { o.Platforms = []Platform{} }, "no platform"},
		{"an unknown platform", func(o *Options) { o.Platforms = []Platform{{"plan9", "386"}} }, "plan9/386 is not one"},
		{"no README", func(o *Options) { o.Root = bare }, "README.md is not in"},
		{"a dist of other files", func(o *Options) { o.Dist = foreign }, "holds notes.txt, which is no release archive"},
	} {
		o := good
		c.edit(&o)
		if _, err := Build(context.Background(), o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.what, err, c.want)
		}
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a file of a refused dist is gone: %v", err)
	}
}

// TestPrepareDist: an earlier build's archives and checksums.txt are
// replaced.
func TestPrepareDist(t *testing.T) {
	dist := t.TempDir()
	writeFile(t, dist, "strata_0.1.0_linux_amd64.tar.gz", "old", 0o644)
	writeFile(t, dist, "strata_0.1.0_windows_amd64.zip", "old", 0o644)
	writeFile(t, dist, ChecksumsFile, "old", 0o644)
	if err := prepareDist(dist); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dist); len(left) != 0 {
		t.Errorf("%d files of the earlier build are left", len(left))
	}
	missing := filepath.Join(t.TempDir(), "a", "dist")
	if err := prepareDist(missing); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(missing); err != nil || !info.IsDir() {
		t.Errorf("a missing dist is not made: %v", err)
	}
}
