package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/sourcegraph/conc/pool"

	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/safepath"
)

// Where the history lives: in the state dir, history/runs/<id>.json and
// history/index.json, the index changed under locks/history.lock; in a
// bucket, the same keys, the index changed by compare and swap
// (docs/behaviour.md#history).
const (
	folder    = "history"
	runsPath  = folder + "/runs/"
	indexPath = folder + "/index.json"
)

// store is where a history is kept.
type store interface {
	// create writes a record that is not there yet; one already there
	// (the same run recorded again) is kept.
	create(ctx context.Context, name string, data []byte) error
	// names lists the records' names (without ".json"), oldest first;
	// a name that is no record's is left out.
	names(ctx context.Context) ([]string, error)
	read(ctx context.Context, name string) ([]byte, error)
	remove(ctx context.Context, name string) error
	// readIndex reads the index; nil when there is none.
	readIndex(ctx context.Context) ([]byte, error)
	// updateIndex changes the index, one writer at a time: change gets
	// what is there (nil: none) and returns what replaces it.
	updateIndex(ctx context.Context, change func(old []byte) ([]byte, error)) error
	// where names a record or the index (name ""), for warnings.
	where(name string) string
}

// History is the history in one place.
type History struct {
	s store
	// Warn receives what the user must hear: a record skipped, an index
	// built again.
	Warn func(string)
}

func (h *History) warn(format string, args ...any) {
	if h.Warn != nil {
		h.Warn(fmt.Sprintf(format, args...))
	}
}

// Local is the history in the state dir at dir.
func Local(dir string) *History { return &History{s: &localStore{dir: dir}} }

// InBucket is the history in a state bucket.
func InBucket(st *objstore.Store) *History { return &History{s: &bucketStore{st: st}} }

