package engines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countIdentify counts how often binaries are run to identify them.
func countIdentify(in *Installer) *atomic.Int32 {
	var n atomic.Int32
	in.identify = func(ctx context.Context, path string) (identity, error) {
		n.Add(1)
		return identify(ctx, path)
	}
	return &n
}

func TestCacheHitTrustsTheManifest(t *testing.T) {
	in, _ := testInstaller(t)
	seeded := seedCache(t, in)

	fresh := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}, Offline: true}
	runs := countIdentify(fresh)
	e, err := fresh.Install(context.Background(), Spec{Terraform, seeded.Version.String()})
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != SourceCache || e.Path != seeded.Path {
		t.Errorf("got %+v, want the cached %s", e, seeded.Path)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("a cache hit with a matching manifest ran the binary %d times", n)
	}
}

func TestCacheReverifiesAChangedBinary(t *testing.T) {
	in, _ := testInstaller(t)
	seeded := seedCache(t, in)
	// A restored CI cache may not keep modification times.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(seeded.Path, later, later); err != nil {
		t.Fatal(err)
	}

	fresh := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}, Offline: true}
	runs := countIdentify(fresh)
	e, err := fresh.Install(context.Background(), Spec{Terraform, seeded.Version.String()})
	if err != nil || e.Source != SourceCache {
		t.Fatalf("got %+v, %v", e, err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("ran the binary %d times, want 1", n)
	}
	// The new verification is recorded: the next hit runs nothing.
	again := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}, Offline: true}
	runs = countIdentify(again)
	if _, err := again.Install(context.Background(), Spec{Terraform, seeded.Version.String()}); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("after re-verification a hit ran the binary %d times", n)
	}
}

// A cached file that is not the engine it claims to be is refused, and an
// install replaces it.
func TestCacheRefusesAndReplacesABadBinary(t *testing.T) {
	in, _ := testInstaller(t)
	v := needTerraform(t)
	dir := filepath.Join(in.CacheDir, "engines", "terraform", v.String())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	truePath, err := lookTrue()
	if err != nil {
		t.Skip(err)
	}
	if err := copyFile(truePath, filepath.Join(dir, "terraform"), 0o755); err != nil {
		t.Fatal(err)
	}

	_, err = (&Installer{CacheDir: in.CacheDir, SearchPath: []string{}, Offline: true}).
		Install(context.Background(), Spec{Terraform, v.String()})
	wantErrContains(t, err, "cache: cached binary fails verification: ", "is neither terraform nor tofu")

	e, err := in.installWith(context.Background(), copySource{localTerraform}, Terraform, v)
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != filepath.Join(dir, "terraform") || fileSHA256(t, e.Path) != fileSHA256(t, localTerraform) {
		t.Errorf("the bad binary was not replaced: %+v", e)
	}
	assertNoDebris(t, filepath.Dir(dir))
}

// What a crash leaves (a staging directory with half a binary) is never
// taken for an engine, and the next install of that version removes it.
func TestCacheIgnoresAndClearsCrashDebris(t *testing.T) {
	in, _ := testInstaller(t)
	v := needTerraform(t)
	engines := filepath.Join(in.CacheDir, "engines", "terraform")
	debris := filepath.Join(engines, ".tmp-"+v.String()+"-123")
	if err := os.MkdirAll(debris, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(localTerraform)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(debris, "terraform"), b[:len(b)/3], 0o755); err != nil {
		t.Fatal(err)
	}

	_, err = (&Installer{CacheDir: in.CacheDir, SearchPath: []string{}, Offline: true}).
		Install(context.Background(), Spec{Terraform, v.String()})
	wantErrContains(t, err, "cache: "+filepath.Join(engines, v.String(), "terraform")+" does not exist")
	if got := in.cachedVersions(Terraform); len(got) != 0 {
		t.Errorf("debris listed as cached versions: %v", got)
	}

	seedCache(t, in)
	if _, err := os.Stat(debris); !os.IsNotExist(err) {
		t.Errorf("debris survived an install: %v", err)
	}
}

func TestCachedVersionsSkipsOtherEntries(t *testing.T) {
	in, _ := testInstaller(t)
	dir := filepath.Join(in.CacheDir, "engines", "tofu")
	for _, d := range []string{"1.8.8", "1.6.3", ".tmp-1.9.0-1", "v1.7.0", "junk"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "versions.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range in.cachedVersions(Tofu) {
		got = append(got, v.String())
	}
	if strings.Join(got, " ") != "1.6.3 1.8.8" {
		t.Errorf("cached versions %q", got)
	}
}

// lookTrue finds a real program that is not an engine: it runs, exits 0
// and prints nothing.
func lookTrue() (string, error) {
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}
