package forge

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/controls"
)

// fakeGitLab serves the REST endpoints the controls read, with the
// shapes GitLab's REST reference documents, for project 42. Each request
// must carry the token.
type fakeGitLab struct {
	url string
}

const mrHead = "7b5c3cc8be40ee161ae89a06bba6229da1032a0c"

var gitlabUsers = map[string]int{"alice": 1, "bob": 2, "carol": 3, "dave": 4, "erin": 5, "pat": 6}

func gitlabUser(name string) string {
	return fmt.Sprintf(`{"id":%d,"username":%q,"name":%q,"state":"active","avatar_url":"https://gitlab.example/a.png","web_url":"https://gitlab.example/%s"}`, gitlabUsers[name], name, strings.ToUpper(name[:1])+name[1:], name)
}

func (f *fakeGitLab) routes() map[string]func(w http.ResponseWriter, r *http.Request) {
	out := map[string]func(w http.ResponseWriter, r *http.Request){}
	for _, part := range []map[string]func(w http.ResponseWriter, r *http.Request){f.accessRoutes(), f.mergeRequestRoutes(), f.repoRoutes()} {
		maps.Copy(out, part)
	}
	return out
}

// accessRoutes serves users, groups and project members.
func (f *fakeGitLab) accessRoutes() map[string]func(w http.ResponseWriter, r *http.Request) {
	member := func(w http.ResponseWriter, name, state string, level int) {
		fmt.Fprintf(w, `{"id":%d,"username":%q,"name":%q,"state":%q,"access_level":%d,"created_at":"2026-01-01T00:00:00.000Z","expires_at":null}`, gitlabUsers[name], name, name, state, level)
	}
	return map[string]func(w http.ResponseWriter, r *http.Request){
		"/users": func(w http.ResponseWriter, r *http.Request) {
			name := r.URL.Query().Get("username")
			if _, ok := gitlabUsers[name]; !ok {
				fmt.Fprint(w, `[]`)
				return
			}
			fmt.Fprintf(w, "[%s]", gitlabUser(name))
		},
		"/groups/platform/sre/members/": func(w http.ResponseWriter, r *http.Request) {
			switch id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]; id {
			case "3":
				member(w, "carol", "active", 30)
			case "6":
				member(w, "pat", "awaiting", 30)
			default:
				gitlabNotFoundBody(w, "404 Not found")
			}
		},
		"/projects/42/members/all/": func(w http.ResponseWriter, r *http.Request) {
			switch id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]; id {
			case "1":
				member(w, "alice", "active", 50)
			case "2":
				member(w, "bob", "active", 30)
			case "5":
				member(w, "erin", "active", 20)
			default:
				gitlabNotFoundBody(w, "404 Not found")
			}
		},
	}
}

