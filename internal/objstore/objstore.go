// Package objstore is where strata keeps what many machines share: a
// bucket of objects behind gocloud.dev/blob (file://, mem://, s3:// with
// endpoint= for S3-compatible servers, gs:// for Google Cloud Storage and
// azblob:// for Azure Blob Storage). What decides something is written
// atomically on the store itself: Create makes an object only if none is
// there (first writer wins), and Update replaces one only if it still
// holds what the writer read (compare and swap).
package objstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
	"gocloud.dev/gcp"

	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/internal/safepath"
)

// Errors callers branch on.
var (
	ErrNotFound = errors.New("no such object")
	ErrExists   = errors.New("the object already exists")
	ErrChanged  = errors.New("the object changed since it was read")
)

// MaxObject bounds what Get reads: run state and results are small, and a
// saved plan of a large root module is a few MiB.
const MaxObject = 256 << 20

// Version identifies one content of an object, as Update compares it.
type Version string

// kind is what decides a Store's swaps.
type kind int

const (
	// kindLocal: a file:// or mem:// store; versions are content digests,
	// and the store compares them under a lock of its own.
	kindLocal kind = iota
	// kindS3: versions are the server's ETags, and a swap is a write
	// conditional on one (If-Match), decided by the server.
	kindS3
	// kindGCS: versions are object generations, and a swap is a write
	// conditional on one (ifGenerationMatch), decided by the server.
	kindGCS
	// kindAzure: versions are the server's ETags, and a swap is a write
	// conditional on one (If-Match), decided by the server.
	kindAzure
)

// Store is one bucket.
type Store struct {
	b *blob.Bucket
	// dir is the directory of a file:// store: its creates and swaps are
	// done on files directly, since fileblob's conditional write holds only
	// within one process.
	dir string
	// root is dir resolved once, for the key paths built in it.
	root *safepath.Base
	// tmpDir is its temp folder, once checked and made (tempDir).
	tmpMu  sync.Mutex
	tmpDir string
	kind   kind
	// mu orders swaps of a mem:// store, which lives in one process.
	mu sync.Mutex
	// url names the bucket in messages; timeout bounds one request.
	url     string
	timeout time.Duration
	// silent is the first operation the bucket did not answer: from then
	// on the store asks it nothing more, so a command's time with a
	// stalled bucket is one operation's budget, not one per request it
	// would make in turn (docs/ci.md#a-bucket-that-does-not-answer).
	silent atomic.Pointer[NoAnswerError]
	// observe, when set, is told of each operation before it is asked.
	observe atomic.Pointer[func(op, key string)]
}

// Observe has f told of each operation the store asks of its bucket,
// before it is asked, by name ("reading", "writing", "creating",
// "updating", "deleting", "listing") and key (a listing's prefix ends in
// "*"). Tests and benchmarks count a command's requests with it; f may be
// called from many goroutines at once.
func (s *Store) Observe(f func(op, key string)) { s.observe.Store(&f) }

// Open opens the store at url: file:///abs/dir (or a plain directory
// path, created if needed), mem://, s3://, gs:// or azblob://. Each of its
// operations is bounded by opt (docs/ci.md#a-bucket-that-does-not-answer).
func Open(ctx context.Context, rawURL string, opt Options) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		// A plain directory path: it has no query to read.
		timeout, err := takeTimeout(&url.URL{}, opt)
		if err != nil {
			return nil, fmt.Errorf("state dir %s: %w", rawURL, err)
		}
		return openDir(ctx, rawURL, timeout)
	}
	timeout, err := takeTimeout(u, opt)
	if err != nil {
		return nil, fmt.Errorf("state URL %s: %w", redact(u), err)
	}
	var (
		k kind
		b *blob.Bucket
	)
	switch u.Scheme {
	case "file":
		return openDir(ctx, u.Path, timeout)
	case "mem":
		return &Store{b: memblob.OpenBucket(nil), url: "mem://", timeout: timeout}, nil
	case s3blob.Scheme:
		k = kindS3
		b, err = openS3(ctx, u, timeout)
	case gcsblob.Scheme:
		k = kindGCS
		if err := googleCredentials(ctx); err != nil {
			return nil, fmt.Errorf("state URL %s: %w", redact(u), err)
		}
		b, err = openGCS(ctx, u, timeout)
	case azureblob.Scheme:
		k = kindAzure
		b, err = openAzure(ctx, u, timeout)
	default:
		return nil, fmt.Errorf("state URL %s: the scheme %q is not supported (file://, mem://, s3://, gs:// and azblob:// are)", redact(u), u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("state URL %s: %w", redact(u), err)
	}
	return &Store{b: b, kind: k, url: redact(u), timeout: timeout}, nil
}

