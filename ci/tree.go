package ci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// treeKey is the tree a run was planned on, by content digest
// ("sha256:<hex>").
func treeKey(run, digest string) string {
	return runKey(run) + "/tree-" + runstate.EscapeSegment(strings.ReplaceAll(digest, ":", "-")) + ".json"
}

// putTree stores the tree of a run's repository and returns its digest. A
// tree already stored under that digest is this one.
func putTree(ctx context.Context, st *objstore.Store, run string, t *stacks.Tree) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if err := st.Create(ctx, treeKey(run, digest), b); err != nil && !errors.Is(err, objstore.ErrExists) {
		return "", fmt.Errorf("storing the tree of run %s: %w", run, err)
	}
	return digest, nil
}

// loadTree reads the tree a manifest names, and checks it is the one
// stored under that digest.
func loadTree(ctx context.Context, st *objstore.Store, run, digest string) (*stacks.Tree, error) {
	b, _, err := st.Get(ctx, treeKey(run, digest))
	if err != nil {
		return nil, fmt.Errorf("reading the tree of run %s: %w", run, err)
	}
	sum := sha256.Sum256(b)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != digest {
		return nil, fmt.Errorf("the tree of run %s in the state bucket has digest %s; its manifest names %s", run, got, digest)
	}
	t := &stacks.Tree{}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("the tree of run %s in the state bucket is not what strata wrote: %w", run, err)
	}
	return t, nil
}
