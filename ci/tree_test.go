package ci

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// A job gets the tree its run was planned on, as ci start read it; a tree
// changed in the bucket since is refused.
func TestJobTree(t *testing.T) {
	ctx := context.Background()
	p := loadRepo(t, layeredRepo(t, 2, 3))
	st, _ := objstore.Open(ctx, "mem://")
	m, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Command: runner.CmdPlan, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
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
	st, _ := objstore.Open(ctx, "mem://")
	m, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Command: runner.CmdPlan, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
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
