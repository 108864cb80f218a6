package ci

import (
	"context"
	"testing"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks"
)

// layeredRepo writes a repository of layers×width units, each its own
// stack l<i>c<j> that plans after l<i-1>c<j> and l<i-1>c<j+1 mod width>:
// a DAG of layers waves, each unit waiting for two of the layer before.
// The units named in fail fail their apply.
func layeredRepo(t testing.TB, layers, width int, fail ...string) string {
	t.Helper()
	return testenv.WriteRepo(t, testenv.Layered(layers, width, fail...))
}

func loadRepo(t testing.TB, root string) *stacks.Project {
	t.Helper()
	p, err := stacks.Load(root, root+"/strata.yml")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return p
}

func selectAll(t testing.TB, p *stacks.Project) *stacks.Run {
	t.Helper()
	run, err := p.Select(stacks.Selection{Cwd: ".", All: true})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// startInMemory starts a run of every unit of p in a new in-memory bucket
// and returns the bucket and the run's manifest.
func startInMemory(t testing.TB, p *stacks.Project, opt StartOptions) (*objstore.Store, *Manifest) {
	t.Helper()
	st, err := objstore.Open(context.Background(), "mem://", objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), st, p, selectAll(t, p), opt)
	if err != nil {
		t.Fatal(err)
	}
	return st, m
}
