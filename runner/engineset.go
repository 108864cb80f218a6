package runner

import (
	"context"
	"fmt"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/stacks"
)

// ResolveEngines resolves the engine of each choice, or says why it cannot
// be had: an engine strata does not run, a version it cannot read, or one
// no source has. Choices naming the same engine share one resolution; all
// of them are resolved together (the installer works on them
// concurrently) and terraform from PATH is found once. A run, a
// passthrough outside any unit and `engines list|install` all resolve
// here, so they name the same engine for the same unit.
func ResolveEngines(ctx context.Context, in *engines.Installer, choices []stacks.EngineChoice) ([]*engines.Engine, []error) {
	out := make([]*engines.Engine, len(choices))
	errs := make([]error, len(choices))
	specs := make([]engines.Spec, len(choices))
	var distinct []engines.Spec
	seen := map[engines.Spec]bool{}
	needPath := false
	for i, c := range choices {
		switch {
		case !c.Supported():
			errs[i] = fmt.Errorf("engine %s is not supported: strata runs terraform and tofu", c.Name)
		case c.OnPath():
			needPath = true
		default:
			spec, err := engines.ParseSpec(c.Name, c.Version)
			if err != nil {
				errs[i] = fmt.Errorf("engine from %s: %w", c.From, err)
				continue
			}
			specs[i] = spec
			if !seen[spec] {
				seen[spec] = true
				distinct = append(distinct, spec)
			}
		}
	}
	resolved, failed := resolveSpecs(ctx, in, distinct)
	var pathEngine *engines.Engine
	var pathErr error
	if needPath {
		pathEngine, pathErr = terraformOnPath(ctx, in)
	}
	for i, c := range choices {
		switch {
		case errs[i] != nil:
		case c.OnPath():
			out[i], errs[i] = pathEngine, pathErr
		default:
			out[i], errs[i] = resolved[specs[i]], failed[specs[i]]
		}
	}
	return out, errs
}

// resolveSpecs resolves specs together, and one by one only when that
// fails, to know which failed and why.
func resolveSpecs(ctx context.Context, in *engines.Installer, specs []engines.Spec) (map[engines.Spec]*engines.Engine, map[engines.Spec]error) {
	failed := map[engines.Spec]error{}
	if len(specs) == 0 {
		return map[engines.Spec]*engines.Engine{}, failed
	}
	if res, err := in.Resolve(ctx, specs); err == nil {
		return res, failed
	}
	resolved := map[engines.Spec]*engines.Engine{}
	for _, s := range specs {
		res, err := in.Resolve(ctx, []engines.Spec{s})
		if err != nil {
			failed[s] = err
			continue
		}
		resolved[s] = res[s]
	}
	return resolved, failed
}
