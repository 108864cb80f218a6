package engines

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tofu mirror tests serve the local terraform binary packaged as a tofu
// release (no tofu exists on a test machine; the end-to-end test repeats
// this with a real tofu it builds). tofudl's download, signature and
// checksum checks run for real either way. Verification by "version -json"
// then says the binary is terraform, which the first test shows; the second
// swaps in relabel, which still runs the binary but calls terraform tofu,
// to show the rest of the install.

func TestTofuMirrorDownloadIsVerifiedByRunningIt(t *testing.T) {
	v := needTerraform(t).String()
	_, pub := testKeys(t)
	m := newTofuMirror(t, tofuStorage(t), pub)
	in, _ := testInstaller(t)
	in.TofuMirror, in.TofuMirrorKey = m.URL, pub

	_, err := in.Install(context.Background(), Spec{Tofu, v})
	// tofudl fetched and accepted the archive (signature and checksum), and
	// the installer's own check caught what the binary really is.
	if n := m.archiveRequests.Load(); n != 1 {
		t.Errorf("archive fetched %d times, want 1", n)
	}
	wantErrContains(t, err,
		"tofu "+v+" is not available",
		"download: the downloaded binary fails verification: ",
		"is terraform "+v+", not tofu "+v,
	)
	if _, err := os.Stat(filepath.Join(in.CacheDir, "engines", "tofu", v)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a binary that failed verification reached the cache: %v", err)
	}
	assertNoDebris(t, filepath.Join(in.CacheDir, "engines", "tofu"))
}

func TestTofuMirrorInstall(t *testing.T) {
	v := needTerraform(t)
	_, pub := testKeys(t)
	m := newTofuMirror(t, tofuStorage(t), pub)
	in, _ := testInstaller(t)
	in.TofuMirror, in.TofuMirrorKey = m.URL, pub
	in.identify = relabel // the served binary is terraform; see above

	e, err := in.Install(context.Background(), Spec{Tofu, v.String()})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(in.CacheDir, "engines", "tofu", v.String(), "tofu")
	if e.Path != want || e.Source != SourceDownload || e.Name != Tofu || !e.Version.Equal(v) {
		t.Fatalf("got %+v, want %s from download", e, want)
	}
	if got, want := fileSHA256(t, e.Path), fileSHA256(t, localTerraform); got != want {
		t.Errorf("installed binary differs from the one the mirror packaged")
	}
	fi, err := os.Stat(e.Path)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("installed binary mode %v, %v", fi.Mode(), err)
	}
	e2, err := in.Install(context.Background(), Spec{Tofu, v.String()})
	if err != nil || e2.Source != SourceCache {
		t.Fatalf("second install: %+v, %v", e2, err)
	}
}

func TestTofuMirrorFailures(t *testing.T) {
	v := needTerraform(t).String()
	_, pub := testKeys(t)
	other := otherPublicKey(t)
	storage := tofuStorage(t)
	tests := []mirrorFailure{{
		name: "tampered archive",
		setup: func(m *mirror) {
			m.rewrite = func(name string, b []byte) []byte {
				if strings.HasSuffix(name, ".tar.gz") {
					return flipByte(b)
				}
				return b
			}
		},
		want: []string{"Corrupted artifact tofu_" + v, "invalid checksum"},
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
		want: []string{"Invalid signature: Signature verification failed"},
	}, {
		name: "signed by a key other than the configured one",
		key:  other,
		want: []string{"Invalid signature: Signature verification failed"},
	}, {
		name:    "missing version",
		version: "9.9.9",
		want:    []string{"tofu 9.9.9 is not available", "does not list version 9.9.9"},
	}, {
		name:   "unreachable mirror",
		mirror: func() string { return closedURL(t) },
		want:   []string{"listing versions at", "connection refused"},
	}, {
		name: "archive download fails",
		setup: func(m *mirror) {
			m.onArchive = func(w http.ResponseWriter, _ []byte) { w.WriteHeader(500) }
		},
		want: []string{"downloading tofu_" + v + "_", "unexpected status code: 500"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTofuMirror(t, storage, pub)
			if tt.setup != nil {
				m.set(tt.setup)
			}
			in, _ := testInstaller(t)
			in.identify = relabel
			in.TofuMirror, in.TofuMirrorKey = m.URL, pub
			if tt.mirror != nil {
				in.TofuMirror = tt.mirror()
			}
			if tt.key != "" {
				in.TofuMirrorKey = tt.key
			}
			want := tt.versionOr(v)
			installFails(t, in, Spec{Tofu, want}, append([]string{
				"tofu " + want + " is not available",
				"\n  cache: ",
				"\n  path: ",
				"\n  download: ",
				"\n  build: not enabled",
			}, tt.want...))
		})
	}
}

func TestTofuListing(t *testing.T) {
	v := needTerraform(t)
	_, pub := testKeys(t)
	m := newTofuMirror(t, tofuStorage(t), pub)
	in, _ := testInstaller(t)
	in.TofuMirror = m.URL + "/"
	vs, err := tofuSource{in}.list(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || !vs[0].Equal(v) {
		t.Errorf("listed %v, want [%s]", vs, v)
	}
}
