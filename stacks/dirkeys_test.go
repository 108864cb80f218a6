package stacks

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks/config"
)

// TestGlobForIndexed: the glob a dir takes through the first-segment
// index is the one trying every glob, longest key first, would give.
func TestGlobForIndexed(t *testing.T) {
	t.Parallel()
	keys := []string{"*", "**/prod", "mod*", "mod*/x", "modules/*", "modules/net/*", "modules/net/**", "apps/*/svc", "apps/{a,b}", "a?/z", "./x/*", "env/prod*/", "env/*"}
	var globs []*config.MapEntry[config.Dir]
	for _, k := range keys {
		globs = append(globs, &config.MapEntry[config.Dir]{Key: k})
	}
	k := dirKeys{globs: globs}
	k.indexGlobs()
	linear := func(dir string) *config.MapEntry[config.Dir] {
		for _, g := range k.globs {
			if matchPath(strings.TrimSuffix(g.Key, "/"), dir) {
				return g
			}
		}
		return nil
	}
	for _, dir := range []string{"x", "mod", "modules", "modules/net", "modules/net/vpc", "modules/net/vpc/a", "modules/db", "modx/x", "apps/a", "apps/c", "apps/q/svc", "a1/z", "env/prod", "env/prod-eu", "env/dev", "deep/er/prod", "prod", "x/y"} {
		got, want := k.globFor(dir), linear(dir)
		if got != want {
			name := func(e *config.MapEntry[config.Dir]) string {
				if e == nil {
					return "none"
				}
				return e.Key
			}
			t.Errorf("%s: indexed %s, every glob %s", dir, name(got), name(want))
		}
	}
}
