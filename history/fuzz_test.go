package history

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"testing"

	"github.com/strata-iac/strata/report"
)

// memStore is a history in memory, for the fuzz test.
type memStore struct{ files map[string][]byte }

func (m *memStore) create(_ context.Context, name string, data []byte) error {
	m.files[name] = data
	return nil
}

func (m *memStore) names(context.Context) ([]string, error) {
	var all []string
	for n := range m.files {
		if n != "" {
			all = append(all, n+".json")
		}
	}
	return namesOf(all), nil
}

func (m *memStore) read(_ context.Context, name string) ([]byte, error) {
	b, ok := m.files[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return b, nil
}

func (m *memStore) remove(_ context.Context, name string) error { delete(m.files, name); return nil }
func (m *memStore) readIndex(context.Context) ([]byte, error)   { return m.files[""], nil }
func (m *memStore) where(name string) string                    { return name }

func (m *memStore) updateIndex(_ context.Context, change func(old []byte) ([]byte, error)) error {
	b, err := change(m.files[""])
	if err == nil {
		m.files[""] = b
	}
	return err
}

// FuzzRecord: whatever a record or the index holds, reading it back, whole
// or for one unit, neither panics nor takes a record that fails its
// checks.
func FuzzRecord(f *testing.F) {
	good, _ := json.Marshal(run("drift", 1, map[string]report.Status{"a": report.StatusPlanned, "b": report.StatusNoChanges}))
	f.Add(good, []byte(`{"version":1,"runs":[],"units":{}}`))
	f.Add(good[:len(good)/2], []byte(`{"version":1,"units":{"a@default#default":null}}`))
	f.Add([]byte(`{"version":1,"id":"20260102T030100.000000000Z-r1","units":[{"id":"a@default#default",`), []byte(`[]`))
	name := run("drift", 1, nil).ID
	f.Fuzz(func(t *testing.T, rec, index []byte) {
		ctx := context.Background()
		h := &History{s: &memStore{files: map[string][]byte{name: rec, "": index}}}
		recs, err := h.Runs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := r.check(name); err != nil {
				t.Fatalf("took a record that fails its checks: %v", err)
			}
		}
		runs, err := h.UnitRuns(ctx, "a@default#default")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Unit.ID != "a@default#default" {
				t.Fatalf("read unit %q for a@default#default", r.Unit.ID)
			}
		}
		ix, err := h.Index(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for id, us := range ix.Units {
			if us == nil {
				t.Fatalf("%s has a nil status", id)
			}
		}
	})
}

// Reading one unit's run leaves the record's bytes as the store holds
// them: a store may hand out what it keeps (and a fuzz input must not be
// written to).
func TestUnitRunsLeavesRecordBytes(t *testing.T) {
	rec, err := json.Marshal(run("plan", 1, map[string]report.Status{"a": report.StatusPlanned}))
	if err != nil {
		t.Fatal(err)
	}
	name := run("plan", 1, nil).ID
	kept := append([]byte(nil), rec...)
	h := &History{s: &memStore{files: map[string][]byte{name: rec}}}
	runs, err := h.UnitRuns(context.Background(), "a@default#default")
	if err != nil || len(runs) != 1 {
		t.Fatalf("UnitRuns: %v, %d runs", err, len(runs))
	}
	if !bytes.Equal(rec, kept) {
		t.Errorf("UnitRuns wrote into the record it read:\n%s\nwas\n%s", rec, kept)
	}
}
