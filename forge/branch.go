package forge

import (
	"context"
	"fmt"

	"github.com/strata-iac/strata/stacks"
)

// fileReader reads one file of a branch; found is false when the branch
// has none.
type fileReader interface {
	File(ctx context.Context, path, ref string) (data []byte, found bool, err error)
}

// branchConfig reads the config of a branch: the first of paths it
// holds. found is false when it holds none; a config that does not load
// is an error naming its file:line:col.
func branchConfig(ctx context.Context, r fileReader, branch string, paths []string) (*stacks.Config, bool, error) {
	for _, path := range paths {
		text, found, err := r.File(ctx, path, branch)
		if err != nil {
			return nil, false, err
		}
		if !found {
			continue
		}
		cfg, diags := stacks.ParseConfig(path+"@"+branch, text)
		if diags.HasErrors() {
			return nil, false, fmt.Errorf("the config of %s does not load: %s", branch, diags.Errors()[0])
		}
		return cfg, true, nil
	}
	return nil, false, nil
}
