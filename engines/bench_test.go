package engines

import (
	"context"
	"testing"
	"time"
)

// Resolving an engine that is already in the cache, as every strata command
// does first: a fresh Installer each time, as in a new process.
func BenchmarkResolveCached(b *testing.B) {
	in, _ := testInstaller(b)
	e := seedCache(b, in)
	specs := []Spec{{Terraform, e.Version.String()}}
	ctx := context.Background()
	for b.Loop() {
		fresh := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}}
		got, err := fresh.Resolve(ctx, specs)
		if err != nil || got[specs[0]].Source != SourceCache {
			b.Fatalf("%+v, %v", got, err)
		}
	}
}

// The same for a constraint, answered by the listing saved in the cache.
func BenchmarkResolveCachedConstraint(b *testing.B) {
	in, _ := testInstaller(b)
	e := seedCache(b, in)
	m := newHashicorpMirror(b)
	in.TerraformMirror, in.ListTTL = m.URL, time.Hour
	specs := []Spec{{Terraform, "~> " + e.Version.String()}}
	ctx := context.Background()
	if _, err := in.Resolve(ctx, specs); err != nil {
		b.Fatal(err)
	}
	m.Close()
	for b.Loop() {
		fresh := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}, TerraformMirror: m.URL, ListTTL: time.Hour}
		got, err := fresh.Resolve(ctx, specs)
		if err != nil || got[specs[0]].Source != SourceCache {
			b.Fatalf("%+v, %v", got, err)
		}
	}
}
