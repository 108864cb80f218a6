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
	"github.com/opentofu/tofudl"
)

// defaultTofuReleases names tofudl's default source in messages.
const defaultTofuReleases = "https://get.opentofu.org/tofu/api.json"

// tofuSource downloads tofu through tofudl from OpenTofu's releases or from
// a mirror in tofudl's layout (TofuMirror: <base>/api.json and
// <base>/v<version>/<artifact>), checking the SHA256SUMS signature (the
// OpenTofu key, or TofuMirrorKey) and the archive's checksum. It always
// hands tofudl the Installer's HTTP client: without one, tofudl changes
// http.DefaultTransport for the whole process.
type tofuSource struct{ in *Installer }

func (tofuSource) kind() string   { return SourceDownload }
func (tofuSource) installs() bool { return true }

func (t tofuSource) usable(name string, _ *version.Version) error {
	if name != Tofu {
		return fmt.Errorf("tofudl downloads tofu, not %s", name)
	}
	if t.in.Offline {
		return errOffline
	}
	return nil
}

func (t tofuSource) where() string {
	if t.in.TofuMirror != "" {
		return strings.TrimRight(t.in.TofuMirror, "/")
	}
	return defaultTofuReleases
}

func (t tofuSource) downloader() (tofudl.Downloader, error) {
	opts := []tofudl.ConfigOpt{tofudl.ConfigHTTPClient(t.in.httpClient())}
	if t.in.TofuMirror != "" {
		base := strings.TrimRight(t.in.TofuMirror, "/")
		opts = append(opts,
			tofudl.ConfigAPIURL(base+"/api.json"),
			tofudl.ConfigDownloadMirrorURLTemplate(base+"/v{{ .Version }}/{{ .Artifact }}"),
		)
	}
	if t.in.TofuMirrorKey != "" {
		opts = append(opts, tofudl.ConfigGPGKey(t.in.TofuMirrorKey))
	}
	return tofudl.New(opts...)
}

func (t tofuSource) get(ctx context.Context, _ string, v *version.Version, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.in.downloadTimeout())
	defer cancel()
	t.in.progress(fmt.Sprintf("downloading tofu %s from %s", v, t.where()))
	dl, err := t.downloader()
	if err != nil {
		return "", err
	}
	versions, err := dl.ListVersions(ctx)
	if err != nil {
		return "", fmt.Errorf("listing versions at %s: %w", t.where(), err)
	}
	want := tofudl.Version(v.String())
	var found *tofudl.VersionWithArtifacts
	for i := range versions {
		if versions[i].ID == want {
			found = &versions[i]
			break
		}
	}
	if found == nil {
		return "", fmt.Errorf("%s does not list version %s", t.where(), v)
	}
	bin, err := dl.DownloadVersion(ctx, *found, tofudl.PlatformAuto, tofudl.ArchitectureAuto)
	if err != nil {
		return "", fmt.Errorf("from %s: %w", t.where(), t.explain(ctx, dl, *found, err))
	}
	path := filepath.Join(dir, binaryName(Tofu))
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		return "", err
	}
	return path, nil
}

// emptySHA256 is the checksum of no bytes.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// explain restores the cause tofudl v0.0.1 drops: when fetching the archive
// fails for any reason but a missing artifact, it verifies an empty archive
// and reports a checksum mismatch. Fetching the archive again gives the
// real error.
func (t tofuSource) explain(ctx context.Context, dl tofudl.Downloader, ver tofudl.VersionWithArtifacts, err error) error {
	var corrupted *tofudl.ArtifactCorruptedError
	if !errors.As(err, &corrupted) || !strings.Contains(err.Error(), emptySHA256) {
		return err
	}
	archive := fmt.Sprintf("tofu_%s_%s_%s.tar.gz", ver.ID, runtime.GOOS, runtime.GOARCH)
	if _, derr := dl.DownloadArtifact(ctx, ver, archive); derr != nil {
		return fmt.Errorf("downloading %s: %w", archive, derr)
	}
	return err
}

// list returns every tofu version the releases API or mirror lists.
func (t tofuSource) list(ctx context.Context) ([]*version.Version, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	dl, err := t.downloader()
	if err != nil {
		return nil, err
	}
	versions, err := dl.ListVersions(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing tofu versions at %s: %w", t.where(), err)
	}
	vs := make([]*version.Version, 0, len(versions))
	for _, tv := range versions {
		if v, err := version.NewVersion(string(tv.ID)); err == nil {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("listing tofu versions at %s: no versions listed", t.where())
	}
	return vs, nil
}