// mergeRequestRoutes serves merge requests, their approvals, reviewers
// and diffs, and commits' statuses.
func (f *fakeGitLab) mergeRequestRoutes() map[string]func(w http.ResponseWriter, r *http.Request) {
	return map[string]func(w http.ResponseWriter, r *http.Request){
		"/projects/42/merge_requests/5": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"id":1005,"iid":5,"project_id":42,"title":"prod: bigger db","state":"opened","draft":true,"sha":%q,
"merge_commit_sha":null,"squash_commit_sha":null,"has_conflicts":true,"detailed_merge_status":"conflict","source_branch":"db","target_branch":"main",
"author":%s,"merged_at":null}`, mrHead, gitlabUser("alice"))
		},
		"/projects/42/merge_requests/5/approvals": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"id":1005,"iid":5,"project_id":42,"title":"prod: bigger db","state":"opened","merge_status":"cannot_be_merged",
"approved":false,"approvals_required":2,"approvals_left":1,"approved_by":[{"user":%s}],"has_approval_rules":true,"user_has_approved":false,"user_can_approve":true}`, gitlabUser("carol"))
		},
		"/projects/42/merge_requests/5/diffs": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"old_path":"app/main.tf","new_path":"app/main.tf","a_mode":"100644","b_mode":"100644","diff":"","new_file":false,"renamed_file":false,"deleted_file":false},
{"old_path":".terrateam/config.yml","new_path":"strata.yml","a_mode":"100644","b_mode":"100644","diff":"","new_file":false,"renamed_file":true,"deleted_file":false}]`)
		},
		"/projects/42/merge_requests/5/reviewers": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `[{"user":%s,"state":"unreviewed","created_at":"2026-11-20T10:00:00.000Z"},{"user":%s,"state":"requested_changes","created_at":"2026-11-20T10:00:00.000Z"},{"user":%s,"state":"approved","created_at":"2026-11-20T10:00:00.000Z"}]`,
				gitlabUser("dave"), gitlabUser("erin"), gitlabUser("carol"))
		},
		"/projects/42/repository/commits/" + mrHead + "/statuses": func(w http.ResponseWriter, r *http.Request) {
			status := func(id int, name, status string, allowFailure bool, pipeline int) string {
				return fmt.Sprintf(`{"id":%d,"sha":%q,"ref":"db","status":%q,"name":%q,"allow_failure":%t,"pipeline_id":%d,"created_at":"2026-11-20T10:00:00.000Z","description":null,"target_url":"https://gitlab.example/-/jobs/%d","author":%s}`,
					id, mrHead, status, name, allowFailure, pipeline, id, gitlabUser("alice"))
			}
			if r.URL.Query().Get("page") == "2" {
				fmt.Fprintf(w, "[%s]", status(4, "e2e", "running", false, 99))
				return
			}
			w.Header().Set("X-Next-Page", "2")
			w.Header().Set("X-Page", "1")
			w.Header().Set("X-Total-Pages", "2")
			fmt.Fprintf(w, "[%s,%s,%s,%s]", status(1, "lint", "failed", false, 99), status(2, "test", "success", false, 99),
				status(3, "deploy", "manual", true, 99), status(5, "strata plan", "running", false, 7))
		},
		"/projects/42/repository/commits/def/merge_requests": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"iid":3,"state":"closed","merge_commit_sha":null},{"iid":7,"state":"merged","merge_commit_sha":null,"squash_commit_sha":"def"}]`)
		},
		"/projects/42/repository/commits/fed/merge_requests": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[]`) },
	}
}

// repoRoutes serves the project and its files.
func (f *fakeGitLab) repoRoutes() map[string]func(w http.ResponseWriter, r *http.Request) {
	return map[string]func(w http.ResponseWriter, r *http.Request){
		"/projects/42": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"id":42,"name":"infra","path_with_namespace":"platform/infra","default_branch":"trunk","visibility":"private"}`)
		},
		"/projects/42/repository/files/": func(w http.ResponseWriter, r *http.Request) {
			path := strings.TrimPrefix(r.URL.Path, "/projects/42/repository/files/")
			text, ok := branchFiles[r.URL.Query().Get("ref")+":"+path]
			if !ok {
				gitlabNotFoundBody(w, "404 File Not Found")
				return
			}
			fmt.Fprintf(w, `{"file_name":%q,"file_path":%q,"size":%d,"encoding":"base64","content":%q,"content_sha256":%q,"ref":%q,"blob_id":"79f7bbd25901e8334750839545a9bd021f0e4c83","commit_id":"d5a3ff139356ce33e37e73add446f16869741b50","last_commit_id":"570e7b2abdd848b95f2f578043fc23bd6f6fd24d"}`,
				path[strings.LastIndex(path, "/")+1:], path, len(text), base64.StdEncoding.EncodeToString([]byte(text)), sha256Hex(text), r.URL.Query().Get("ref"))
		},
	}
}

func gitlabNotFoundBody(w http.ResponseWriter, msg string) {
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, `{"message":%q}`, msg)
}