// redact is a state URL as messages show it: without a password.
func redact(u *url.URL) string { return u.Redacted() }

func openDir(ctx context.Context, dir string, timeout time.Duration) (*Store, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, url: "file://" + filepath.ToSlash(dir), timeout: timeout}
	// The first call that reaches the file system: a stuck one fails
	// here, at the store's deadline.
	if err := s.do(ctx, "creating", "the directory", func(context.Context) error {
		return os.MkdirAll(dir, 0o700)
	}); err != nil {
		return nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{NoTempDir: true, Metadata: fileblob.MetadataDontWrite, DirFileMode: 0o700})
	if err != nil {
		return nil, err
	}
	root, err := safepath.NewBase(dir)
	if err != nil {
		return nil, fmt.Errorf("state dir %s: %w", dir, err)
	}
	s.b, s.root = b, root
	return s, nil
}

// Close releases the bucket.
func (s *Store) Close() error { return s.b.Close() }

// checkKey keeps keys to path segments of plain characters, so a key is
// the same object on every kind of bucket and stays inside a directory.
func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("object key: empty")
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".strata-") {
			return fmt.Errorf("object key %q: expected /-separated names", key)
		}
		for _, c := range seg {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.@#=+", c)) {
				return fmt.Errorf("object key %q: %q is not allowed; expected letters, digits and - _ . @ # = +", key, c)
			}
		}
	}
	return nil
}

func versionOf(data []byte) Version {
	sum := sha256.Sum256(data)
	return Version(hex.EncodeToString(sum[:]))
}

// Get reads an object and its version.
func (s *Store) Get(ctx context.Context, key string) ([]byte, Version, error) {
	if err := checkKey(key); err != nil {
		return nil, "", err
	}
	type got struct {
		data []byte
		ver  Version
	}
	g, err := bounded(ctx, s, "reading", key, func(ctx context.Context) (got, error) {
		data, ver, err := s.get(ctx, key)
		return got{data, ver}, err
	})
	return g.data, g.ver, err
}

func (s *Store) get(ctx context.Context, key string) ([]byte, Version, error) {
	r, err := s.b.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, "", fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxObject+1))
	if err != nil {
		return nil, "", err
	}
	if len(data) > MaxObject {
		return nil, "", fmt.Errorf("%s: over %d bytes", key, MaxObject)
	}
	switch s.kind {
	case kindS3:
		var out s3.GetObjectOutput
		if !r.As(&out) || out.ETag == nil {
			return nil, "", fmt.Errorf("%s: the server gave no ETag", key)
		}
		return data, Version(*out.ETag), nil
	case kindGCS:
		var sr *storage.Reader
		if !r.As(&sr) || sr.Attrs.Generation == 0 {
			return nil, "", fmt.Errorf("%s: the server gave no generation", key)
		}
		return data, Version(strconv.FormatInt(sr.Attrs.Generation, 10)), nil
	case kindAzure:
		var out azblobblob.DownloadStreamResponse
		if !r.As(&out) || out.ETag == nil {
			return nil, "", fmt.Errorf("%s: the server gave no ETag", key)
		}
		return data, Version(*out.ETag), nil
	}
	return data, versionOf(data), nil
}

// Peek reads the start of an object another tool keeps in the bucket (an
// engine's state): read gets the object's content, of which it reads what
// it needs. Keys of buckets are taken as they are; those of a directory
// store must be plain (checkKey).
func (s *Store) Peek(ctx context.Context, key string, read func(io.Reader) error) error {
	if s.dir != "" || key == "" {
		if err := checkKey(key); err != nil {
			return err
		}
	}
	return s.do(ctx, "reading", key, func(ctx context.Context) error {
		r, err := s.b.NewReader(ctx, key, nil)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		if err != nil {
			return err
		}
		defer r.Close()
		return read(io.LimitReader(r, MaxObject))
	})
}

