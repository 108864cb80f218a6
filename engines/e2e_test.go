package engines

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestE2EBuildEngines builds terraform 1.5.7 and tofu 1.8.8 from the Go
// module proxy into $STRATA_CACHE_DIR (default <user cache dir>/strata),
// which CI keeps between runs, so only the first run builds (3–8 minutes
// each on two cores). It then resolves both from the cache with a fresh
// Installer, as the next strata command would, and checks each binary by
// running it. Run it with "make test-engines".
func TestE2EBuildEngines(t *testing.T) {
	if os.Getenv("STRATA_E2E_ENGINES") != "1" {
		t.Skip("set STRATA_E2E_ENGINES=1 (make test-engines) to build engines from the Go module proxy")
	}
	in, err := NewInstallerFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	// Downloads off and an empty search path: the engines come from the
	// cache or from a build, nothing else.
	in.Build, in.Offline, in.SearchPath = true, true, []string{}
	in.Progress = func(s string) { t.Log(s) }
	in.Warn = func(s string) { t.Log("warning:", s) }
	t.Logf("cache: %s", in.CacheDir)

	specs := []Spec{{Terraform, "1.5.7"}, {Tofu, "1.8.8"}}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	start := time.Now()
	built, err := in.Resolve(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		e := built[s]
		if e.Source != SourceBuild && e.Source != SourceCache {
			t.Errorf("%s came from %s", s, e.Source)
		}
		t.Logf("%s: %s (%s)", s, e.Path, e.Source)
	}
	t.Logf("first resolve took %s", time.Since(start).Round(time.Second))

	next := &Installer{CacheDir: in.CacheDir, Offline: true, SearchPath: []string{}}
	start = time.Now()
	cached, err := next.Resolve(ctx, append(specs, Spec{Tofu, "~> 1.8.0"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resolving from the cache took %s", time.Since(start))
	for _, s := range specs {
		e := cached[s]
		if e.Source != SourceCache || e.Path != built[s].Path {
			t.Errorf("%s: %+v, want the cached %s", s, e, built[s].Path)
		}
		id, err := identify(ctx, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := id.check(e.Path, s.Name, e.Version); err != nil {
			t.Error(err)
		}
		t.Logf("%s reports %s %s", e.Path, id.name, id.version)
	}
	if e := cached[Spec{Tofu, "~> 1.8.0"}]; e == nil || e.Version.String() != "1.8.8" {
		t.Errorf("tofu ~> 1.8.0 offline: %+v", e)
	}

	// The tofudl download path with a real tofu: package the built binary
	// into a signed loopback mirror and install it into a fresh cache, with
	// verification by "version -json" as in production.
	t.Run("tofu through a tofudl mirror", func(t *testing.T) {
		priv, pub := testKeys(t)
		storage := filepath.Join(t.TempDir(), "mirror")
		if err := buildTofuStorage(storage, "1.8.8", built[Spec{Tofu, "1.8.8"}].Path, priv, pub); err != nil {
			t.Fatal(err)
		}
		m := newTofuMirror(t, storage, pub)
		fresh, _ := testInstaller(t)
		fresh.TofuMirror, fresh.TofuMirrorKey = m.URL, pub
		e, err := fresh.Install(ctx, Spec{Tofu, "1.8.8"})
		if err != nil {
			t.Fatal(err)
		}
		if e.Source != SourceDownload || e.Name != Tofu || e.Version.String() != "1.8.8" {
			t.Errorf("got %+v", e)
		}
	})
}
