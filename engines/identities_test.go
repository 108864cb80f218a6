package engines

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
)

// TestIdentitiesPersistAcrossInstallers: a binary on PATH is identified
// once per binary state, across processes (installers) sharing a cache; a
// changed binary is identified again.
func TestIdentitiesPersistAcrossInstallers(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "terraform")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	calls := 0
	fake := func(context.Context, string) (identity, error) {
		calls++
		return identity{name: Terraform, version: version.Must(version.NewVersion("1.9.9"))}, nil
	}
	find := func() *Engine {
		in := &Installer{CacheDir: cache, SearchPath: []string{dir}, identify: fake}
		e, err := in.FindOnPath(context.Background(), Terraform)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if e := find(); e.Version.String() != "1.9.9" || calls != 1 {
		t.Fatalf("first: %v, %d calls", e, calls)
	}
	if e := find(); e.Version.String() != "1.9.9" || calls != 1 {
		t.Errorf("second installer asked the binary again: %v, %d calls", e, calls)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(bin, later, later); err != nil {
		t.Fatal(err)
	}
	find()
	if calls != 2 {
		t.Errorf("a changed binary was not identified again: %d calls", calls)
	}
}
