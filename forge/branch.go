package forge

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/stacks/config"
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

// fileReader reads one file of a branch; found is false when the forge
// answers 404. visible is nil when the forge shows the token the
// repository itself.
type fileReader interface {
	File(ctx context.Context, path, ref string) (data []byte, found bool, err error)
	visible(ctx context.Context) error
}

// branchConfig reads the config of a branch: the first of paths it
// holds. When it holds none, missing says where it was looked for; a
// config that does not load is an error naming its file:line:col.
func branchConfig(ctx context.Context, r fileReader, branch string, paths []string) (cfg *config.Config, missing string, err error) {
	for _, path := range paths {
		text, found, err := r.File(ctx, path, branch)
		if err != nil {
			return nil, "", err
		}
		if !found {
			continue
		}
		cfg, diags := config.Parse(path+"@"+branch, text)
		if diags.HasErrors() {
			return nil, "", fmt.Errorf("the config of %s does not load: %s", branch, diags.Errors()[0])
		}
		return cfg, "", nil
	}
	// A forge answers 404 as well for a repository the token cannot
	// see: only a repository it shows has no config
	// (docs/controls.md#the-default-branchs-controls).
	if err := r.visible(ctx); err != nil {
		return nil, "", fmt.Errorf("the forge answers 404 for %s at %s, and the repository itself: %w", strings.Join(paths, ", "), branch, err)
	}
	return nil, strings.Join(paths, ", ") + " at " + branch, nil
}
