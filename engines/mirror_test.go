package engines

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	gopenpgp "github.com/ProtonMail/gopenpgp/v2/crypto"
	"github.com/opentofu/tofudl"
)

// The test key is a throwaway key committed for these tests
// (testdata/README.md).
func testKeys(t testing.TB) (private, public string) {
	t.Helper()
	priv, err := os.ReadFile("testdata/test-key.asc")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile("testdata/test-key.pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	return string(priv), string(pub)
}

// otherPublicKey is a key that signed nothing the mirrors serve.
func otherPublicKey(t testing.TB) string {
	t.Helper()
	k, err := gopenpgp.GenerateKey("someone else", "other@example.invalid", "x25519", 0)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := k.GetArmoredPublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// listedOnly are versions the HashiCorp-layout mirror lists without
// serving files, for constraint resolution.
var listedOnly = []string{"1.5.7", "1.9.8", "1.12.0-alpha20250101"}

var (
	hcTreeOnce sync.Once
	hcTree     string
	hcTreeErr  error
)

// hashicorpTree builds, once per run, a releases.hashicorp.com-layout tree
// holding a real zip of localTerraform, its SHA256SUMS and a detached
// signature by the test key.
func hashicorpTree(t testing.TB) string {
	t.Helper()
	v := needTerraform(t).String()
	hcTreeOnce.Do(func() {
		priv, _ := testKeys(t)
		hcTree, hcTreeErr = buildHashicorpTree(filepath.Join(fixtureRoot, "hashicorp"), v, priv)
	})
	if hcTreeErr != nil {
		t.Fatal(hcTreeErr)
	}
	return hcTree
}

func buildHashicorpTree(root, v, privateKey string) (string, error) {
	dir := filepath.Join(root, "terraform", v)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	zipName := fmt.Sprintf("terraform_%s_%s_%s.zip", v, runtime.GOOS, runtime.GOARCH)
	zipBytes, err := zipBinary(localTerraform, "terraform")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(zipBytes)
	sums := []byte(hex.EncodeToString(sum[:]) + "  " + zipName + "\n")
	keys, err := openpgp.ReadArmoredKeyRing(strings.NewReader(privateKey))
	if err != nil {
		return "", err
	}
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, keys[0], bytes.NewReader(sums), nil); err != nil {
		return "", err
	}
	keyID := keys[0].PrimaryKey.KeyIdShortString()
	sumsName := fmt.Sprintf("terraform_%s_SHA256SUMS", v)
	files := map[string][]byte{
		zipName:                         zipBytes,
		sumsName:                        sums,
		sumsName + ".sig":               sig.Bytes(),
		sumsName + "." + keyID + ".sig": sig.Bytes(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	release := func(v string, withFiles bool) map[string]any {
		r := map[string]any{"name": "terraform", "version": v, "builds": []any{}}
		if withFiles {
			r["shasums"] = sumsName
			r["shasums_signature"] = sumsName + ".sig"
			r["shasums_signatures"] = []string{sumsName + "." + keyID + ".sig", sumsName + ".sig"}
			r["builds"] = []any{map[string]any{
				"name": "terraform", "version": v, "os": runtime.GOOS, "arch": runtime.GOARCH,
				"filename": zipName,
				"url":      "https://releases.hashicorp.com/terraform/" + v + "/" + zipName,
			}}
		}
		return r
	}
	index := map[string]any{v: release(v, true)}
	for _, lv := range listedOnly {
		index[lv] = release(lv, false)
	}
	if err := writeJSON(filepath.Join(dir, "index.json"), release(v, true)); err != nil {
		return "", err
	}
	if err := writeJSON(filepath.Join(root, "terraform", "index.json"), map[string]any{"name": "terraform", "versions": index}); err != nil {
		return "", err
	}
	return root, nil
}

func zipBinary(src, name string) ([]byte, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// Stored, not deflated: hc-install does not care, and the tests stay fast.
	h := &zip.FileHeader{Name: name, Method: zip.Store}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// mirror is a loopback release mirror. Files can be rewritten on the way
// out (tampering) and archive requests counted, delayed or cut short.
type mirror struct {
	*httptest.Server
	archiveRequests atomic.Int32
	indexRequests   atomic.Int32

	mu        sync.Mutex
	rewrite   func(name string, b []byte) []byte
	onArchive func(w http.ResponseWriter, b []byte) // serves the archive itself when set
	zipType   string
}

func (m *mirror) set(f func(m *mirror)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

func isArchive(name string) bool {
	return strings.HasSuffix(name, ".zip") || strings.HasSuffix(name, ".tar.gz")
}

// serve wraps a handler that produces a file's bytes with the rewriting,
// counting and content types of a release mirror. Content types matter:
// hc-install accepts only application/json for indexes and application/zip
// (or application/x-zip-compressed) for archives.
func (m *mirror) serve(t testing.TB, read func(urlPath string) ([]byte, bool)) {
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := read(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		name := path.Base(r.URL.Path)
		m.mu.Lock()
		rewrite, onArchive, zipType := m.rewrite, m.onArchive, m.zipType
		m.mu.Unlock()
		if rewrite != nil {
			b = rewrite(name, b)
		}
		switch {
		case strings.HasSuffix(name, ".json"):
			m.indexRequests.Add(1)
			w.Header().Set("Content-Type", "application/json")
		case strings.HasSuffix(name, ".zip"):
			if zipType == "" {
				zipType = "application/zip"
			}
			w.Header().Set("Content-Type", zipType)
		default:
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if isArchive(name) {
			m.archiveRequests.Add(1)
			if onArchive != nil {
				onArchive(w, b)
				return
			}
		}
		w.Write(b)
	}))
	t.Cleanup(m.Server.Close)
}

// newHashicorpMirror serves hashicorpTree on loopback.
func newHashicorpMirror(t testing.TB) *mirror {
	t.Helper()
	root := hashicorpTree(t)
	m := &mirror{}
	m.serve(t, func(p string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path.Clean("/"+p))))
		return b, err == nil
	})
	return m
}

var (
	tofuTreeOnce sync.Once
	tofuTree     string
	tofuTreeErr  error
)

// tofuStorage builds, once per run, a tofudl standalone mirror storage
// holding localTerraform packaged as a tofu release of the same version,
// signed by the test key with tofudl's own release builder.
func tofuStorage(t testing.TB) string {
	t.Helper()
	v := needTerraform(t).String()
	tofuTreeOnce.Do(func() {
		priv, pub := testKeys(t)
		tofuTree = filepath.Join(fixtureRoot, "tofu")
		tofuTreeErr = buildTofuStorage(tofuTree, v, localTerraform, priv, pub)
	})
	if tofuTreeErr != nil {
		t.Fatal(tofuTreeErr)
	}
	return tofuTree
}

func buildTofuStorage(dir, v, binary, privateKey, publicKey string) error {
	key, err := gopenpgp.NewKeyFromArmored(privateKey)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	storage, err := tofudl.NewFilesystemStorage(dir)
	if err != nil {
		return err
	}
	m, err := tofudl.NewMirror(tofudl.MirrorConfig{GPGKey: publicKey}, storage, nil)
	if err != nil {
		return err
	}
	builder, err := tofudl.NewReleaseBuilder(key)
	if err != nil {
		return err
	}
	if err := builder.PackageBinary(tofudl.PlatformAuto, tofudl.ArchitectureAuto, b, nil); err != nil {
		return err
	}
	return builder.Build(context.Background(), tofudl.Version(v), m)
}

// newTofuMirror serves a tofudl standalone mirror over storage on
// loopback: tofudl's own handler answers, behind the rewriting and
// counting wrapper.
func newTofuMirror(t testing.TB, storageDir, publicKey string) *mirror {
	t.Helper()
	storage, err := tofudl.NewFilesystemStorage(storageDir)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := tofudl.NewMirror(tofudl.MirrorConfig{GPGKey: publicKey}, storage, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &mirror{}
	m.serve(t, func(p string) ([]byte, bool) {
		rec := httptest.NewRecorder()
		tm.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != http.StatusOK {
			return nil, false
		}
		b, _ := io.ReadAll(rec.Body)
		return b, true
	})
	return m
}

// flipByte returns b with one byte in its middle changed.
func flipByte(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)/2] ^= 0xff
	return c
}

// closedURL is the URL of a server that no longer listens.
func closedURL(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	u := s.URL
	s.Close()
	return u
}

func fileSHA256(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
