package runstate

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-iac/strata/internal/objstore"
)

// TestRecordedName: a record's file name gives its unit only when both
// names are ones a config may use.
func TestRecordedName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want RecordedUnit
		ok   bool
	}{
		{"default#b.json", RecordedUnit{"default", "b"}, true},
		{"prod#app.json", RecordedUnit{"prod", "app"}, true},
		{"default.json", RecordedUnit{}, false},
		{"default#b.json.corrupt-20261127T000000.000000000", RecordedUnit{}, false},
		{"..#b.json", RecordedUnit{}, false},
		{"default#-x.json", RecordedUnit{}, false},
		{"default#a#b.json", RecordedUnit{}, false},
		{"#b.json", RecordedUnit{}, false},
	} {
		got, ok := recordedName(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("recordedName(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestUnescapeSegment: every escaped name reads back as it was; a cut
// or bad escape is an error.
func TestUnescapeSegment(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "default", "a#b", "..", "team@eu", "a/b", "é"} {
		if got, err := UnescapeSegment(EscapeSegment(s)); err != nil || got != s {
			t.Errorf("UnescapeSegment(EscapeSegment(%q)) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"a=2", "a=ZZ", "x="} {
		if got, err := UnescapeSegment(s); err == nil {
			t.Errorf("UnescapeSegment(%q) = %q, want an error", s, got)
		}
	}
}

// TestRecordedUnits: the units of one dir that the state dir and the
// bucket hold records of, without those of dirs below it or files that
// are no record.
func TestRecordedUnits(t *testing.T) {
	t.Parallel()
	want := []RecordedUnit{{"default", "a"}, {"default", "b"}, {"prod", "b"}}
	local := t.TempDir()
	for _, f := range []string{"default#a.json", "default#b.json", "prod#b.json", "default#b.json.corrupt-1", "sub/default#c.json", "..#x.json"} {
		p := filepath.Join(local, "state", "infra", "b", filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := RecordedLocal(local, "infra/b")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("RecordedLocal = %+v, %v; want %+v", got, err, want)
	}
	if got, err := RecordedLocal(local, "none"); err != nil || len(got) != 0 {
		t.Errorf("RecordedLocal of a dir without records = %+v, %v", got, err)
	}
	if _, err := RecordedLocal(local, "../x"); err == nil {
		t.Error("RecordedLocal of ../x: no error")
	}

	ctx := context.Background()
	st, err := objstore.Open(ctx, "mem://", objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, k := range []string{
		StateKey(KeyOf("infra/b", "prod", "b")), StateKey(KeyOf("infra/b", "default", "b")), StateKey(KeyOf("infra/b", "default", "a")),
		StateKey(KeyOf("infra/b/sub", "default", "c")), StateKey(KeyOf("infra/bb", "default", "d")), StateKey(KeyOf("infra/b", "..", "x")),
	} {
		if err := st.Put(ctx, k, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	got, err = RecordedInBucket(ctx, st, "infra/b")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("RecordedInBucket = %+v, %v; want %+v", got, err, want)
	}
}
