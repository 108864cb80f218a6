package forge

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/strata-iac/strata/controls"
)

// GitLab is a project on GitLab.com or a self-managed GitLab.
type GitLab struct {
	client  *gitlab.Client
	project string
	// pipeline is this CI pipeline's ID: its own jobs are not counted
	// among the merge request's checks.
	pipeline int64
	users    map[string]int64
	// self is who the token posts notes as, asked once.
	self identity
}

// GitLabOptions locate a project and authenticate to its API.
type GitLabOptions struct {
	// API is the REST API's URL (CI_API_V4_URL): https://gitlab.com/api/v4.
	API   string
	Token string
	// Project is the project's ID or path (CI_PROJECT_ID).
	Project string
	// Pipeline is the CI pipeline's ID (CI_PIPELINE_ID), whose own jobs
	// are left out of the status checks.
	Pipeline string
}

// NewGitLab returns a client of the project's API, with a timeout on each
// request and no retries: a forge that does not answer refuses, never
// allows.
func NewGitLab(o GitLabOptions) (*GitLab, error) {
	if o.Project == "" {
		return nil, errors.New("no GitLab project: the controls need CI_PROJECT_ID")
	}
	if o.Token == "" {
		return nil, errors.New("no GitLab token: the controls need one to read groups, roles and approvals (STRATA_GITLAB_TOKEN)")
	}
	c, err := gitlab.NewClient(o.Token, gitlab.WithBaseURL(o.API), gitlab.WithoutRetries(),
		gitlab.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		return nil, fmt.Errorf("GitLab API %s: %w", o.API, err)
	}
	g := &GitLab{client: c, project: o.Project, users: map[string]int64{}}
	if o.Pipeline != "" {
		if g.pipeline, err = strconv.ParseInt(o.Pipeline, 10, 64); err != nil {
			return nil, fmt.Errorf("CI_PIPELINE_ID %q: expected a number", o.Pipeline)
		}
	}
	return g, nil
}

// Self is who the token posts notes as: the user GET /user names (a
// project or group token's bot user). "" when it cannot be learned: then
// strata edits no note, and posts a new one.
func (g *GitLab) Self(ctx context.Context) string {
	return g.self.of(func() string {
		u, _, err := g.client.Users.CurrentUser(gitlab.WithContext(ctx))
		if err != nil || u == nil {
			return ""
		}
		return u.Username
	})
}

// gitlabNotFound says the API answered 404.
func gitlabNotFound(resp *gitlab.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusNotFound
}

// userID is the ID of the user with that username; found is false when
// there is none.
func (g *GitLab) userID(ctx context.Context, username string) (id int64, found bool, err error) {
	if id, ok := g.users[username]; ok {
		return id, id != 0, nil
	}
	users, _, err := g.client.Users.ListUsers(&gitlab.ListUsersOptions{Username: &username}, gitlab.WithContext(ctx))
	if err != nil {
		return 0, false, fmt.Errorf("user %s: %w", username, err)
	}
	if len(users) > 0 {
		id = users[0].ID
	}
	g.users[username] = id
	return id, id != 0, nil
}

// InTeam says whether user is an active direct member of the group whose
// path is team, as Terrateam reads a team: on GitLab.
func (g *GitLab) InTeam(ctx context.Context, user, team string) (bool, error) {
	id, found, err := g.userID(ctx, user)
	if err != nil || !found {
		return false, err
	}
	m, resp, err := g.client.GroupMembers.GetGroupMember(team, id, gitlab.WithContext(ctx))
	if gitlabNotFound(resp) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.State == "" || m.State == "active", nil
}

// Role is user's role in the project, from the access level it holds
// there, inherited ones included, mapped as Terrateam maps them: guest,
// planner and reporter are read; developer write; maintainer and owner
// maintain; an administrator admin. "" for none.
func (g *GitLab) Role(ctx context.Context, user string) (string, error) {
	id, found, err := g.userID(ctx, user)
	if err != nil || !found {
		return "", err
	}
	m, resp, err := g.client.ProjectMembers.GetInheritedProjectMember(g.project, id, gitlab.WithContext(ctx))
	if gitlabNotFound(resp) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	switch level := int(m.AccessLevel); {
	case level >= 60:
		return "admin", nil
	case level >= 40:
		return "maintain", nil
	case level >= 30:
		return "write", nil
	case level >= 5:
		return "read", nil
	}
	return "", nil
}

// mergeStatusPending are the detailed merge statuses of a merge request
// GitLab has not yet checked for conflicts.
var mergeStatusPending = map[string]bool{"checking": true, "unchecked": true, "preparing": true, "approvals_syncing": true}

