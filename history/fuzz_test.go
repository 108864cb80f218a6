package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-iac/strata/report"
)

// FuzzRecord: whatever a record or the index holds, reading the history
// back, whole or for one unit, neither panics nor takes a record that
// fails its checks.
func FuzzRecord(f *testing.F) {
	good, _ := json.Marshal(run("drift", 1, map[string]report.Status{"a": report.StatusPlanned, "b": report.StatusNoChanges}))
	f.Add(good, []byte(`{"version":1,"runs":[],"units":{}}`))
	f.Add(good[:len(good)/2], []byte(`{"version":1,"units":{"a@default#default":null}}`))
	f.Add([]byte(`{"version":1,"id":"20260102T030100.000000000Z-r1","units":[{"id":"a@default#default",`), []byte(`[]`))
	name := run("drift", 1, nil).ID
	f.Fuzz(func(t *testing.T, rec, index []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "history", "runs"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "history", "runs", name+".json"), rec, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "history", "index.json"), index, 0o600); err != nil {
			t.Fatal(err)
		}
		h := Local(dir)
		ctx := context.Background()
		recs, err := h.Runs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := r.check(name); err != nil {
				t.Fatalf("took a record that fails its checks: %v", err)
			}
		}
		if _, err := h.UnitRuns(ctx, "a@default#default"); err != nil {
			t.Fatal(err)
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
