package forge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/strata-iac/strata/controls"
)

// fakeGitHub serves the REST endpoints the controls read, with the shapes
// GitHub's REST reference documents, for repository acme/infra. Each
// request must carry the token.
type fakeGitHub struct {
	mu       sync.Mutex
	requests []string
	url      func() string
}

const head = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

func (f *fakeGitHub) routes() map[string]func(w http.ResponseWriter, r *http.Request) {
	out := map[string]func(w http.ResponseWriter, r *http.Request){}
	for _, part := range []map[string]func(w http.ResponseWriter, r *http.Request){f.accessRoutes(), f.pullRoutes(), f.repoRoutes()} {
		maps.Copy(out, part)
	}
	return out
}

// accessRoutes serves teams and repository roles.
func (f *fakeGitHub) accessRoutes() map[string]func(w http.ResponseWriter, r *http.Request) {
	notFound := func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
	}
	return map[string]func(w http.ResponseWriter, r *http.Request){
		"/orgs/acme/teams/sre/memberships/": func(w http.ResponseWriter, r *http.Request) {
			switch user := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]; user {
			case "carol":
				fmt.Fprint(w, `{"url":"https://api.github.com/teams/1/memberships/carol","role":"member","state":"active"}`)
			case "pat":
				fmt.Fprint(w, `{"url":"https://api.github.com/teams/1/memberships/pat","role":"member","state":"pending"}`)
			case "locked":
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/teams/members#get-team-membership-for-a-user","status":"403"}`)
			default:
				notFound(w)
			}
		},
		"/repos/acme/infra/collaborators/": func(w http.ResponseWriter, r *http.Request) {
			user := strings.Split(r.URL.Path, "/")[5]
			switch user {
			case "bob":
				fmt.Fprint(w, `{"permission":"write","role_name":"write","user":{"login":"bob","id":2,"type":"User"}}`)
			case "mia":
				fmt.Fprint(w, `{"permission":"write","role_name":"maintain","user":{"login":"mia","id":3,"type":"User"}}`)
			case "old":
				fmt.Fprint(w, `{"permission":"admin","user":{"login":"old","id":4,"type":"User"}}`)
			case "deployer":
				fmt.Fprint(w, `{"permission":"write","role_name":"deploy-bot","user":{"login":"deployer","id":6,"type":"User"}}`)
			case "gone":
				fmt.Fprint(w, `{"permission":"none","role_name":"none","user":{"login":"gone","id":5,"type":"User"}}`)
			default:
				notFound(w)
			}
		},
	}
}