// Append records a run and removes the oldest records past keep. The
// record is a file or object of its own, never rewritten, so two runs
// ending at once both keep theirs; the index is changed one writer at a
// time.
func (h *History) Append(ctx context.Context, rec *Record, keep int) error {
	if keep < 1 {
		keep = DefaultKeep
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := h.s.create(ctx, rec.ID, append(b, '\n')); err != nil {
		return fmt.Errorf("recording the run in the history (%s): %w", h.s.where(rec.ID), err)
	}
	err = h.s.updateIndex(ctx, func(old []byte) ([]byte, error) {
		ix, err := h.decodeIndex(old)
		if err != nil {
			h.warn("%v; building it again from the records", err)
		}
		if err != nil || old == nil {
			// Built from the records, this one among them: adding it
			// again below changes nothing.
			if ix, err = h.rebuild(ctx, keep); err != nil {
				return nil, err
			}
		}
		ix.add(rec, keep)
		return json.Marshal(ix)
	})
	if err != nil {
		return fmt.Errorf("updating the history's index (%s): %w", h.s.where(""), err)
	}
	return h.prune(ctx, keep)
}

// prune removes the oldest records past keep.
func (h *History) prune(ctx context.Context, keep int) error {
	names, err := h.s.names(ctx)
	if err != nil {
		return fmt.Errorf("listing the history: %w", err)
	}
	for _, n := range names[:max(len(names)-keep, 0)] {
		if err := h.s.remove(ctx, n); err != nil {
			return fmt.Errorf("removing %s from the history: %w", h.s.where(n), err)
		}
	}
	return nil
}

// decodeIndex reads an index; an empty one for none.
func (h *History) decodeIndex(b []byte) (*Index, error) {
	if b == nil {
		return newIndex(), nil
	}
	ix := newIndex()
	if len(b) > MaxIndex {
		return nil, fmt.Errorf("the history's index (%s) is over %d MiB", h.s.where(""), MaxIndex>>20)
	}
	if err := strictJSON(b, ix); err != nil || ix.Version != 1 {
		if err == nil {
			err = fmt.Errorf("version %d; expected 1", ix.Version)
		}
		return nil, fmt.Errorf("the history's index (%s) cannot be read: %v", h.s.where(""), err)
	}
	if ix.Units == nil {
		ix.Units = map[string]*UnitStatus{}
	}
	for id, us := range ix.Units {
		if us == nil {
			delete(ix.Units, id)
		}
	}
	return ix, nil
}

// Index reads the index: the runs kept and each unit's last status. With
// none, or one that cannot be read, it is built from the records (with a
// warning for the latter), and not written: the next run writes it.
func (h *History) Index(ctx context.Context) (*Index, error) {
	b, err := h.s.readIndex(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the history's index (%s): %w", h.s.where(""), err)
	}
	if b == nil {
		return h.rebuild(ctx, MaxKeep)
	}
	ix, err := h.decodeIndex(b)
	if err != nil {
		h.warn("%v; building it again from the records", err)
		return h.rebuild(ctx, MaxKeep)
	}
	return ix, nil
}

// MaxKeep is the most runs a history may keep (history.keep).
const MaxKeep = 10000

func (h *History) rebuild(ctx context.Context, keep int) (*Index, error) {
	recs, err := h.Runs(ctx, 0)
	if err != nil {
		return nil, err
	}
	return build(recs, keep), nil
}

// Runs reads the records, newest first; n > 0 reads the newest n only. A
// record that cannot be read as one is skipped, with a warning naming it.
func (h *History) Runs(ctx context.Context, n int) ([]*Record, error) {
	names, err := h.s.names(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the history: %w", err)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	if n > 0 && len(names) > n {
		names = names[:n]
	}
	return readEach(h, names, func(name string) (*Record, error) { return h.readRecord(ctx, name) })
}

// readEach reads each named record with read, four at a time: decoding,
// not reading, is what a large record costs. A record that is not one
// strata wrote is skipped with a warning naming it, one read gives nil
// for is left out, and any other error is returned.
func readEach[T any](h *History, names []string, read func(name string) (*T, error)) ([]*T, error) {
	out := make([]*T, len(names))
	errs := make([]error, len(names))
	p := pool.New().WithMaxGoroutines(4)
	for i, name := range names {
		p.Go(func() { out[i], errs[i] = read(name) })
	}
	p.Wait()
	kept := make([]*T, 0, len(out))
	for i, r := range out {
		var bad *badRecord
		switch {
		case errors.As(errs[i], &bad):
			h.warn("%v; skipped it", bad)
		case errs[i] != nil:
			return nil, errs[i]
		case r != nil:
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// badRecord is a record that is not one strata wrote.
type badRecord struct {
	where string
	err   error
}

func (e *badRecord) Error() string { return fmt.Sprintf("%s is no run record: %v", e.where, e.err) }

func (h *History) readRecord(ctx context.Context, name string) (*Record, error) {
	b, err := h.s.read(ctx, name)
	return h.decodeRecord(name, b, err)
}

// decodeRecord is the record called name from b, its bytes as the store
// read them (err, the read's error).
func (h *History) decodeRecord(name string, b []byte, err error) (*Record, error) {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, objstore.ErrNotFound) {
		return nil, &badRecord{h.s.where(name), errors.New("removed while it was read")}
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", h.s.where(name), err)
	}
	if len(b) > MaxRecord {
		return nil, &badRecord{h.s.where(name), fmt.Errorf("over %d MiB", MaxRecord>>20)}
	}
	r := &Record{}
	if err := strictJSON(b, r); err != nil {
		return nil, &badRecord{h.s.where(name), err}
	}
	if err := r.check(name); err != nil {
		return nil, &badRecord{h.s.where(name), err}
	}
	return r, nil
}

// strictJSON decodes one JSON value and nothing after it.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the record")
	}
	return nil
}

// namesOf keeps the names of records among file or key names, sorted.
func namesOf(all []string) []string {
	var out []string
	for _, n := range all {
		if base, ok := strings.CutSuffix(n, ".json"); ok && ValidName(base) {
			out = append(out, base)
		}
	}
	sort.Strings(out)
	return out
}

// localStore is the history in a state dir.
type localStore struct {
	dir  string
	once sync.Once
	base *safepath.Base
	err  error
}

// path is a record's file, or the index's (name "").
func (l *localStore) path(name string) (string, error) {
	l.once.Do(func() { l.base, l.err = safepath.NewBase(l.dir) })
	if l.err != nil {
		return "", l.err
	}
	if name == "" {
		return l.base.Join(folder, "index.json")
	}
	if !ValidName(name) {
		return "", fmt.Errorf("%q is no record's name", name)
	}
	return l.base.Join(folder, "runs", name+".json")
}

func (l *localStore) where(name string) string {
	if name == "" {
		return filepath.Join(l.dir, filepath.FromSlash(indexPath))
	}
	return filepath.Join(l.dir, filepath.FromSlash(runsPath), name+".json")
}

func (l *localStore) create(_ context.Context, name string, data []byte) error {
	p, err := l.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	// Not synced, nor is the index: after a crash a record may be torn,
	// and is then skipped with a warning (readEach), and a torn index is
	// built again from the records (Append); a sync each would make every
	// command wait for the disk twice after its run.
	return atomicfile.WriteUnsynced(p, data, 0o600)
}

func (l *localStore) names(context.Context) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(l.dir, folder, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			all = append(all, e.Name())
		}
	}
	return namesOf(all), nil
}

