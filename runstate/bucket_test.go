package runstate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// at is a time n minutes into the tests' day.
func at(n int) time.Time { return time.Date(2026, 1, 2, 3, n, 0, 0, time.UTC) }

// memStore opens an in-memory bucket for one test.
func memStore(t *testing.T) *objstore.Store {
	t.Helper()
	st, err := objstore.Open(context.Background(), "mem://", objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// loadUnits loads a project of two units, app and net, and returns them
// by dir.
func loadUnits(t *testing.T) map[string]*stacks.Unit {
	t.Helper()
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml": `dirs:
  app: {tags: [app]}
  net: {tags: [net]}
stacks:
  names:
    app: {tag_query: app}
    net: {tag_query: net}
`,
		"app/main.tf": "",
		"net/main.tf": "",
	})
	p, err := stacks.Load(root, filepath.Join(root, "strata.yml"))
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]*stacks.Unit{}
	for _, u := range p.Units {
		units[u.Dir] = u
	}
	if units["app"] == nil || units["net"] == nil {
		t.Fatalf("the project's units: %v", p.Units)
	}
	return units
}

// putRecord stores a unit's record in the bucket as a job would.
func putRecord(t *testing.T, st *objstore.Store, u *stacks.Unit, us *UnitState) {
	t.Helper()
	b, err := json.Marshal(us)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), StateKey(UnitKey(u)), b); err != nil {
		t.Fatal(err)
	}
}

// bucketRecord reads a unit's record from the bucket.
func bucketRecord(t *testing.T, st *objstore.Store, u *stacks.Unit) *UnitState {
	t.Helper()
	b, _, err := st.Get(context.Background(), StateKey(UnitKey(u)))
	if err != nil {
		t.Fatal(err)
	}
	us := &UnitState{}
	if err := json.Unmarshal(b, us); err != nil {
		t.Fatalf("the record in the bucket is not one: %v\n%s", err, b)
	}
	return us
}

// newStateDir opens a state dir for one test.
func newStateDir(t *testing.T) *StateDir {
	t.Helper()
	sd, err := OpenStateDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

// pulled opens a state dir and pulls units' records from the bucket into
// it, as a job does before it runs them.
func pulled(t *testing.T, st *objstore.Store, units ...*stacks.Unit) (*StateDir, *Mirror, map[string]*Remote) {
	t.Helper()
	sd := newStateDir(t)
	mir, fetched := pullInto(t, st, sd, units...)
	return sd, mir, fetched
}

// pullInto fetches units' records from the bucket and pulls them into a
// state dir.
func pullInto(t *testing.T, st *objstore.Store, sd *StateDir, units ...*stacks.Unit) (*Mirror, map[string]*Remote) {
	t.Helper()
	refs := make([]Ref, len(units))
	for i, u := range units {
		refs[i] = RefOf(u)
	}
	fetched, err := FetchUnits(context.Background(), st, refs)
	if err != nil {
		t.Fatal(err)
	}
	mir := NewMirror(st, sd)
	if err := mir.Pull(units, fetched); err != nil {
		t.Fatal(err)
	}
	return mir, fetched
}

// savePlan writes a saved plan into the state dir and records it, as a
// plan does.
func savePlan(t *testing.T, sd *StateDir, u *stacks.Unit, plan []byte, rec *PlanRecord) {
	t.Helper()
	file, err := sd.PlanFile(u.Dir, u.Workspace, u.Stack.Name, u.Shared)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, plan, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sd.UpdateUnit(u, func(us *UnitState) { us.Plan = rec }); err != nil {
		t.Fatal(err)
	}
}

// TestMerge: of this job's record and one another writer stored, the
// later apply, plan and deployed commit win, a plan not after the winning
// apply is dropped, and the init record is not merged.
func TestMerge(t *testing.T) {
	t.Parallel()
	apply := func(n int) *ApplyRecord {
		return &ApplyRecord{Digest: "a" + at(n).Format("04"), At: at(n), Result: report.StatusApplied}
	}
	plan := func(n int) *PlanRecord { return &PlanRecord{Digest: "p" + at(n).Format("04"), At: at(n)} }
	deployed := func(n int) *DeployedRecord { return &DeployedRecord{Commit: "c" + at(n).Format("04"), At: at(n)} }
	for _, tc := range []struct {
		name          string
		local, remote UnitState
		want          UnitState
	}{
		{"later local apply wins", UnitState{Apply: apply(2)}, UnitState{Apply: apply(1)}, UnitState{Apply: apply(2)}},
		{"later remote apply wins", UnitState{Apply: apply(1)}, UnitState{Apply: apply(2)}, UnitState{Apply: apply(2)}},
		{"an apply against none", UnitState{Apply: apply(1)}, UnitState{}, UnitState{Apply: apply(1)}},
		{"later local plan wins", UnitState{Plan: plan(3)}, UnitState{Plan: plan(2)}, UnitState{Plan: plan(3)}},
		{"later remote plan wins", UnitState{Plan: plan(2)}, UnitState{Plan: plan(3)}, UnitState{Plan: plan(3)}},
		{"a plan after the winning apply stays",
			UnitState{Plan: plan(3), Apply: apply(1)}, UnitState{Apply: apply(2)},
			UnitState{Plan: plan(3), Apply: apply(2)}},
		{"a plan before the winning apply is dropped",
			UnitState{Plan: plan(1)}, UnitState{Apply: apply(2)},
			UnitState{Apply: apply(2)}},
		{"a plan at the winning apply's time is dropped",
			UnitState{Apply: apply(2)}, UnitState{Plan: plan(2)},
			UnitState{Apply: apply(2)}},
		{"the later plan, dropped by the later apply",
			UnitState{Plan: plan(3), Apply: apply(4)}, UnitState{Plan: plan(2), Apply: apply(1)},
			UnitState{Apply: apply(4)}},
		{"later local deployed wins", UnitState{Deployed: deployed(2)}, UnitState{Deployed: deployed(1)}, UnitState{Deployed: deployed(2)}},
		{"later remote deployed wins", UnitState{Deployed: deployed(1)}, UnitState{Deployed: deployed(2)}, UnitState{Deployed: deployed(2)}},
		{"a deployed against none", UnitState{}, UnitState{Deployed: deployed(1)}, UnitState{Deployed: deployed(1)}},
		{"the init is not merged",
			UnitState{Init: &InitRecord{Fingerprint: "f", At: at(1)}}, UnitState{Init: &InitRecord{Fingerprint: "g", At: at(2)}},
			UnitState{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Merge(&tc.local, &tc.remote)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(&tc.want)
			if !bytes.Equal(g, w) {
				t.Errorf("Merge(%+v, %+v)\n got %s\nwant %s", tc.local, tc.remote, g, w)
			}
		})
	}
}

// TestPullPushRoundTrip: Pull writes a unit's record and the plan it names
// from the bucket into the state dir, keeping the local init; Push writes
// the record (without the init) under StateKey and the saved plan under
// PlanKey, and returns the apply made since Pull, nil when there is none.
func TestPullPushRoundTrip(t *testing.T) {
	ctx := context.Background()
	st, units := memStore(t), loadUnits(t)
	app, net := units["app"], units["net"]
	putRecord(t, st, app, &UnitState{Plan: &PlanRecord{Digest: "sha256:old", At: at(2)}, Apply: &ApplyRecord{Digest: "sha256:first", At: at(1), Result: report.StatusApplied}})
	if err := st.Put(ctx, PlanKey(UnitKey(app), "sha256:old"), []byte("old plan")); err != nil {
		t.Fatal(err)
	}
	putRecord(t, st, net, &UnitState{Apply: &ApplyRecord{Digest: "sha256:net", At: at(1), Result: report.StatusApplied}})
	sd := newStateDir(t)
	if err := sd.UpdateUnit(app, func(us *UnitState) { us.Init = &InitRecord{Fingerprint: "local", At: at(0)} }); err != nil {
		t.Fatal(err)
	}
	mir, _ := pullInto(t, st, sd, app, net)
	checkPulled(t, sd, app)

	// app plans and applies again; net does nothing.
	savePlan(t, sd, app, []byte("new plan"), &PlanRecord{Digest: "sha256:new", At: at(4)})
	newApply := &ApplyRecord{Digest: "sha256:second", At: at(3), Result: report.StatusApplied}
	if err := sd.UpdateUnit(app, func(us *UnitState) { us.Apply = newApply }); err != nil {
		t.Fatal(err)
	}
	applied, err := mir.Push(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if applied == nil || applied.Digest != "sha256:second" {
		t.Errorf("Push returned %+v; expected the apply since Pull", applied)
	}
	rec := bucketRecord(t, st, app)
	if rec.Init != nil || rec.Apply == nil || rec.Apply.Digest != "sha256:second" || rec.Plan == nil || rec.Plan.Digest != "sha256:new" {
		t.Errorf("the record in the bucket: %+v", rec)
	}
	if b, _, err := st.Get(ctx, PlanKey(UnitKey(app), "sha256:new")); err != nil || string(b) != "new plan" {
		t.Errorf("the saved plan in the bucket: %q, %v", b, err)
	}
	if applied, err := mir.Push(ctx, net); err != nil || applied != nil {
		t.Errorf("Push of a unit that applied nothing since Pull: %+v, %v", applied, err)
	}
	if rec := bucketRecord(t, st, net); rec.Apply == nil || rec.Apply.Digest != "sha256:net" {
		t.Errorf("the record of a unit that did nothing: %+v", rec)
	}
}

// checkPulled checks that app's record and plan were pulled from the
// bucket, and its local init record kept.
func checkPulled(t *testing.T, sd *StateDir, app *stacks.Unit) {
	t.Helper()
	us, err := sd.ReadUnit(app)
	if err != nil || us.Init == nil || us.Init.Fingerprint != "local" || us.Plan == nil || us.Plan.Digest != "sha256:old" || us.Apply == nil || us.Apply.Digest != "sha256:first" {
		t.Fatalf("the pulled record: %+v, %v", us, err)
	}
	file, err := sd.PlanFile(app.Dir, app.Workspace, app.Stack.Name, app.Shared)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "old plan" {
		t.Errorf("the pulled plan: %q, %v", b, err)
	}
}

// TestPushMergesConcurrentWriter: when another writer changed a unit's
// record between Pull and Push, Push merges the two and swaps again: the
// later apply and the later plan are kept, and Push still returns the apply
// this job made.
func TestPushMergesConcurrentWriter(t *testing.T) {
	ctx := context.Background()
	st, units := memStore(t), loadUnits(t)
	app := units["app"]
	putRecord(t, st, app, &UnitState{Apply: &ApplyRecord{Digest: "sha256:first", At: at(1), Result: report.StatusApplied}})
	sd, mir, _ := pulled(t, st, app)
	// Another writer records a later plan and deploy meanwhile.
	putRecord(t, st, app, &UnitState{
		Apply:    &ApplyRecord{Digest: "sha256:first", At: at(1), Result: report.StatusApplied},
		Plan:     &PlanRecord{Digest: "sha256:theirs", At: at(5)},
		Deployed: &DeployedRecord{Commit: "theirs", At: at(5)},
	})
	mine := &ApplyRecord{Digest: "sha256:mine", At: at(3), Result: report.StatusApplied}
	err := sd.UpdateUnit(app, func(us *UnitState) {
		us.Apply, us.Deployed = mine, &DeployedRecord{Commit: "mine", At: at(3)}
	})
	if err != nil {
		t.Fatal(err)
	}
	applied, err := mir.Push(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if applied == nil || applied.Digest != "sha256:mine" {
		t.Errorf("Push returned %+v; expected this job's apply", applied)
	}
	rec := bucketRecord(t, st, app)
	if rec.Apply == nil || rec.Apply.Digest != "sha256:mine" {
		t.Errorf("the merged record lost the later apply: %+v", rec.Apply)
	}
	if rec.Plan == nil || rec.Plan.Digest != "sha256:theirs" {
		t.Errorf("the merged record lost the other writer's later plan: %+v", rec.Plan)
	}
	if rec.Deployed == nil || rec.Deployed.Commit != "theirs" {
		t.Errorf("the merged record lost the later deployed commit: %+v", rec.Deployed)
	}
}

// TestFetchUnitMovesCorruptRecordAside: a record that is not one strata
// wrote is moved aside, as it was, with a Warning; the unit starts empty,
// in the bucket too, and its record can be pushed again.
func TestFetchUnitMovesCorruptRecordAside(t *testing.T) {
	ctx := context.Background()
	st, units := memStore(t), loadUnits(t)
	app := units["app"]
	key := StateKey(UnitKey(app))
	if err := st.Put(ctx, key, []byte("not json")); err != nil {
		t.Fatal(err)
	}
	sd, mir, fetched := pulled(t, st, app)
	r := fetched[UnitKey(app)]
	if r.Warning == "" || !strings.Contains(r.Warning, "corrupt") {
		t.Errorf("no warning of the corrupt record: %q", r.Warning)
	}
	if r.State.Plan != nil || r.State.Apply != nil || r.State.Deployed != nil || r.Plan != nil {
		t.Errorf("the unit did not start empty: %+v", r)
	}
	if w := Warnings([]*stacks.Unit{app}, fetched)[app]; len(w) != 1 || w[0] != r.Warning {
		t.Errorf("Warnings: %q", w)
	}
	keys, err := st.List(ctx, key+".corrupt-")
	if err != nil || len(keys) != 1 {
		t.Fatalf("the record moved aside: %v, %v", keys, err)
	}
	if b, _, err := st.Get(ctx, keys[0]); err != nil || string(b) != "not json" {
		t.Errorf("the record moved aside holds %q, %v", b, err)
	}
	if !strings.Contains(r.Warning, keys[0]) {
		t.Errorf("the warning %q does not name %s", r.Warning, keys[0])
	}
	if rec := bucketRecord(t, st, app); rec.Apply != nil || rec.Plan != nil {
		t.Errorf("the bucket's record after moving aside: %+v", rec)
	}
	mine := &ApplyRecord{Digest: "sha256:mine", At: at(3), Result: report.StatusApplied}
	if err := sd.UpdateUnit(app, func(us *UnitState) { us.Apply = mine }); err != nil {
		t.Fatal(err)
	}
	if applied, err := mir.Push(ctx, app); err != nil || applied == nil || applied.Digest != "sha256:mine" {
		t.Errorf("Push after a corrupt record: %+v, %v", applied, err)
	}
}

// TestReadBucketCorruptIsEmpty: ReadBucket reads a corrupt record and a
// missing one as empty, leaves the corrupt one where it is, and reads a
// good one as it is.
func TestReadBucketCorruptIsEmpty(t *testing.T) {
	ctx := context.Background()
	st, units := memStore(t), loadUnits(t)
	app, net := units["app"], units["net"]
	if err := st.Put(ctx, StateKey(UnitKey(app)), []byte("{corrupt")); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBucket(ctx, st, []*stacks.Unit{app, net})
	if err != nil {
		t.Fatal(err)
	}
	if us := got[app]; us == nil || us.Apply != nil || us.Plan != nil || us.DeployedCommit() != "" {
		t.Errorf("a corrupt record read as %+v", us)
	}
	if us := got[net]; us == nil || us.Apply != nil || us.Plan != nil {
		t.Errorf("a missing record read as %+v", us)
	}
	if b, _, err := st.Get(ctx, StateKey(UnitKey(app))); err != nil || string(b) != "{corrupt" {
		t.Errorf("ReadBucket changed the corrupt record: %q, %v", b, err)
	}
	putRecord(t, st, net, &UnitState{Deployed: &DeployedRecord{Commit: "abc", At: at(1)}})
	got, err = ReadBucket(ctx, st, []*stacks.Unit{net})
	if err != nil || got[net].DeployedCommit() != "abc" {
		t.Errorf("a good record read as %+v, %v", got[net], err)
	}
}

// TestEscapeSegment: every name becomes one segment of plain characters,
// never "", "." or "..", and never one holding '/' or '#'.
func TestEscapeSegment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"..", "=2E=2E"},
		{".", "=2E"},
		{"...", "=2E=2E=2E"},
		{"", "="},
		{"a/b", "a=2Fb"},
		{"../x", "..=2Fx"},
		{"#", "=23"},
		{"a=b", "a=3Db"},
		{"ünï", "=C3=BCn=C3=AF"},
		{"v1.2_x-y", "v1.2_x-y"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := EscapeSegment(tc.in)
			if got != tc.want {
				t.Errorf("EscapeSegment(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/#") {
				t.Errorf("EscapeSegment(%q) = %q, not one plain segment", tc.in, got)
			}
		})
	}
}

// TestKeyOfStaysInFolder: a unit's keys keep its dir's segments as
// folders, escape every segment, and stay under units/ and plans/<unit>/
// whatever the names hold.
func TestKeyOfStaysInFolder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ dir, ws, stack, want string }{
		{"..", "default", "s", "=2E=2E/default#s"},
		{".", "default", "s", "=2E/default#s"},
		{"a/b", "default", "s", "a/b/default#s"},
		{"a/../../b", "..", ".", "a/=2E=2E/=2E=2E/b/=2E=2E#=2E"},
		{"x", "a/b", "c/d", "x/a=2Fb#c=2Fd"},
		{"x", "#", "#", "x/=23#=23"},
		{"x", "w#s", "t", "x/w=23s#t"},
		{"ünï", "wö", "s", "=C3=BCn=C3=AF/w=C3=B6#s"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			uk := KeyOf(tc.dir, tc.ws, tc.stack)
			if uk != tc.want {
				t.Errorf("KeyOf(%q, %q, %q) = %q, want %q", tc.dir, tc.ws, tc.stack, uk, tc.want)
			}
			for _, key := range []string{StateKey(uk), PlanKey(uk, "sha256:ab/../cd")} {
				for _, seg := range strings.Split(key, "/") {
					if seg == "" || seg == "." || seg == ".." {
						t.Errorf("key %q has segment %q", key, seg)
					}
				}
			}
			if k := StateKey(uk); !strings.HasPrefix(k, "units/") || strings.Count(k, "/") != strings.Count(tc.dir, "/")+2 {
				t.Errorf("StateKey %q leaves units/ or its dir's folder", k)
			}
			if k := PlanKey(uk, "sha256:ab/../cd"); !strings.HasPrefix(k, "plans/"+uk+"/") || strings.Count(k, "/") != strings.Count(uk, "/")+2 {
				t.Errorf("PlanKey %q leaves plans/%s/", k, uk)
			}
		})
	}
}