// pullRoutes serves pull requests, their reviews and files, and
// commits' checks.
func (f *fakeGitHub) pullRoutes() map[string]func(w http.ResponseWriter, r *http.Request) {
	return map[string]func(w http.ResponseWriter, r *http.Request){
		"/repos/acme/infra/pulls/5": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"url":"https://api.github.com/repos/acme/infra/pulls/5","id":1,"number":5,"state":"open","locked":false,"title":"prod: bigger db",
"user":{"login":"alice","id":1,"type":"User"},"draft":true,"merged":false,"mergeable":false,"mergeable_state":"dirty","merge_commit_sha":null,
"head":{"label":"acme:db","ref":"db","sha":%q},"base":{"label":"acme:main","ref":"main","sha":"0000000000000000000000000000000000000000"},
"requested_reviewers":[{"login":"dave","id":6,"type":"User"}],"requested_teams":[{"id":1,"slug":"security","name":"Security"}]}`, head)
		},
		"/repos/acme/infra/pulls/5/files": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("page") == "2" {
				fmt.Fprint(w, `[{"sha":"bbcd538c8e72b8c175046e27cc8f907076331401","filename":".github/workflows/strata.yml","status":"modified","additions":1,"deletions":1,"changes":2}]`)
				return
			}
			w.Header().Set("Link", fmt.Sprintf(`<http://%s/api/v3/repos/acme/infra/pulls/5/files?per_page=100&page=2>; rel="next"`, r.Host))
			fmt.Fprint(w, `[{"sha":"bbcd538c8e72b8c175046e27cc8f907076331401","filename":"app/main.tf","status":"modified","additions":2,"deletions":0,"changes":2},
{"sha":"9b4d2c1e","filename":"strata.yml","previous_filename":".terrateam/config.yml","status":"renamed","additions":0,"deletions":0,"changes":0}]`)
		},
		"/repos/acme/infra/pulls/5/reviews": func(w http.ResponseWriter, r *http.Request) {
			review := func(id int, login, state, commit string) string {
				return fmt.Sprintf(`{"id":%d,"user":{"login":%q,"id":%d,"type":"User"},"body":"","state":%q,"commit_id":%q,"submitted_at":"2026-11-20T10:0%d:00Z"}`, id, login, id, state, commit, id)
			}
			if r.URL.Query().Get("page") == "2" {
				fmt.Fprintf(w, "[%s,%s]", review(5, "erin", "CHANGES_REQUESTED", head), review(6, "frank", "APPROVED", head))
				return
			}
			w.Header().Set("Link", fmt.Sprintf(`<http://%s/api/v3/repos/acme/infra/pulls/5/reviews?per_page=100&page=2>; rel="next", <http://%s/api/v3/repos/acme/infra/pulls/5/reviews?per_page=100&page=2>; rel="last"`, r.Host, r.Host))
			fmt.Fprintf(w, "[%s,%s,%s,%s]",
				review(1, "carol", "APPROVED", head),
				review(2, "dave", "APPROVED", "1111111111111111111111111111111111111111"),
				review(3, "erin", "APPROVED", head),
				review(4, "sam", "COMMENTED", head))
		},
		"/repos/acme/infra/commits/" + head + "/status": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"state":"failure","sha":%q,"total_count":2,"statuses":[
{"id":1,"state":"failure","description":"lint failed","target_url":null,"context":"lint","created_at":"2026-11-20T10:00:00Z"},
{"id":2,"state":"success","description":"ok","target_url":null,"context":"docs","created_at":"2026-11-20T10:00:00Z"}]}`, head)
		},
		"/repos/acme/infra/commits/" + head + "/check-runs": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"total_count":3,"check_runs":[
{"id":11,"name":"test","head_sha":"`+head+`","status":"completed","conclusion":"success","details_url":"https://github.com/acme/infra/actions/runs/99/job/1"},
{"id":12,"name":"e2e","head_sha":"`+head+`","status":"in_progress","conclusion":null,"details_url":"https://github.com/acme/infra/actions/runs/99/job/2"},
{"id":13,"name":"strata apply (wave 0)","head_sha":"`+head+`","status":"in_progress","conclusion":null,"details_url":"https://github.com/acme/infra/actions/runs/42/job/7"}]}`)
		},
		"/repos/acme/infra/commits/def/pulls": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"number":3,"state":"closed","merged_at":null,"merge_commit_sha":"aaa"},{"number":7,"state":"closed","merged_at":"2026-11-20T11:00:00Z","merge_commit_sha":"def"}]`)
		},
		"/repos/acme/infra/commits/fed/pulls": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[]`) },
		// fab was pushed straight to main; it is also in pull request 8,
		// merged into another branch by another commit.
		"/repos/acme/infra/commits/fab/pulls": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"number":8,"state":"closed","merged_at":"2026-11-20T11:00:00Z","merge_commit_sha":"bbb"}]`)
		},
	}
}

// repoRoutes serves the repository and its files.
func (f *fakeGitHub) repoRoutes() map[string]func(w http.ResponseWriter, r *http.Request) {
	notFound := func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
	}
	return map[string]func(w http.ResponseWriter, r *http.Request){
		"/repos/acme/infra": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"id":1,"name":"infra","full_name":"acme/infra","private":true,"owner":{"login":"acme","id":9,"type":"Organization"},"default_branch":"trunk"}`)
		},
		"/repos/acme/infra/contents/": func(w http.ResponseWriter, r *http.Request) {
			path := strings.TrimPrefix(r.URL.Path, "/repos/acme/infra/contents/")
			text, ok := branchFiles[r.URL.Query().Get("ref")+":"+path]
			if !ok {
				notFound(w)
				return
			}
			fmt.Fprintf(w, `{"type":"file","encoding":"base64","size":%d,"name":%q,"path":%q,"content":%q,"sha":"3d21ec53a331a6f037a91c368710b99387d012c1","url":"https://api.github.com/repos/acme/infra/contents/%s"}`,
				len(text), path[strings.LastIndex(path, "/")+1:], path, base64.StdEncoding.EncodeToString([]byte(text)), path)
		},
	}
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	if r.URL.Path == "/api/graphql" && r.Method == http.MethodPost && r.Header.Get("Authorization") == "Bearer t0ken" {
		f.graphQL(w, r)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/v3/") {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	r.URL.Path = strings.TrimPrefix(r.URL.Path, "/api/v3")
	if r.Header.Get("Authorization") != "Bearer t0ken" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	routes := f.routes()
	if h, ok := routes[r.URL.Path]; ok {
		h(w, r)
		return
	}
	for prefix, h := range routes {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(r.URL.Path, prefix) {
			h(w, r)
			return
		}
	}
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"message":"Not Found","status":"404"}`)
}

// graphQL answers the review decision query, as GitHub's GraphQL API
// does: CHANGES_REQUESTED for pull request 5, null (no review required)
// for any other.
func (f *fakeGitHub) graphQL(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string
		Variables struct {
			Owner, Name string
			Number      int
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.Contains(req.Query, "reviewDecision") || req.Variables.Owner != "acme" || req.Variables.Name != "infra" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"errors":[{"message":"Parse error"}]}`)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	decision := "null"
	if req.Variables.Number == 5 {
		decision = `"CHANGES_REQUESTED"`
	}
	fmt.Fprintf(w, `{"data":{"repository":{"pullRequest":{"reviewDecision":%s}}}}`, decision)
}