func (l *localStore) read(_ context.Context, name string) ([]byte, error) {
	p, err := l.path(name)
	if err != nil {
		return nil, err
	}
	return readLimited(p, MaxRecord)
}

// readLimited reads at most limit+1 bytes of a file: the caller tells a
// file over its budget by its length.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

func (l *localStore) remove(_ context.Context, name string) error {
	p, err := l.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (l *localStore) readIndex(context.Context) ([]byte, error) {
	p, err := l.path("")
	if err != nil {
		return nil, err
	}
	b, err := readLimited(p, MaxIndex)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (l *localStore) updateIndex(ctx context.Context, change func(old []byte) ([]byte, error)) error {
	p, err := l.path("")
	if err != nil {
		return err
	}
	locks := filepath.Join(l.dir, "locks")
	if err := os.MkdirAll(locks, 0o700); err != nil {
		return err
	}
	lock, err := filelock.Acquire(ctx, filepath.Join(locks, "history.lock"), nil)
	if err != nil {
		return err
	}
	defer lock.Release()
	old, err := l.readIndex(ctx)
	if err != nil {
		return err
	}
	b, err := change(old)
	if err != nil {
		return err
	}
	return atomicfile.WriteUnsynced(p, append(b, '\n'), 0o600)
}

// bucketStore is the history in a state bucket.
type bucketStore struct{ st *objstore.Store }

func (b *bucketStore) key(name string) string {
	if name == "" {
		return indexPath
	}
	return runsPath + name + ".json"
}

func (b *bucketStore) where(name string) string { return b.key(name) + " in the bucket" }

func (b *bucketStore) create(ctx context.Context, name string, data []byte) error {
	if !ValidName(name) {
		return fmt.Errorf("%q is no record's name", name)
	}
	err := b.st.Create(ctx, b.key(name), data)
	if errors.Is(err, objstore.ErrExists) {
		return nil
	}
	return err
}

func (b *bucketStore) names(ctx context.Context) ([]string, error) {
	keys, err := b.st.List(ctx, runsPath)
	if err != nil {
		return nil, err
	}
	var all []string
	for _, k := range keys {
		if n := strings.TrimPrefix(k, runsPath); !strings.Contains(n, "/") {
			all = append(all, n)
		}
	}
	return namesOf(all), nil
}

func (b *bucketStore) read(ctx context.Context, name string) ([]byte, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("%q is no record's name", name)
	}
	data, _, err := b.st.Get(ctx, b.key(name))
	return data, err
}

func (b *bucketStore) remove(ctx context.Context, name string) error {
	if !ValidName(name) {
		return fmt.Errorf("%q is no record's name", name)
	}
	return b.st.Delete(ctx, b.key(name))
}

func (b *bucketStore) readIndex(ctx context.Context) ([]byte, error) {
	data, _, err := b.st.Get(ctx, indexPath)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, nil
	}
	return data, err
}

// updateIndex swaps the index: a writer that lost the race reads the
// winner's index and changes that.
func (b *bucketStore) updateIndex(ctx context.Context, change func(old []byte) ([]byte, error)) error {
	for tries := 0; ; tries++ {
		old, ver, err := b.st.Get(ctx, indexPath)
		if errors.Is(err, objstore.ErrNotFound) {
			old, ver, err = nil, "", nil
		}
		if err != nil {
			return err
		}
		data, err := change(old)
		if err != nil {
			return err
		}
		err = b.st.Update(ctx, indexPath, append(data, '\n'), ver)
		if err == nil || !errors.Is(err, objstore.ErrChanged) || tries == 20 {
			return err
		}
	}
}