// Put writes an object whatever is there (a saved plan, keyed by its
// content, needs no more).
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.do(ctx, "writing", key, func(ctx context.Context) error {
		return s.write(ctx, key, data, nil)
	})
}

// write writes an object with opts. On Azure it goes through Upload,
// which hands the driver the whole content at once: the driver's streaming
// writer (WriteAll's path) in gocloud.dev v0.47.0 closes a pipe it has
// already set to nil when the server refuses the write, and panics, so a
// failed condition there would crash instead of returning an error.
func (s *Store) write(ctx context.Context, key string, data []byte, opts *blob.WriterOptions) error {
	if s.kind == kindAzure {
		var o blob.WriterOptions
		if opts != nil {
			o = *opts
		}
		o.ContentType = "application/octet-stream"
		return s.b.Upload(ctx, key, bytes.NewReader(data), &o)
	}
	return s.b.WriteAll(ctx, key, data, opts)
}

// Create writes an object only if there is none: of many writers, exactly
// one succeeds and the others get ErrExists.
func (s *Store) Create(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.do(ctx, "creating", key, func(ctx context.Context) error {
		if s.dir != "" {
			return s.createFile(key, data)
		}
		err := s.write(ctx, key, data, &blob.WriterOptions{IfNotExist: true})
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			return fmt.Errorf("%s: %w", key, ErrExists)
		}
		return err
	})
}

// createFile writes the content to a temp file and links it into place: a
// link fails when the name exists, for every process at once.
func (s *Store) createFile(key string, data []byte) error {
	path, tmp, err := s.temp(key, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s: %w", key, ErrExists)
		}
		return err
	}
	return nil
}

// tempFolder is where a file:// store writes an object before linking or
// renaming it into place: a folder of its own at the store's root, which
// no key can name (checkKey) and so no listing walks. Beside the object,
// a listing of its folder could find a temp file gone by the time it read
// the file's details, and fail.
const tempFolder = ".strata-tmp"

// tempDir is the store's temp folder, checked to stay in the store and
// made by the first write (a store only read is left as it was), not at
// each write.
func (s *Store) tempDir() (string, error) {
	s.tmpMu.Lock()
	defer s.tmpMu.Unlock()
	if s.tmpDir != "" {
		return s.tmpDir, nil
	}
	dir, err := s.root.Join(tempFolder)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return "", err
	}
	s.tmpDir = dir
	return dir, nil
}

// temp writes data to a synced temp file in the store's temp folder and
// makes key's folder.
func (s *Store) temp(key string, data []byte) (path, tmp string, err error) {
	path, err = s.root.Join(key)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", "", err
	}
	tmpDir, err := s.tempDir()
	if err != nil {
		return "", "", err
	}
	f, err := os.CreateTemp(tmpDir, "*")
	if errors.Is(err, os.ErrNotExist) {
		// Removed since the first write made it: made again.
		if err = os.MkdirAll(tmpDir, 0o700); err == nil {
			f, err = os.CreateTemp(tmpDir, "*")
		}
	}
	if err != nil {
		return "", "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", "", err
	}
	return path, f.Name(), nil
}

