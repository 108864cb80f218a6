package engines

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/hashicorp/go-version"
	"golang.org/x/sync/singleflight"

	"github.com/strata-iac/strata/internal/filelock"
)

// Defaults of NewInstallerFromEnv and of an Installer's zero fields.
const (
	DefaultListTTL         = time.Hour
	DefaultDownloadTimeout = 10 * time.Minute
	DefaultBuildTimeout    = 45 * time.Minute
	listTimeout            = time.Minute
)

// Installer resolves and installs engines. Its exported fields configure
// it; NewInstallerFromEnv fills them from the environment and tests set
// them directly. An Installer is safe for concurrent use once configured.
type Installer struct {
	// CacheDir is strata's cache root; engines live under CacheDir/engines.
	CacheDir string
	// HTTPClient makes every download and listing request. Nil means a
	// client with connection, TLS and response-header timeouts; requests
	// are bounded by DownloadTimeout or a one-minute listing timeout.
	HTTPClient *http.Client

	// TerraformMirror is the base URL of a mirror in the layout of
	// releases.hashicorp.com (hc-install's ApiBaseURL); empty means
	// HashiCorp's releases. TerraformMirrorKey is the armored public key its
	// SHA256SUMS are signed with; empty means HashiCorp's key.
	TerraformMirror    string
	TerraformMirrorKey string
	// TofuMirror is the base URL of a mirror in tofudl's layout
	// (<base>/api.json, <base>/v<version>/<artifact>); empty means
	// OpenTofu's releases. TofuMirrorKey is the armored public key its
	// SHA256SUMS are signed with; empty means OpenTofu's key.
	TofuMirror    string
	TofuMirrorKey string

	// Build enables building engines from the Go module proxy after the
	// other sources fail.
	Build bool
	// GoCommand is the go command Build runs; empty means "go" on PATH.
	GoCommand string
	// Offline skips listing versions and downloading.
	Offline bool
	// SearchPath lists the directories the path source searches; nil means
	// PATH followed by well-known directories (/usr/local/bin, …).
	SearchPath []string
	// ListTTL is how long a version listing saved in the cache is reused
	// to resolve constraints and "latest"; zero or less lists every time.
	ListTTL time.Duration

	// DownloadTimeout bounds one download (listing, signature, checksums
	// and archive); zero means DefaultDownloadTimeout. BuildTimeout bounds
	// one build; zero means DefaultBuildTimeout.
	DownloadTimeout time.Duration
	BuildTimeout    time.Duration

	// Warn receives warnings (a constraint resolved offline, a cache entry
	// that could not be annotated); nil drops them. Progress receives notes
	// on slow work (downloads, builds, waiting for another process's
	// install); nil drops them. Calls are serialised.
	Warn     func(string)
	Progress func(string)

	// identify names a binary; nil means identify. Tests replace it.
	identify func(ctx context.Context, path string) (identity, error)

	identities sync.Map // binary state → identity
	installs   singleflight.Group
	listings   singleflight.Group
	mu         sync.Mutex // guards listed and client
	listed     map[string]listResult
	client     *http.Client
	notify     sync.Mutex // serialises Warn and Progress
}

// Environment variables NewInstallerFromEnv reads.
const (
	envCacheDir           = "STRATA_CACHE_DIR"
	envTerraformMirror    = "STRATA_TERRAFORM_MIRROR"
	envTerraformMirrorKey = "STRATA_TERRAFORM_MIRROR_KEY"
	envTofuMirror         = "STRATA_TOFU_MIRROR"
	envTofuMirrorKey      = "STRATA_TOFU_MIRROR_KEY"
	envEngineBuild        = "STRATA_ENGINE_BUILD"
	envOffline            = "STRATA_ENGINES_OFFLINE"
)

// NewInstallerFromEnv returns an Installer configured from the environment:
//
//	STRATA_CACHE_DIR              cache root (default <user cache dir>/strata)
//	STRATA_TERRAFORM_MIRROR       releases.hashicorp.com-layout mirror base URL
//	STRATA_TERRAFORM_MIRROR_KEY   its armored public key, or a file holding it
//	STRATA_TOFU_MIRROR            tofudl-layout mirror base URL
//	STRATA_TOFU_MIRROR_KEY        its armored public key, or a file holding it
//	STRATA_ENGINE_BUILD=go        build from the Go module proxy as a last resort
//	STRATA_ENGINES_OFFLINE=1      never list versions or download
func NewInstallerFromEnv() (*Installer, error) {
	return NewInstallerFromLookup(os.Getenv)
}