func (f *fakeGitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, "/api/v4")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	r.URL.Path = path
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("PRIVATE-TOKEN") != "glpat-t0ken" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"401 Unauthorized"}`)
		return
	}
	routes := f.routes()
	if h, ok := routes[path]; ok {
		h(w, r)
		return
	}
	for prefix, h := range routes {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(path, prefix) {
			h(w, r)
			return
		}
	}
	gitlabNotFoundBody(w, "404 Not Found")
}

func newFakeGitLab(t *testing.T) *fakeGitLab {
	t.Helper()
	f := &fakeGitLab{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/api/v4"
	return f
}

func gitlabEnv(f *fakeGitLab, more ...string) []string {
	return append([]string{"CI_API_V4_URL=" + f.url, "STRATA_GITLAB_TOKEN=glpat-t0ken", "CI_PROJECT_ID=42", "CI_PIPELINE_ID=7",
		"GITLAB_USER_LOGIN=bob", "CI_COMMIT_SHA=fed"}, more...)
}

func TestGitLabGroupsAndRoles(t *testing.T) {
	t.Parallel()
	f := newFakeGitLab(t)
	g, err := NewGitLabCI(gitlabEnv(f), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A team: matcher names a group by its full path.
	for user, want := range map[string]bool{"carol": true, "pat": false, "bob": false, "nobody": false} {
		if got, err := g.InTeam(ctx, user, "platform/sre"); err != nil || got != want {
			t.Errorf("InTeam(%s, platform/sre) = %v, %v; want %v", user, got, err, want)
		}
	}
	// Owner (50) is maintain, developer (30) write, reporter (20) read.
	for user, want := range map[string]string{"alice": "maintain", "bob": "write", "erin": "read", "dave": "", "nobody": ""} {
		if got, err := g.Role(ctx, user); err != nil || got != want {
			t.Errorf("Role(%s) = %q, %v; want %q", user, got, err, want)
		}
	}
}

func TestGitLabMergeRequest(t *testing.T) {
	t.Parallel()
	f := newFakeGitLab(t)
	g, err := NewGitLabCI(gitlabEnv(f, "CI_MERGE_REQUEST_IID=5"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := g.PullRequest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := &controls.PullRequest{
		Name: "MR !5", Number: 5, Head: mrHead, Base: "main", Draft: true, Mergeable: &no,
		Approvers: []string{"carol"}, ReviewDecision: "review_required",
		PendingReviewers: []string{"dave"}, ChangesRequested: []string{"erin"},
		// The manual job may fail; this pipeline's (7) own job is left
		// out; e2e is on the second page.
		Checks: []controls.StatusCheck{{Name: "lint", State: "failure"}, {Name: "test", State: "success"}, {Name: "e2e", State: "running"}},
	}
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("merge request\n got %+v\nwant %+v", pr, want)
	}
}

func TestGitLabChangedFiles(t *testing.T) {
	t.Parallel()
	f := newFakeGitLab(t)
	g, err := NewGitLabCI(gitlabEnv(f, "CI_MERGE_REQUEST_IID=5"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.ChangedFiles(context.Background())
	if want := []string{"app/main.tf", "strata.yml", ".terrateam/config.yml"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("changed files %v, %v; want %v", got, err, want)
	}
}

func TestGitLabMergedMergeRequest(t *testing.T) {
	t.Parallel()
	f := newFakeGitLab(t)
	g, err := NewGitLabCI(gitlabEnv(f), nil)
	if err != nil {
		t.Fatal(err)
	}
	for sha, want := range map[string]int{"def": 7, "fed": 0} {
		if got, err := g.MergedPullRequest(context.Background(), sha); err != nil || got != want {
			t.Errorf("MergedPullRequest(%s) = %d, %v; want %d", sha, got, err, want)
		}
	}
}

// TestGitLabCIDefaultBranchConfig: a merge request pipeline reads the
// default branch's config; a pipeline on the default branch reads none.
func TestGitLabCIDefaultBranchConfig(t *testing.T) {
	t.Parallel()
	f := newFakeGitLab(t)
	ctx := context.Background()
	paths := []string{"strata.yml", ".terrateam/config.yml"}
	mr, err := NewGitLabCI(gitlabEnv(f, "CI_MERGE_REQUEST_IID=5", "CI_DEFAULT_BRANCH=main"), paths)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, missing, err := mr.DefaultBranchConfig(ctx); err != nil || missing != "" || cfg == nil || cfg.AccessControl == nil {
		t.Errorf("merge request: %+v, %q, %v; want main's .terrateam/config.yml", cfg, missing, err)
	}
	onMain, _ := NewGitLabCI(gitlabEnv(f, "CI_COMMIT_BRANCH=main", "CI_DEFAULT_BRANCH=main"), paths)
	if cfg, missing, err := onMain.DefaultBranchConfig(ctx); cfg != nil || missing != "" || err != nil {
		t.Errorf("on main: %+v, %q, %v; want nothing read", cfg, missing, err)
	}
	// No CI_DEFAULT_BRANCH: the API says trunk.
	branch, _ := NewGitLabCI(gitlabEnv(f, "CI_COMMIT_BRANCH=feature"), paths)
	if cfg, missing, err := branch.DefaultBranchConfig(ctx); err != nil || missing != "" || cfg == nil || cfg.AccessControl != nil {
		t.Errorf("a branch: %+v, %q, %v; want trunk's strata.yml", cfg, missing, err)
	}
}

// TestGitLabFailsClosed: a bad token is an error; the environment must
// name the project, a token and the user.
func TestGitLabFailsClosed(t *testing.T) {
	t.Parallel()
	f := newFakeGitLab(t)
	g, err := NewGitLabCI(gitlabEnv(f, "STRATA_GITLAB_TOKEN=wrong"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.InTeam(context.Background(), "carol", "platform/sre"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("InTeam with a bad token: %v, want the 401", err)
	}
	for what, env := range map[string][]string{
		"no project": {"STRATA_GITLAB_TOKEN=x", "GITLAB_USER_LOGIN=bob"},
		"no token":   {"CI_PROJECT_ID=42", "GITLAB_USER_LOGIN=bob"},
		"no user":    {"CI_PROJECT_ID=42", "STRATA_GITLAB_TOKEN=x"},
		"a bad IID":  {"CI_PROJECT_ID=42", "STRATA_GITLAB_TOKEN=x", "GITLAB_USER_LOGIN=bob", "CI_MERGE_REQUEST_IID=five"},
	} {
		if _, err := NewGitLabCI(env, nil); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}
