package engines

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHashicorpMirrorInstall(t *testing.T) {
	v := needTerraform(t)
	m := newHashicorpMirror(t)
	_, pub := testKeys(t)
	in, _ := testInstaller(t)
	in.TerraformMirror, in.TerraformMirrorKey = m.URL, pub

	e, err := in.Install(context.Background(), Spec{Terraform, v.String()})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(in.CacheDir, "engines", "terraform", v.String(), "terraform")
	if e.Path != want || e.Source != SourceDownload || !e.Version.Equal(v) {
		t.Fatalf("got %+v, want %s from download", e, want)
	}
	if got, want := fileSHA256(t, e.Path), fileSHA256(t, localTerraform); got != want {
		t.Errorf("installed binary differs from the one the mirror served")
	}
	id, err := identify(context.Background(), e.Path)
	if err != nil || id.name != Terraform || !id.version.Equal(v) {
		t.Errorf("installed binary identifies as %+v, %v", id, err)
	}
	// Only the version directory (with the manifest), its lock and no
	// staging debris remain.
	if got := entries(t, filepath.Dir(filepath.Dir(e.Path))); !slices.Equal(got, []string{"." + v.String() + ".lock", v.String()}) {
		t.Errorf("cache holds %q", got)
	}
	if m, err := readManifest(filepath.Dir(e.Path)); err != nil || m.Source != SourceDownload {
		t.Errorf("manifest %+v, %v", m, err)
	}
	if fi, err := os.Stat(filepath.Dir(e.Path)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("version directory mode %v, %v", fi.Mode(), err)
	}

	// The second install is a cache hit; the mirror is not asked again.
	e2, err := in.Install(context.Background(), Spec{Terraform, v.String()})
	if err != nil || e2.Source != SourceCache || e2.Path != e.Path {
		t.Fatalf("second install: %+v, %v", e2, err)
	}
	if n := m.archiveRequests.Load(); n != 1 {
		t.Errorf("archive fetched %d times, want 1", n)
	}
}

func TestHashicorpMirrorFailures(t *testing.T) {
	v := needTerraform(t).String()
	_, pub := testKeys(t)
	other := otherPublicKey(t)
	tests := []mirrorFailure{{
		name: "tampered archive",
		setup: func(m *mirror) {
			m.rewrite = func(name string, b []byte) []byte {
				if strings.HasSuffix(name, ".zip") {
					return flipByte(b)
				}
				return b
			}
		},
		want: []string{"checksum mismatch"},
	}, {
		name: "SHA256SUMS rewritten to match a tampered archive",
		setup: func(m *mirror) {
			m.rewrite = func(name string, b []byte) []byte {
				if strings.HasSuffix(name, "_SHA256SUMS") {
					return flipByte(b)
				}
				return b
			}
		},
		want: []string{"unable to verify checksums signature"},
	}, {
		name: "signed by a key other than the configured one",
		key:  other,
		want: []string{"unable to verify checksums signature", "signature made by unknown entity"},
	}, {
		name:    "missing version",
		version: "9.9.9",
		want:    []string{"terraform 9.9.9 is not available", "/terraform/9.9.9/index.json", "404 Not Found"},
	}, {
		name:   "unreachable mirror",
		mirror: func() string { return closedURL(t) },
		want:   []string{"connection refused"},
	}, {
		name:  "archive served with the wrong content type",
		setup: func(m *mirror) { m.zipType = "application/octet-stream" },
		want:  []string{"unexpected content-type: application/octet-stream"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newHashicorpMirror(t)
			if tt.setup != nil {
				m.set(tt.setup)
			}
			in, _ := testInstaller(t)
			in.TerraformMirror, in.TerraformMirrorKey = m.URL, pub
			if tt.mirror != nil {
				in.TerraformMirror = tt.mirror()
			}
			if tt.key != "" {
				in.TerraformMirrorKey = tt.key
			}
			want := tt.versionOr(v)
			ue := installFails(t, in, Spec{Terraform, want}, append([]string{
				"terraform " + want + " is not available",
				"\n  cache: ",
				"\n  path: no terraform executable in the search path (empty)",
				"\n  download: from " + in.TerraformMirror + ": ",
				"\n  build: not enabled: set STRATA_ENGINE_BUILD=go",
			}, tt.want...))
			// Every source is listed, in order, with its reason.
			var kinds []string
			for _, a := range ue.Attempts {
				kinds = append(kinds, a.Source)
			}
			if !slices.Equal(kinds, []string{"cache", "path", "download", "build"}) {
				t.Errorf("attempts %q", kinds)
			}
		})
	}
}

// mirrorFailure is a way an engine's mirror fails an install, and what
// the error then says.
type mirrorFailure struct {
	name    string
	version string          // to install; "" for the local terraform's
	key     string          // the mirror's signing key, when not the tests'
	setup   func(m *mirror) // changes what the mirror serves
	mirror  func() string   // the mirror's URL, when not the mirror's own
	want    []string
}

func (f mirrorFailure) versionOr(v string) string {
	if f.version != "" {
		return f.version
	}
	return v
}

// installFails installs spec with in and checks that it fails with an
// *UnavailableError saying every part of want, leaving neither the
// version directory nor staging debris in the cache.
func installFails(t *testing.T, in *Installer, spec Spec, want []string) *UnavailableError {
	t.Helper()
	_, err := in.Install(context.Background(), spec)
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("want *UnavailableError, got %v", err)
	}
	wantErrContains(t, err, want...)
	dir := filepath.Join(in.CacheDir, "engines", spec.Name)
	if _, err := os.Stat(filepath.Join(dir, spec.Version)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed install left the version directory: %v", err)
	}
	assertNoDebris(t, dir)
	return ue
}

// assertNoDebris fails when staging or replaced directories remain.
func assertNoDebris(t testing.TB, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range des {
		if strings.HasPrefix(d.Name(), ".tmp-") || strings.HasPrefix(d.Name(), ".old-") {
			t.Errorf("debris left in the cache: %s", d.Name())
		}
	}
}

func TestHashicorpListing(t *testing.T) {
	needTerraformNewerThanListed(t)
	needTerraform(t)
	m := newHashicorpMirror(t)
	in, _ := testInstaller(t)
	in.TerraformMirror = m.URL
	vs, err := hashicorpSource{in}.list(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1+len(listedOnly) {
		t.Errorf("listed %v", vs)
	}
	in.TerraformMirror = closedURL(t)
	_, err = hashicorpSource{in}.list(context.Background())
	wantErrContains(t, err, "listing terraform versions at "+in.TerraformMirror, "connection refused")
}