// NewInstallerFromLookup is NewInstallerFromEnv reading the variables with
// getenv: a caller running with an environment of its own (strata's
// Options.Environ) passes a lookup into it.
func NewInstallerFromLookup(getenv func(string) string) (*Installer, error) {
	root, err := CacheDirFrom(getenv)
	if err != nil {
		return nil, err
	}
	in := &Installer{CacheDir: root, ListTTL: DefaultListTTL}
	if in.TerraformMirror, err = mirrorFromEnv(getenv, envTerraformMirror); err != nil {
		return nil, err
	}
	if in.TofuMirror, err = mirrorFromEnv(getenv, envTofuMirror); err != nil {
		return nil, err
	}
	if in.TerraformMirrorKey, err = keyFromEnv(getenv, envTerraformMirrorKey); err != nil {
		return nil, err
	}
	if in.TofuMirrorKey, err = keyFromEnv(getenv, envTofuMirrorKey); err != nil {
		return nil, err
	}
	switch b := getenv(envEngineBuild); b {
	case "":
	case "go":
		in.Build = true
	default:
		return nil, fmt.Errorf("%s=%q: the only build method is \"go\"", envEngineBuild, b)
	}
	switch o := getenv(envOffline); strings.ToLower(o) {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		in.Offline = true
	default:
		return nil, fmt.Errorf("%s=%q: want 1 or 0", envOffline, o)
	}
	return in, nil
}

// CacheDirFromEnv returns strata's cache root: $STRATA_CACHE_DIR, else
// <user cache dir>/strata.
func CacheDirFromEnv() (string, error) {
	return CacheDirFrom(os.Getenv)
}

// CacheDirFrom is CacheDirFromEnv reading STRATA_CACHE_DIR with getenv.
func CacheDirFrom(getenv func(string) string) (string, error) {
	if d := getenv(envCacheDir); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: set %s (%w)", envCacheDir, err)
	}
	return filepath.Join(base, "strata"), nil
}

func mirrorFromEnv(getenv func(string) string, key string) (string, error) {
	v := strings.TrimRight(getenv(key), "/")
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s=%q: want an http or https base URL", key, v)
	}
	return v, nil
}

// keyFromEnv reads an armored public key from the variable, or from the
// file the variable names, and checks that it parses.
func keyFromEnv(getenv func(string) string, key string) (string, error) {
	v := getenv(key)
	if v == "" {
		return "", nil
	}
	armored := v
	if !strings.Contains(v, "-----BEGIN PGP") {
		b, err := os.ReadFile(v)
		if err != nil {
			return "", fmt.Errorf("%s: neither an armored public key nor a readable file: %w", key, err)
		}
		armored = string(b)
	}
	if _, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armored)); err != nil {
		return "", fmt.Errorf("%s: not an armored OpenPGP public key: %w", key, err)
	}
	return armored, nil
}

// Install resolves spec to one version and returns a verified binary of it.
// A constraint or "latest" resolves to the highest matching version the
// releases API or mirror lists; when listing fails, to the highest matching
// version in the cache or on the search path, with a warning. Errors name
// the engine and version; *UnavailableError lists every source tried.
func (in *Installer) Install(ctx context.Context, spec Spec) (*Engine, error) {
	if err := checkName(spec.Name); err != nil {
		return nil, err
	}
	req, err := parseRequirement(spec.Version)
	if err != nil {
		return nil, err
	}
	v, found, err := in.resolveVersion(ctx, spec, req)
	if err != nil {
		return nil, err
	}
	if found != nil {
		return found, nil
	}
	e, err := in.obtain(ctx, spec.Name, v)
	if err != nil && req.exact == nil {
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	return e, err
}

// Resolve installs every distinct spec once, all in parallel, and returns
// the engine of each. When some fail, the map holds the others and the
// error joins every failure, in the order of the specs.
func (in *Installer) Resolve(ctx context.Context, specs []Spec) (map[Spec]*Engine, error) {
	var distinct []Spec
	for _, s := range specs {
		if !slices.Contains(distinct, s) {
			distinct = append(distinct, s)
		}
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		engines = make(map[Spec]*Engine, len(distinct))
		errs    = make([]error, len(distinct))
	)
	for i, s := range distinct {
		wg.Go(func() {
			e, err := in.Install(ctx, s)
			if err != nil {
				errs[i] = err
				return
			}
			mu.Lock()
			engines[s] = e
			mu.Unlock()
		})
	}
	wg.Wait()
	return engines, errors.Join(errs...)
}

// obtain returns name at v from the first source that has it; concurrent
// requests for one version share one attempt.
func (in *Installer) obtain(ctx context.Context, name string, v *version.Version) (*Engine, error) {
	r, err, _ := in.installs.Do(name+"@"+v.String(), func() (any, error) {
		return in.obtainOnce(ctx, name, v)
	})
	if err != nil {
		return nil, err
	}
	return r.(*Engine), nil
}

func (in *Installer) sources(name string) []source {
	var download source = hashicorpSource{in}
	if name == Tofu {
		download = tofuSource{in}
	}
	return []source{cacheSource{in}, pathSource{in}, download, goBuildSource{in}}
}

func (in *Installer) obtainOnce(ctx context.Context, name string, v *version.Version) (*Engine, error) {
	var attempts []Attempt
	for _, s := range in.sources(name) {
		if err := s.usable(name, v); err != nil {
			attempts = append(attempts, Attempt{Source: s.kind(), Err: err})
			continue
		}
		var (
			e   *Engine
			err error
		)
		if s.installs() {
			e, err = in.installWith(ctx, s, name, v)
		} else {
			var path string
			if path, err = s.get(ctx, name, v, ""); err == nil {
				e = &Engine{Name: name, Version: v, Path: path, Source: s.kind()}
			}
		}
		if err == nil {
			return e, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %s: %w", name, v, s.kind(), ctx.Err())
		}
		attempts = append(attempts, Attempt{Source: s.kind(), Err: err})
	}
	return nil, &UnavailableError{Name: name, Version: v.String(), Attempts: attempts}
}

// installWith runs an installing source under the version's lock: the
// binary is put down in a staging directory inside the cache, verified,
// and the directory renamed into place, so the final path only ever holds
// a verified binary.
func (in *Installer) installWith(ctx context.Context, s source, name string, v *version.Version) (*Engine, error) {
	if in.CacheDir == "" {
		return nil, errors.New("no cache directory to install into")
	}
	dir := in.engineDir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock := filepath.Join(dir, "."+v.String()+".lock")
	held, err := filelock.Acquire(ctx, lock, func() {
		in.progress(fmt.Sprintf("waiting for another strata process to install %s %s (%s)", name, v, lock))
	})
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", lock, err)
	}
	defer held.Release()

	// Another process may have installed this version while we waited.
	if path, err := (cacheSource{in}).get(ctx, name, v, ""); err == nil {
		return &Engine{Name: name, Version: v, Path: path, Source: SourceCache}, nil
	}
	removeDebris(dir, v)
	staging, err := os.MkdirTemp(dir, ".tmp-"+v.String()+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)

	bin, err := s.get(ctx, name, v, staging)
	if err != nil {
		return nil, err
	}
	return in.place(ctx, s.kind(), name, v, staging, bin)
}

