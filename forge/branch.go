package forge

import (
	"context"
	"fmt"

	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/stacks"
)

// pullRequests reads pull (merge) requests: one by number, and the one
// whose merge made a commit.
type pullRequests interface {
	PullRequest(ctx context.Context, n int) (*controls.PullRequest, error)
	MergedPullRequest(ctx context.Context, sha string) (int, error)
}

// pullRequestOf is pull request n or, when n is 0, the one whose merge
// made commit sha; nil when there is none.
func pullRequestOf(ctx context.Context, f pullRequests, n int, sha string) (*controls.PullRequest, error) {
	if n == 0 && sha != "" {
		var err error
		if n, err = f.MergedPullRequest(ctx, sha); err != nil {
			return nil, fmt.Errorf("the pull request that merged %s: %w", sha, err)
		}
	}
	if n == 0 {
		return nil, nil
	}
	return f.PullRequest(ctx, n)
}

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
