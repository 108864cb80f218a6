package testenv

import (
	"archive/zip"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// NetworkMirror serves providers over the network mirror protocol on a
// loopback HTTPS server whose certificate only SSL_CERT_FILE trusts, and
// counts the packages it serves.
type NetworkMirror struct {
	URL string
	// Env is what terraform needs to use it: TF_CLI_CONFIG_FILE naming a
	// config that installs from the mirror alone, and SSL_CERT_FILE.
	Env       []string
	downloads atomic.Int64
}

// Downloads is how many provider packages the mirror has served (GET
// requests of a package; terraform asks HEAD first).
func (m *NetworkMirror) Downloads() int64 { return m.downloads.Load() }

// StartNetworkMirror serves the providers for the test's life.
func StartNetworkMirror(t testing.TB, providers ...Provider) *NetworkMirror {
	t.Helper()
	dir := t.TempDir()
	type pkg struct{ zip, hash string }
	pkgs := map[string]map[string]pkg{} // "address/version" -> platform -> package
	versions := map[string][]string{}
	for _, p := range providers {
		name := fmt.Sprintf("terraform-provider-%s_%s_%s.zip", p.Type(), p.Version, p.Platform)
		path := filepath.Join(dir, name)
		writeProviderZip(t, path, p.Binary, "terraform-provider-"+p.Type()+"_v"+p.Version)
		hash, err := dirhash.HashZip(path, dirhash.Hash1)
		if err != nil {
			t.Fatal(err)
		}
		key := p.Address + "/" + p.Version
		if pkgs[key] == nil {
			pkgs[key] = map[string]pkg{}
			versions[p.Address] = append(versions[p.Address], p.Version)
		}
		pkgs[key][p.Platform] = pkg{zip: path, hash: hash}
	}
	m := &NetworkMirror{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/")
		if strings.HasSuffix(path, ".json") {
			w.Header().Set("Content-Type", "application/json")
		}
		switch {
		case strings.HasSuffix(path, "/index.json"):
			vs, ok := versions[strings.TrimSuffix(path, "/index.json")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			out := map[string]any{}
			for _, v := range vs {
				out[v] = map[string]any{}
			}
			json.NewEncoder(w).Encode(map[string]any{"versions": out})
		case strings.HasSuffix(path, ".json"):
			ps, ok := pkgs[strings.TrimSuffix(path, ".json")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			archives := map[string]any{}
			for platform, p := range ps {
				archives[platform] = map[string]any{"url": filepath.Base(p.zip), "hashes": []string{p.hash}}
			}
			json.NewEncoder(w).Encode(map[string]any{"archives": archives})
		case strings.HasSuffix(path, ".zip"):
			p := filepath.Join(dir, filepath.Base(path))
			if _, err := os.Stat(p); err != nil {
				http.NotFound(w, r)
				return
			}
			if r.Method == http.MethodGet {
				m.downloads.Add(1)
			}
			http.ServeFile(w, r, p)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	m.URL = srv.URL + "/"
	cert := filepath.Join(dir, "ca.pem")
	WriteFile(t, cert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	rc := filepath.Join(dir, "terraformrc")
	WriteFile(t, rc, fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n", m.URL))
	m.Env = []string{"TF_CLI_CONFIG_FILE=" + rc, "SSL_CERT_FILE=" + cert}
	return m
}

// writeProviderZip packs a provider binary as a release archive does.
func writeProviderZip(t testing.TB, path, binary, name string) {
	t.Helper()
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: name, Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}