func newFake(t *testing.T, token string) (*GitHub, *fakeGitHub) {
	t.Helper()
	f := &fakeGitHub{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.url = func() string { return srv.URL }
	// An Enterprise Server's API lives under /api/v3, as GITHUB_API_URL
	// says there.
	g, err := NewGitHub(GitHubOptions{API: srv.URL + "/api/v3", Token: token, Repository: "acme/infra", Run: "42"})
	if err != nil {
		t.Fatal(err)
	}
	return g, f
}

func TestGitHubTeamsAndRoles(t *testing.T) {
	t.Parallel()
	g, _ := newFake(t, "t0ken")
	ctx := context.Background()
	for user, want := range map[string]bool{"carol": true, "pat": false, "bob": false} {
		if got, err := g.InTeam(ctx, user, "sre"); err != nil || got != want {
			t.Errorf("InTeam(%s, sre) = %v, %v; want %v", user, got, err, want)
		}
	}
	if _, err := g.InTeam(ctx, "locked", "sre"); err == nil || !strings.Contains(err.Error(), "403 Resource not accessible by integration") {
		t.Errorf("a 403 must be an error, got %v", err)
	}
	// A custom role is compared by its base permission.
	for user, want := range map[string]string{"bob": "write", "mia": "maintain", "old": "admin", "deployer": "write", "gone": "", "stranger": ""} {
		if got, err := g.Role(ctx, user); err != nil || got != want {
			t.Errorf("Role(%s) = %q, %v; want %q", user, got, err, want)
		}
	}
}

func TestGitHubPullRequest(t *testing.T) {
	t.Parallel()
	g, f := newFake(t, "t0ken")
	pr, err := g.PullRequest(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	no := false
	want := &controls.PullRequest{
		Name: "PR #5", Number: 5, Head: head, Base: "main", Draft: true, Mergeable: &no,
		// dave approved an earlier commit; erin took hers back; sam only
		// commented; frank's approval is on the second page.
		Approvers: []string{"carol", "frank"},
		// GitHub's own verdict, through GraphQL.
		ReviewDecision:   "changes_requested",
		PendingReviewers: []string{"dave", "team:security"},
		ChangesRequested: []string{"erin"},
		// The check run of this CI run (42) is left out.
		Checks: []controls.StatusCheck{{Name: "lint", State: "failure"}, {Name: "docs", State: "success"}, {Name: "test", State: "success"}, {Name: "e2e", State: "in_progress"}},
	}
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("pull request\n got %+v\nwant %+v", pr, want)
	}
	if n := len(f.requests); n != 6 {
		t.Errorf("%d requests, want 6 (the pull request, two pages of reviews, the review decision, statuses, check runs): %v", n, f.requests)
	}
}

func TestGitHubMergedPullRequest(t *testing.T) {
	t.Parallel()
	g, _ := newFake(t, "t0ken")
	for sha, want := range map[string]int{"def": 7, "fed": 0, "fab": 0} {
		if got, err := g.MergedPullRequest(context.Background(), sha); err != nil || got != want {
			t.Errorf("MergedPullRequest(%s) = %d, %v; want %d", sha, got, err, want)
		}
	}
}

// TestGitHubFailsClosed: bad credentials are an error, which the controls
// turn into a denial.
func TestGitHubFailsClosed(t *testing.T) {
	t.Parallel()
	g, _ := newFake(t, "wrong")
	if _, err := g.InTeam(context.Background(), "carol", "sre"); err == nil || !strings.Contains(err.Error(), "401 Bad credentials") {
		t.Errorf("InTeam with a bad token: %v, want the 401", err)
	}
	if _, err := NewGitHub(GitHubOptions{API: "https://api.github.com", Repository: "acme/infra"}); err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Errorf("no token: %v", err)
	}
	if _, err := NewGitHub(GitHubOptions{API: "https://api.github.com", Token: "x", Repository: "acme"}); err == nil {
		t.Error("a repository without an owner is accepted")
	}
}