// PullRequest reads merge request iid: its state, who approved it, who
// is still asked to review it or asks for changes, and its head commit's
// statuses but those of this pipeline.
func (g *GitLab) PullRequest(ctx context.Context, iid int) (*controls.PullRequest, error) {
	mr, _, err := g.client.MergeRequests.GetMergeRequest(g.project, int64(iid), nil, gitlab.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	out := &controls.PullRequest{Name: fmt.Sprintf("MR !%d", iid), Number: iid, Head: mr.SHA, Base: mr.TargetBranch, Draft: mr.Draft, Merged: mr.State == "merged", Closed: mr.State == "closed"}
	if !mergeStatusPending[mr.DetailedMergeStatus] {
		clean := !mr.HasConflicts
		out.Mergeable = &clean
	}
	appr, _, err := g.client.MergeRequestApprovals.GetConfiguration(g.project, int64(iid), gitlab.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("the approvals of MR !%d: %w", iid, err)
	}
	for _, a := range appr.ApprovedBy {
		if a != nil && a.User != nil {
			out.Approvers = append(out.Approvers, a.User.Username)
		}
	}
	// GitLab's verdict is whether the project's approval rules are met.
	if appr.HasApprovalRules || appr.ApprovalsRequired > 0 {
		out.ReviewDecision = "review_required"
		if appr.Approved {
			out.ReviewDecision = "approved"
		}
	}
	reviewers, _, err := g.client.MergeRequests.GetMergeRequestReviewers(g.project, int64(iid), gitlab.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("the reviewers of MR !%d: %w", iid, err)
	}
	for _, r := range reviewers {
		if r == nil || r.User == nil {
			continue
		}
		switch r.State {
		case "unreviewed", "review_started":
			out.PendingReviewers = append(out.PendingReviewers, r.User.Username)
		case "requested_changes":
			out.ChangesRequested = append(out.ChangesRequested, r.User.Username)
		}
	}
	if out.Checks, err = g.checks(ctx, mr.SHA); err != nil {
		return nil, err
	}
	return out, nil
}

// checks are the latest status of each job and external status of a
// commit, this pipeline's own left out; a job allowed to fail (a manual
// one, by default) holds nothing back.
func (g *GitLab) checks(ctx context.Context, sha string) ([]controls.StatusCheck, error) {
	var out []controls.StatusCheck
	opt := &gitlab.GetCommitStatusesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}}
	for {
		statuses, resp, err := g.client.Commits.GetCommitStatuses(g.project, sha, opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("the statuses of %s: %w", sha, err)
		}
		for _, s := range statuses {
			if s.PipelineID == g.pipeline && g.pipeline != 0 || s.AllowFailure {
				continue
			}
			state := s.Status
			switch state {
			case "failed":
				state = "failure"
			case "canceled":
				state = "cancelled"
			}
			out = append(out, controls.StatusCheck{Name: s.Name, State: state})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// MergedPullRequest is the IID of the merge request whose merge made
// commit sha (its merge or squash commit), or 0 when none did.
func (g *GitLab) MergedPullRequest(ctx context.Context, sha string) (int, error) {
	mrs, _, err := g.client.Commits.ListMergeRequestsByCommit(g.project, sha, gitlab.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	for _, mr := range mrs {
		if mr.State == "merged" && (mr.MergeCommitSHA == sha || mr.SquashCommitSHA == sha) {
			return int(mr.IID), nil
		}
	}
	return 0, nil
}

// File reads one file of the project at ref; found is false when the
// API answers 404.
func (g *GitLab) File(ctx context.Context, path, ref string) (data []byte, found bool, err error) {
	f, resp, err := g.client.RepositoryFiles.GetFile(g.project, path, &gitlab.GetFileOptions{Ref: &ref}, gitlab.WithContext(ctx))
	if gitlabNotFound(resp) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", path, ref, err)
	}
	// An answer that is not the file asked for is an error, never an
	// empty config (docs/controls.md#what-strata-trusts-of-the-forge).
	if f.FilePath != path {
		return nil, false, fmt.Errorf("%s at %s: the files API answered for %q", path, ref, f.FilePath)
	}
	if f.Encoding != "base64" {
		return nil, false, fmt.Errorf("%s at %s: encoding %q, expected base64", path, ref, f.Encoding)
	}
	data, err = base64.StdEncoding.DecodeString(f.Content)
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", path, ref, err)
	}
	if int64(len(data)) != f.Size {
		return nil, false, fmt.Errorf("%s at %s: %d bytes of content, the answer says %d", path, ref, len(data), f.Size)
	}
	// The client reads a missing content as "": its checksum tells an
	// empty file from an answer without one.
	if sum := sha256.Sum256(data); f.SHA256 != hex.EncodeToString(sum[:]) {
		return nil, false, fmt.Errorf("%s at %s: the content does not match its content_sha256 %q", path, ref, f.SHA256)
	}
	return data, true, nil
}

// visible says the API shows the token the project: an error when it
// does not, a 404 among them.
func (g *GitLab) visible(ctx context.Context) error {
	if _, _, err := g.client.Projects.GetProject(g.project, nil, gitlab.WithContext(ctx)); err != nil {
		return fmt.Errorf("project %s: %w", g.project, err)
	}
	return nil
}

// SetStatus sets the commit status name of commit sha: pending, success
// or failure (GitLab's failed), with a description and a link.
func (g *GitLab) SetStatus(ctx context.Context, sha, name, state, description, url string) error {
	if state == controls.StatusFailure {
		state = "failed"
	}
	opt := &gitlab.SetCommitStatusOptions{State: gitlab.BuildStateValue(state), Name: &name, Description: &description}
	if url != "" {
		opt.TargetURL = &url
	}
	if _, _, err := g.client.Commits.SetCommitStatus(g.project, sha, opt, gitlab.WithContext(ctx)); err != nil {
		return fmt.Errorf("setting the status %q of %s: %w", name, sha, err)
	}
	return nil
}