// Update replaces an object only if it still has version prev (prev ""
// means: only if there is none); otherwise ErrChanged, and the caller reads
// again and retries.
func (s *Store) Update(ctx context.Context, key string, data []byte, prev Version) error {
	if prev == "" {
		err := s.Create(ctx, key, data)
		if errors.Is(err, ErrExists) {
			return fmt.Errorf("%s: %w", key, ErrChanged)
		}
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	return s.do(ctx, "updating", key, func(ctx context.Context) error {
		return s.update(ctx, key, data, prev)
	})
}

func (s *Store) update(ctx context.Context, key string, data []byte, prev Version) error {
	if s.dir != "" {
		return s.updateFile(ctx, key, data, prev)
	}
	if s.kind != kindLocal {
		cond, err := s.ifVersion(prev)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		err = s.write(ctx, key, data, &blob.WriterOptions{BeforeWrite: cond})
		if code := gcerrors.Code(err); code == gcerrors.FailedPrecondition || code == gcerrors.NotFound {
			return fmt.Errorf("%s: %w", key, ErrChanged)
		}
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, cur, err := s.get(ctx, key)
	if errors.Is(err, ErrNotFound) || (err == nil && cur != prev) {
		return fmt.Errorf("%s: %w", key, ErrChanged)
	}
	if err != nil {
		return err
	}
	return s.b.WriteAll(ctx, key, data, nil)
}

// ifVersion returns what makes a write to a server's bucket conditional
// on the object still being at version prev, for WriterOptions.BeforeWrite.
func (s *Store) ifVersion(prev Version) (func(as func(any) bool) error, error) {
	switch s.kind {
	case kindS3:
		return func(as func(any) bool) error {
			var req *transfermanager.UploadObjectInput
			if !as(&req) {
				return errors.New("the S3 driver does not take conditions")
			}
			etag := string(prev)
			req.IfMatch = &etag
			return nil
		}, nil
	case kindGCS:
		gen, err := strconv.ParseInt(string(prev), 10, 64)
		if err != nil || gen <= 0 {
			return nil, fmt.Errorf("version %q is not a GCS generation", prev)
		}
		return func(as func(any) bool) error {
			var obj **storage.ObjectHandle
			if !as(&obj) {
				return errors.New("the GCS driver does not take conditions")
			}
			*obj = (*obj).If(storage.Conditions{GenerationMatch: gen})
			return nil
		}, nil
	case kindAzure:
		return func(as func(any) bool) error {
			var opts *azblob.UploadStreamOptions
			if !as(&opts) {
				return errors.New("the Azure driver does not take conditions")
			}
			etag := azcore.ETag(prev)
			opts.AccessConditions = &azblob.AccessConditions{
				ModifiedAccessConditions: &azblobblob.ModifiedAccessConditions{IfMatch: &etag},
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("no server-side swap for this store")
}

// updateFile swaps a file's content under an OS lock every process
// respects, then renames the new content into place.
func (s *Store) updateFile(ctx context.Context, key string, data []byte, prev Version) error {
	lockPath, err := s.root.Join(".strata-locks", strings.ReplaceAll(key, "/", "%"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		return err
	}
	l, err := filelock.Acquire(ctx, lockPath, nil)
	if err != nil {
		return err
	}
	defer l.Release()
	path, err := s.root.Join(key)
	if err != nil {
		return err
	}
	cur, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && versionOf(cur) != prev) {
		return fmt.Errorf("%s: %w", key, ErrChanged)
	}
	if err != nil {
		return err
	}
	_, tmp, err := s.temp(key, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Delete removes an object; one already gone is no error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.do(ctx, "deleting", key, func(ctx context.Context) error {
		err := s.b.Delete(ctx, key)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil
		}
		return err
	})
}

// List returns the keys under prefix, sorted.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	return bounded(ctx, s, "listing", prefix+"*", func(ctx context.Context) ([]string, error) {
		var keys []string
		it := s.b.List(&blob.ListOptions{Prefix: prefix})
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				return keys, nil
			}
			if err != nil {
				return nil, err
			}
			if checkKey(obj.Key) == nil {
				keys = append(keys, obj.Key)
			}
		}
	})
}

// googleCredentials checks that Application Default Credentials can be
// found before gs:// is opened: without them gocloud's opener prints a
// warning to stdout (where strata's --json output goes) and goes on with
// empty credentials, whose first request fails with a key parse error.
// A local emulator (STORAGE_EMULATOR_HOST) needs none.
func googleCredentials(ctx context.Context) error {
	if emulatedGCS() {
		return nil
	}
	if _, err := gcp.DefaultCredentials(ctx); err != nil {
		return fmt.Errorf("no Google credentials (%w); expected Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS naming a key file, `gcloud auth application-default login`, or a workload's service account", err)
	}
	return nil
}

// emulatedGCS says a local Cloud Storage emulator stands in for Google's.
func emulatedGCS() bool {
	return os.Getenv("STORAGE_EMULATOR_HOST") != "" || os.Getenv("STORAGE_EMULATOR_HOST_GRPC") != ""
}