// place verifies the binary a source put in staging, records the
// verification and renames staging to the version's directory.
func (in *Installer) place(ctx context.Context, kind, name string, v *version.Version, staging, bin string) (*Engine, error) {
	want := filepath.Join(staging, binaryName(name))
	if bin != want {
		if err := os.Rename(bin, want); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(want, 0o755); err != nil {
		return nil, err
	}
	if err := syncPath(want); err != nil {
		return nil, err
	}
	id, err := in.identifyBinary(ctx, want)
	if err == nil {
		err = id.check(want, name, v)
	}
	if err != nil {
		return nil, fmt.Errorf("the %s binary fails verification: %w", verbed(kind), err)
	}
	fi, err := os.Stat(want)
	if err != nil {
		return nil, err
	}
	if err := writeManifest(staging, name, v, fi, kind); err != nil {
		return nil, err
	}
	// MkdirTemp made staging private; the installed version is for everyone
	// who shares the cache.
	if err := os.Chmod(staging, 0o755); err != nil {
		return nil, err
	}
	syncPath(staging)

	final := in.versionDir(name, v)
	if _, err := os.Lstat(final); err == nil {
		// The cache source rejected what is there (no binary, or one that
		// fails verification); we hold the lock, so move it aside.
		old, err := os.MkdirTemp(filepath.Dir(final), ".old-"+v.String()+"-")
		if err != nil {
			return nil, err
		}
		if err := os.Rename(final, filepath.Join(old, "v")); err != nil {
			os.Remove(old)
			return nil, fmt.Errorf("replacing %s: %w", final, err)
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(staging, final); err != nil {
		return nil, err
	}
	syncPath(filepath.Dir(final))
	return &Engine{Name: name, Version: v, Path: filepath.Join(final, binaryName(name)), Source: kind}, nil
}

func verbed(kind string) string {
	switch kind {
	case SourceDownload:
		return "downloaded"
	case SourceBuild:
		return "built"
	}
	return kind
}

// removeDebris deletes what crashed installs of v left behind. Only the
// holder of v's lock writes these, so with the lock held nobody is using
// them.
func removeDebris(dir string, v *version.Version) {
	for _, pattern := range []string{".tmp-" + v.String() + "-*", ".old-" + v.String() + "-*"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, m := range matches {
			os.RemoveAll(m)
		}
	}
}

// syncPath flushes a file or directory to disk, so a rename that follows
// cannot outlive the data it names after a power loss.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (in *Installer) httpClient() *http.Client {
	if in.HTTPClient != nil {
		return in.HTTPClient
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.client == nil {
		in.client = newHTTPClient()
	}
	return in.client
}

// newHTTPClient bounds every phase of a request but reading the body;
// contexts bound whole downloads.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          10,
		ForceAttemptHTTP2:     true,
	}}
}

func (in *Installer) downloadTimeout() time.Duration {
	if in.DownloadTimeout > 0 {
		return in.DownloadTimeout
	}
	return DefaultDownloadTimeout
}

func (in *Installer) buildTimeout() time.Duration {
	if in.BuildTimeout > 0 {
		return in.BuildTimeout
	}
	return DefaultBuildTimeout
}

func (in *Installer) warn(msg string) {
	in.notify.Lock()
	defer in.notify.Unlock()
	if in.Warn != nil {
		in.Warn(msg)
	}
}

func (in *Installer) progress(msg string) {
	in.notify.Lock()
	defer in.notify.Unlock()
	if in.Progress != nil {
		in.Progress(msg)
	}
}
