package ci

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// A job gets the tree its run was planned on, as ci start read it; a tree
// changed in the bucket since is refused.
func TestJobTree(t *testing.T) {
	ctx := context.Background()
	p := loadRepo(t, layeredRepo(t, 2, 3))
	st, m := startInMemory(t, p, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 2})
	if !strings.HasPrefix(m.Tree, "sha256:") {
		t.Fatalf("manifest names tree %q; expected a digest", m.Tree)
	}
	j, err := FetchJob(ctx, st, SliceOptions{Run: m.Run, Wave: 1, Shard: 0})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(j.Tree, p.Tree()) {
		t.Errorf("job's tree:\n%+v\nstart's:\n%+v", j.Tree, p.Tree())
	}

	// A tree rewritten in the bucket is not the one the manifest names.
	other := p.Tree()
	other.Dirs = other.Dirs[1:]
	b, _ := json.Marshal(other)
	if err := st.Put(ctx, treeKey(m.Run, m.Tree), b); err != nil {
		t.Fatal(err)
	}
	if _, err := FetchJob(ctx, st, SliceOptions{Run: m.Run, Wave: 1, Shard: 0}); err == nil || !strings.Contains(err.Error(), "its manifest names "+m.Tree) {
		t.Fatalf("changed tree: %v", err)
	}
}

// A job built from the run's tree runs the units the run planned even
// where its own checkout has dirs the start did not see: it does not read
// the repository's dirs again.
func TestJobBuildsFromTree(t *testing.T) {
	ctx := context.Background()
	root := layeredRepo(t, 1, 2)
	p := loadRepo(t, root)
	st, m := startInMemory(t, p, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1})
	j, err := FetchJob(ctx, st, SliceOptions{Run: m.Run})
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, root+"/extra/main.tf", []byte(`resource "terraform_data" "x" {}`+"\n"))
	cfg := ""
	if p.ConfigFile != "" {
		cfg = root + "/" + p.ConfigFile
	}
	jp, err := stacks.LoadFrom(root, cfg, func() (*stacks.Tree, error) { return j.Tree, nil })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(jp.Dirspaces), len(p.Dirspaces); got != want {
		t.Errorf("job's project has %d dirspaces; expected the start's %d", got, want)
	}
	if scanned := loadRepo(t, root); len(scanned.Dirspaces) != len(p.Dirspaces)+1 {
		t.Fatalf("reading the repository again finds %d dirspaces; the test expects the extra dir found", len(scanned.Dirspaces))
	}
}

// A job reads its wave's part of the manifest; a run whose start wrote no
// wave parts is read from the whole manifest, with the same slice.
func TestJobReadsItsWave(t *testing.T) {
	ctx := context.Background()
	p := loadRepo(t, layeredRepo(t, 3, 4))
	st, m := startInMemory(t, p, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 2})
	keys, err := st.List(ctx, "runs/"+m.Run+"/waves/")
	if err != nil || len(keys) != len(m.Waves) || len(m.Waves) != 3 {
		t.Fatalf("wave objects %v (%v); expected one for each of %d waves", keys, err, len(m.Waves))
	}
	slices := map[int][]ManifestUnit{}
	for _, w := range m.Waves {
		j, err := FetchJob(ctx, st, SliceOptions{Run: m.Run, Wave: w.Wave, Shard: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range j.Manifest.Units {
			if u.Wave != w.Wave {
				t.Errorf("wave %d's job read unit %s of wave %d", w.Wave, u.ID, u.Wave)
			}
		}
		if j.Manifest.Command != m.Command || j.Manifest.Tree != m.Tree || j.Manifest.Run != m.Run {
			t.Errorf("wave %d's manifest lost the run's header: %+v", w.Wave, j.Manifest)
		}
		slices[w.Wave] = j.Manifest.Slice(w.Wave, 1)
		if !reflect.DeepEqual(slices[w.Wave], m.Slice(w.Wave, 1)) {
			t.Errorf("wave %d shard 1: %v; the manifest's: %v", w.Wave, slices[w.Wave], m.Slice(w.Wave, 1))
		}
	}
	for _, k := range keys {
		if err := st.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range m.Waves {
		j, err := FetchJob(ctx, st, SliceOptions{Run: m.Run, Wave: w.Wave, Shard: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := j.Manifest.Slice(w.Wave, 1); !reflect.DeepEqual(got, slices[w.Wave]) {
			t.Errorf("without wave objects, wave %d shard 1: %v; expected %v", w.Wave, got, slices[w.Wave])
		}
	}
	// A start retried after it stored the manifest writes the waves again.
	if _, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 2, Run: m.Run}); err != nil {
		t.Fatal(err)
	}
	if keys, _ := st.List(ctx, "runs/"+m.Run+"/waves/"); len(keys) != len(m.Waves) {
		t.Errorf("a retried start left %d wave objects; expected %d", len(keys), len(m.Waves))
	}
}
