package forge

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/stacks/config"
)

// GitLabCI is what a GitLab CI job knows of the command it runs, for the
// controls (controls.Source): who runs it, for which merge request, and
// the default branch's config (docs/controls.md#in-a-run).
type GitLabCI struct {
	*GitLab
	actor string
	// mr is the merge request of a merge request pipeline; 0 otherwise.
	mr                         int
	sha, branch, defaultBranch string
	configPaths                []string
}

// NewGitLabCI reads a GitLab CI job's environment through ciplatform
// (its GitLab job, whatever GITLAB_CI says): the API's URL, the token
// (STRATA_GITLAB_TOKEN or GITLAB_TOKEN: the job token cannot read members
// or approvals), the project, the pipeline, the user, the merge request,
// the commit, the branch and the default branch. configPaths are where
// the project's config may sit in the repository.
func NewGitLabCI(env []string, configPaths []string) (*GitLabCI, error) {
	j := ciplatform.Read(env).GitLab
	api := j.API
	if api == "" {
		api = "https://gitlab.com/api/v4"
	}
	gl, err := NewGitLab(GitLabOptions{API: api, Token: j.Token.Value(), Project: j.Repository, Pipeline: j.RunID})
	if err != nil {
		return nil, err
	}
	c := &GitLabCI{GitLab: gl, actor: j.Actor, sha: j.Commit,
		branch: j.Branch, defaultBranch: j.DefaultBranch, configPaths: configPaths}
	if iid := j.PullRequest; iid != "" {
		if c.mr, err = strconv.Atoi(iid); err != nil {
			return nil, fmt.Errorf("CI_MERGE_REQUEST_IID %q: expected a number", iid)
		}
	}
	if c.actor == "" {
		return nil, errors.New("GITLAB_USER_LOGIN is not set: the controls need to know who runs the command")
	}
	return c, nil
}

// Actor is who runs the command: the user who started the pipeline.
func (c *GitLabCI) Actor() string { return c.actor }

// PullRequest is the pipeline's merge request or, on a branch, the one
// whose merge made the commit; nil when there is none.
func (c *GitLabCI) PullRequest(ctx context.Context) (*controls.PullRequest, error) {
	return pullRequestOf(ctx, c.GitLab, c.mr, c.sha)
}

// DefaultBranchConfig is the default branch's config, when the pipeline
// does not run on that branch (docs/controls.md#the-default-branchs-controls).
func (c *GitLabCI) DefaultBranchConfig(ctx context.Context) (*config.Config, string, error) {
	branch := c.defaultBranch
	if branch == "" {
		p, _, err := c.client.Projects.GetProject(c.project, nil, gitlab.WithContext(ctx))
		if err != nil {
			return nil, "", fmt.Errorf("the project's default branch: %w", err)
		}
		branch = p.DefaultBranch
	}
	if c.mr == 0 && c.branch == branch {
		return nil, "", nil
	}
	return branchConfig(ctx, c.GitLab, branch, c.configPaths)
}

// SetApplyStatus sets the apply status of the pipeline's merge request
// on its head commit; set is false in a pipeline for no merge request
// (docs/controls.md#the-apply-status).
func (c *GitLabCI) SetApplyStatus(ctx context.Context, state, description, url string) (set bool, err error) {
	if c.mr == 0 {
		return false, nil
	}
	mr, _, err := c.client.MergeRequests.GetMergeRequest(c.project, int64(c.mr), nil, gitlab.WithContext(ctx))
	if err != nil {
		return false, fmt.Errorf("MR !%d: %w", c.mr, err)
	}
	return true, c.SetStatus(ctx, mr.SHA, controls.ApplyStatusName, state, description, url)
}

// ChangedFiles are the files the pipeline's merge request changes, a
// rename's old path too; nil in a pipeline for no merge request.
func (c *GitLabCI) ChangedFiles(ctx context.Context) ([]string, error) {
	if c.mr == 0 {
		return nil, nil
	}
	out := []string{}
	opt := &gitlab.ListMergeRequestDiffsOptions{ListOptions: gitlab.ListOptions{PerPage: 100}}
	for {
		diffs, resp, err := c.client.MergeRequests.ListMergeRequestDiffs(c.project, int64(c.mr), opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("the files of MR !%d: %w", c.mr, err)
		}
		for _, d := range diffs {
			out = append(out, d.NewPath)
			if d.OldPath != d.NewPath {
				out = append(out, d.OldPath)
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// ConfigPaths are where the project's config may sit in the repository.
func (c *GitLabCI) ConfigPaths() []string { return c.configPaths }
