package engines

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
)

// defaultTerraformReleases is where hc-install downloads from without a
// mirror.
const defaultTerraformReleases = "https://releases.hashicorp.com"

// hashicorpSource downloads terraform through hc-install from the HashiCorp
// releases API or a mirror in its layout (TerraformMirror), checking the
// SHA256SUMS signature (HashiCorp's key, or TerraformMirrorKey) and the
// archive's checksum. It installs into the staging directory it is given
// and never calls hc-install's Remove, which would delete the binary.
type hashicorpSource struct{ in *Installer }

func (hashicorpSource) kind() string   { return SourceDownload }
func (hashicorpSource) installs() bool { return true }

func (h hashicorpSource) usable(name string, _ *version.Version) error {
	if name != Terraform {
		return fmt.Errorf("hc-install downloads terraform, not %s", name)
	}
	if h.in.Offline {
		return errOffline
	}
	return nil
}

func (h hashicorpSource) where() string {
	if h.in.TerraformMirror != "" {
		return strings.TrimRight(h.in.TerraformMirror, "/")
	}
	return defaultTerraformReleases
}

func (h hashicorpSource) get(ctx context.Context, _ string, v *version.Version, dir string) (string, error) {
	h.in.progress(fmt.Sprintf("downloading terraform %s from %s", v, h.where()))
	ev := &releases.ExactVersion{
		Product:          product.Terraform,
		Version:          v,
		InstallDir:       dir,
		Timeout:          h.in.downloadTimeout(),
		ArmoredPublicKey: h.in.TerraformMirrorKey,
		HTTPClient:       h.in.httpClient(),
	}
	if h.in.TerraformMirror != "" {
		ev.ApiBaseURL = h.where()
	}
	var trace hcLog
	ev.SetLogger(log.New(&trace, "", 0))
	bin, err := ev.Install(ctx)
	if err != nil {
		return "", fmt.Errorf("from %s: %w", h.where(), trace.explain(err))
	}
	return bin, nil
}

// hcLog keeps hc-install's log lines. In hc-install v0.10.0 the deferred
// cleanup in DownloadAndUnpack overwrites its named error result, so a
// checksum mismatch, a short read or a corrupt zip returns no error and
// Install fails later at chmod of a binary that was never unpacked; the
// log holds the only trace of the cause.
type hcLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *hcLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < 200 {
		l.lines = append(l.lines, strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

var checksumLineRe = regexp.MustCompile(`checksum does not match for "([^"]+)" \(expected: [0-9a-f]+, got: ([0-9a-f]+)\)`)

// explain replaces the misleading chmod error of a lost download failure
// with the cause hc-install logged.
func (l *hcLog) explain(err error) error {
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) || pathErr.Op != "chmod" || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if m := checksumLineRe.FindStringSubmatch(line); m != nil {
			return fmt.Errorf("checksum mismatch: %s does not match its entry in the signed SHA256SUMS (its sha256 is %s)", m[1], m[2])
		}
		if strings.HasPrefix(line, "failed to calculate hash of") {
			return fmt.Errorf("downloading the archive: %s", line)
		}
	}
	last := "nothing"
	if n := len(l.lines); n > 0 {
		last = fmt.Sprintf("%q", l.lines[n-1])
	}
	return fmt.Errorf("the archive was downloaded but not unpacked (hc-install lost the reason; its last log line was %s)", last)
}

// list returns every terraform version the releases API or mirror lists.
func (h hashicorpSource) list(ctx context.Context) ([]*version.Version, error) {
	lister := &releases.Versions{
		Product:     product.Terraform,
		ListTimeout: listTimeout,
		HTTPClient:  h.in.httpClient(),
	}
	if h.in.TerraformMirror != "" {
		lister.ApiBaseURL = h.where()
	}
	srcs, err := lister.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing terraform versions at %s: %w", h.where(), err)
	}
	vs := make([]*version.Version, 0, len(srcs))
	for _, s := range srcs {
		if ev, ok := s.(*releases.ExactVersion); ok {
			vs = append(vs, ev.Version)
		}
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("listing terraform versions at %s: no versions listed", h.where())
	}
	return vs, nil
}

var errOffline = errors.New("offline (STRATA_ENGINES_OFFLINE)")
