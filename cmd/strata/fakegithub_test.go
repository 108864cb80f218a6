package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// fakeGitHub serves the REST endpoints strata's controls read, for
// repository acme/infra, under /api/v3 as GitHub Enterprise Server does,
// with the response shapes of GitHub's REST reference. Tests change its
// teams, pull requests and files between runs.
type fakeGitHub struct {
	forgeState
	token string
	url   string
}

// forgeState is what a fake forge knows: teams, roles, pull requests and
// the default branch's files. Tests change it between runs.
type forgeState struct {
	mu    sync.Mutex
	teams map[string][]string // team -> active members
	roles map[string]string   // login -> role
	pulls map[int]*fakePull
	// files are the default branch's files, by path.
	files map[string]string
	// answers are what the forge answers, 200, in place of a file of the
	// default branch, by path: bodies as they come.
	answers map[string]string
	// hidden: the token cannot see the repository, which answers 404.
	hidden bool
	// calls are the requests served, by method and path.
	calls []string
	// statuses are the commit statuses set, "sha name: state: description".
	statuses []string
	// comments are the comments on each pull request: bodies by ID, and
	// their authors by ID (bot when not set).
	comments       map[int]map[int]string
	commentAuthors map[int]string
	// commentEdited are the comments changed after they were posted.
	commentEdited map[int]bool
	// bot is who strata's token posts as: GitHub Actions' bot, whose
	// token GET /user answers 403, or a GitLab token's bot user.
	bot    string
	nextID int
	// merges are the merges made, "N method sha" ("N sha" on GitLab),
	// and deleted the branches deleted.
	merges, deleted []string
	// issues are the repository's issues, by number.
	issues map[int]*fakeIssue
}

// fakeIssue is one issue.
type fakeIssue struct {
	title, body string
	open        bool
}

// openIssues are the open issues' numbers, in order.
func (f *forgeState) openIssues() []int {
	var out []int
	for _, n := range slices.Sorted(maps.Keys(f.issues)) {
		if f.issues[n].open {
			out = append(out, n)
		}
	}
	return out
}

// editIssue sets issue n's body, when one is given, and closes it when
// closing; false when there is no issue n.
func (f *forgeState) editIssue(n int, body string, closing bool) bool {
	is := f.issues[n]
	if is == nil {
		return false
	}
	if body != "" {
		is.body = body
	}
	if closing {
		is.open = false
	}
	return true
}

// newIssue files an issue and returns its number.
func (f *forgeState) newIssue(title, body string) int {
	n := 100 + len(f.issues)
	f.issues[n] = &fakeIssue{title: title, body: body, open: true}
	return n
}

// comment adds or edits a comment of pull request n (id 0: a new one)
// and returns its ID.
func (f *forgeState) comment(n, id int, body string) int {
	if f.comments[n] == nil {
		f.comments[n] = map[int]string{}
	}
	if id == 0 {
		f.nextID++
		id = 1000 + f.nextID
	}
	f.comments[n][id] = body
	return id
}

// commentsOf are pull request n's comments in order, for the fakes to list.
func (f *forgeState) commentsOf(n int) []map[string]any {
	out := []map[string]any{}
	for _, id := range slices.Sorted(maps.Keys(f.comments[n])) {
		author := f.commentAuthors[id]
		if author == "" {
			author = f.bot
		}
		// GitHub's comment names its author as user, GitLab's note as
		// author: each client reads its own.
		// An edited comment's updated_at is past its created_at, on both
		// forges.
		updated := "2026-11-20T10:00:00Z"
		if f.commentEdited[id] {
			updated = "2026-11-20T10:05:00Z"
		}
		out = append(out, map[string]any{"id": id, "body": f.comments[n][id], "user": map[string]any{"login": author, "id": id, "type": "User"},
			"author": map[string]any{"id": id, "username": author}, "system": false,
			"created_at": "2026-11-20T10:00:00Z", "updated_at": updated})
	}
	return out
}

func newForgeState() forgeState {
	return forgeState{answers: map[string]string{}, teams: map[string][]string{}, roles: map[string]string{}, pulls: map[int]*fakePull{}, files: map[string]string{}, comments: map[int]map[int]string{}, commentAuthors: map[int]string{}, commentEdited: map[int]bool{}, issues: map[int]*fakeIssue{}}
}

func (f *forgeState) state() *forgeState { return f }

// fakePull is one pull request.
type fakePull struct {
	head        string
	draft       bool
	mergeable   bool
	merged      bool
	mergeCommit string
	approvals   []string // logins that approved the head commit
	// decision is GitHub's review decision (APPROVED, CHANGES_REQUESTED,
	// REVIEW_REQUIRED), "" for none.
	decision string
	statuses map[string]string
}

// newFakeGitHub serves a fake GitHub on loopback for the test's life.
func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{forgeState: newForgeState(), token: "ghs_fake"}
	f.bot = "github-actions[bot]"
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/api/v3"
	return f
}

// jobEnv is the environment of a GitHub Actions job that runs actor's
// comment on pull request n, with the token or without.
func (f *fakeGitHub) jobEnv(t *testing.T, dir, actor string, n int, token bool) []string {
	t.Helper()
	env := f.env(t, dir, actor, "issue_comment", comment(n, actor), "GITHUB_REF=refs/heads/main")
	if !token {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GITHUB_TOKEN=") })
	}
	return env
}

// comment is the payload of an issue_comment event: login commented on
// pull request n.
func comment(n int, login string) string {
	return `{"action":"created","issue":{"number":` + strconv.Itoa(n) + `,"pull_request":{"url":"https://api.github.com/repos/acme/infra/pulls/` + strconv.Itoa(n) +
		`"}},"comment":{"id":1,"body":"please apply","user":{"login":"` + login + `","id":7,"type":"User"}},"repository":{"full_name":"acme/infra","default_branch":"main"}}`
}

// env is a GitHub Actions job's environment for a command by actor on
// event, its payload written to dir.
func (f *fakeGitHub) env(t *testing.T, dir, actor, event, payload string, more ...string) []string {
	t.Helper()
	path := dir + "/event-" + strconv.Itoa(len(f.calls)) + ".json"
	testenv.WriteFile(t, path, payload)
	return append([]string{"GITHUB_ACTIONS=true", "GITHUB_API_URL=" + f.url, "GITHUB_TOKEN=" + f.token,
		"GITHUB_REPOSITORY=acme/infra", "GITHUB_RUN_ID=42", "GITHUB_ACTOR=" + actor,
		"GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + path, "GITHUB_SERVER_URL=https://github.com"}, more...)
}

var (
	teamMember   = regexp.MustCompile(`^/orgs/acme/teams/([^/]+)/memberships/([^/]+)$`)
	collaborator = regexp.MustCompile(`^/repos/acme/infra/collaborators/([^/]+)/permission$`)
	pull         = regexp.MustCompile(`^/repos/acme/infra/pulls/([0-9]+)(/reviews)?$`)
	commitStatus = regexp.MustCompile(`^/repos/acme/infra/commits/([^/]+)/(status|check-runs|pulls)$`)
	contents     = regexp.MustCompile(`^/repos/acme/infra/contents/(.+)$`)
	setStatus    = regexp.MustCompile(`^/repos/acme/infra/statuses/([0-9a-f]+)$`)
	prComments   = regexp.MustCompile(`^/repos/acme/infra/issues/([0-9]+)/comments$`)
	editComment  = regexp.MustCompile(`^/repos/acme/infra/issues/comments/([0-9]+)$`)
	mergePull    = regexp.MustCompile(`^/repos/acme/infra/pulls/([0-9]+)/merge$`)
	issues       = regexp.MustCompile(`^/repos/acme/infra/issues(?:/([0-9]+))?$`)
)

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	path, ok := strings.CutPrefix(r.URL.Path, "/api/v3")
	switch {
	case r.URL.Path == "/api/graphql" && r.Header.Get("Authorization") == "Bearer "+f.token:
		f.graphQL(w, r)
	case !ok:
		f.notFound(w)
	case r.Header.Get("Authorization") != "Bearer "+f.token:
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
	case r.Method == http.MethodPost && setStatus.MatchString(path):
		var st struct{ State, Context, Description, TargetURL string }
		if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sha := setStatus.FindStringSubmatch(path)[1]
		f.statuses = append(f.statuses, fmt.Sprintf("%s %s: %s: %s", sha[:7], st.Context, st.State, st.Description))
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"id": len(f.statuses), "state": st.State, "context": st.Context, "description": st.Description,
			"target_url": st.TargetURL, "created_at": "2026-11-20T10:00:00Z", "creator": map[string]any{"login": "github-actions[bot]", "type": "Bot"}})
	case path == "/user":
		// A GitHub Actions job's token is an installation's.
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user","status":"403"}`)
	case prComments.MatchString(path) || editComment.MatchString(path):
		f.serveComments(w, r, path)
	case issues.MatchString(path):
		f.serveIssues(w, r, issues.FindStringSubmatch(path)[1])
	case r.Method == http.MethodPut && mergePull.MatchString(path):
		f.merge(w, r, mergePull.FindStringSubmatch(path)[1])
	case r.Method == http.MethodDelete && path == "/repos/acme/infra/git/refs/heads/change":
		f.deleted = append(f.deleted, "change")
		w.WriteHeader(http.StatusNoContent)
	case teamMember.MatchString(path):
		m := teamMember.FindStringSubmatch(path)
		if !slices.Contains(f.teams[m[1]], m[2]) {
			f.notFound(w)
			return
		}
		fmt.Fprintf(w, `{"url":"https://api.github.com/teams/1/memberships/%s","role":"member","state":"active"}`, m[2])
	case collaborator.MatchString(path):
		login := collaborator.FindStringSubmatch(path)[1]
		role, ok := f.roles[login]
		if !ok {
			f.notFound(w)
			return
		}
		fmt.Fprintf(w, `{"permission":%q,"role_name":%q,"user":{"login":%q,"id":1,"type":"User"}}`, basePermission(role), role, login)
	case pull.MatchString(path):
		f.servePull(w, pull.FindStringSubmatch(path))
	case commitStatus.MatchString(path):
		f.serveCommit(w, commitStatus.FindStringSubmatch(path))
	case f.hidden && strings.HasPrefix(path, "/repos/acme/infra"):
		f.notFound(w)
	case contents.MatchString(path) && f.answers[contents.FindStringSubmatch(path)[1]] != "":
		fmt.Fprint(w, f.answers[contents.FindStringSubmatch(path)[1]])
	case contents.MatchString(path):
		name := contents.FindStringSubmatch(path)[1]
		text, ok := f.files[name]
		if !ok || r.URL.Query().Get("ref") != "main" {
			f.notFound(w)
			return
		}
		fmt.Fprintf(w, `{"type":"file","encoding":"base64","size":%d,"name":%q,"path":%q,"content":%q,"sha":"3d21ec53a331a6f037a91c368710b99387d012c1"}`,
			len(text), name[strings.LastIndex(name, "/")+1:], name, base64.StdEncoding.EncodeToString([]byte(text)))
	case path == "/repos/acme/infra":
		fmt.Fprint(w, `{"id":1,"name":"infra","full_name":"acme/infra","private":true,"default_branch":"main",`+
			`"allow_merge_commit":false,"allow_squash_merge":true,"allow_rebase_merge":true}`)
	default:
		f.notFound(w)
	}
}

// graphQL answers the review decision query: the pull request's
// decision, null when it has none.
func (f *fakeGitHub) graphQL(w http.ResponseWriter, r *http.Request) {
	var req struct{ Variables struct{ Number int } }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var decision any
	if p := f.pulls[req.Variables.Number]; p != nil && p.decision != "" {
		decision = p.decision
	}
	writeJSON(w, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{"reviewDecision": decision}}}})
}

// serveComments lists, creates and edits pull requests' comments.
func (f *fakeGitHub) serveComments(w http.ResponseWriter, r *http.Request, path string) {
	var req struct{ Body string }
	if r.Method != http.MethodGet {
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	if m := prComments.FindStringSubmatch(path); m != nil {
		n, _ := strconv.Atoi(m[1])
		if r.Method == http.MethodGet {
			writeJSON(w, f.commentsOf(n))
			return
		}
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"id": f.comment(n, 0, req.Body), "body": req.Body, "html_url": fmt.Sprintf("https://github.com/acme/infra/pull/%d", n)})
		return
	}
	id, _ := strconv.Atoi(editComment.FindStringSubmatch(path)[1])
	for n, cs := range f.comments {
		if _, ok := cs[id]; ok {
			f.comment(n, id, req.Body)
			writeJSON(w, map[string]any{"id": id, "body": req.Body, "html_url": fmt.Sprintf("https://github.com/acme/infra/pull/%d#issuecomment-%d", n, id)})
			return
		}
	}
	f.notFound(w)
}

func (f *fakeGitHub) notFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
}

// basePermission is the permission GitHub reports beside a role name.
func basePermission(role string) string {
	switch role {
	case "admin":
		return "admin"
	case "maintain", "write":
		return "write"
	}
	return "read"
}

// servePull answers GET /pulls/N and /pulls/N/reviews.
func (f *fakeGitHub) servePull(w http.ResponseWriter, m []string) {
	n, _ := strconv.Atoi(m[1])
	p, ok := f.pulls[n]
	if !ok {
		f.notFound(w)
		return
	}
	if m[2] == "/reviews" {
		var reviews []map[string]any
		for i, login := range p.approvals {
			reviews = append(reviews, map[string]any{"id": i + 1, "user": map[string]any{"login": login, "id": i + 1, "type": "User"},
				"body": "", "state": "APPROVED", "commit_id": p.head, "submitted_at": "2026-11-20T10:00:00Z"})
		}
		writeJSON(w, reviews)
		return
	}
	state, mergeCommit := "open", any(nil)
	if p.merged {
		state, mergeCommit = "closed", p.mergeCommit
	}
	writeJSON(w, map[string]any{
		"number": n, "state": state, "title": "change", "draft": p.draft, "merged": p.merged, "mergeable": p.mergeable,
		"merge_commit_sha": mergeCommit, "user": map[string]any{"login": "alice", "id": 1, "type": "User"},
		"head":                map[string]any{"ref": "change", "sha": p.head, "repo": map[string]any{"full_name": "acme/infra"}},
		"base":                map[string]any{"ref": "main", "sha": strings.Repeat("0", 40), "repo": map[string]any{"full_name": "acme/infra"}},
		"requested_reviewers": []any{}, "requested_teams": []any{},
	})
}

// serveCommit answers a commit's combined status, check runs and the
// pull requests that hold it.
func (f *fakeGitHub) serveCommit(w http.ResponseWriter, m []string) {
	sha, what := m[1], m[2]
	switch what {
	case "pulls":
		var out []map[string]any
		for n, p := range f.pulls {
			if p.merged && p.mergeCommit == sha {
				out = append(out, map[string]any{"number": n, "state": "closed", "merged_at": "2026-11-20T11:00:00Z", "merge_commit_sha": sha})
			}
		}
		if out == nil {
			out = []map[string]any{}
		}
		writeJSON(w, out)
	case "status":
		statuses := []map[string]any{}
		for _, p := range f.pulls {
			if p.head != sha {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(p.statuses)) {
				statuses = append(statuses, map[string]any{"id": len(statuses) + 1, "state": p.statuses[name], "context": name, "description": "", "target_url": nil, "created_at": "2026-11-20T10:00:00Z"})
			}
		}
		writeJSON(w, map[string]any{"state": "success", "sha": sha, "total_count": len(statuses), "statuses": statuses})
	case "check-runs":
		writeJSON(w, map[string]any{"total_count": 0, "check_runs": []any{}})
	}
}

// merge answers PUT /pulls/N/merge as GitHub does: 405 when the pull
// request cannot be merged, 409 when its head is not the sha given.
func (f *fakeGitHub) merge(w http.ResponseWriter, r *http.Request, num string) {
	n, _ := strconv.Atoi(num)
	p, ok := f.pulls[n]
	if !ok {
		f.notFound(w)
		return
	}
	var req struct {
		SHA         string `json:"sha"`
		MergeMethod string `json:"merge_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case !p.mergeable || p.merged:
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprint(w, `{"message":"Pull Request is not mergeable","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request","status":"405"}`)
	case req.SHA != "" && req.SHA != p.head:
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"message":"Head branch was modified. Review and try the merge again.","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request","status":"409"}`)
	default:
		p.merged, p.mergeCommit = true, strings.Repeat("f", 40)
		f.merges = append(f.merges, fmt.Sprintf("%d %s %s", n, req.MergeMethod, req.SHA[:7]))
		writeJSON(w, map[string]any{"sha": p.mergeCommit, "merged": true, "message": "Pull Request successfully merged"})
	}
}

// serveIssues lists the open issues labelled strata-drift, files one and
// edits one, in GitHub's shapes.
func (f *fakeGitHub) serveIssues(w http.ResponseWriter, r *http.Request, num string) {
	shape := func(n int, is *fakeIssue) map[string]any {
		state := map[bool]string{true: "open", false: "closed"}[is.open]
		return map[string]any{"number": n, "title": is.title, "body": is.body, "state": state,
			"labels": []any{map[string]any{"name": "strata-drift"}}, "html_url": fmt.Sprintf("https://github.com/acme/infra/issues/%d", n)}
	}
	var req struct {
		Title, Body, State string
		Labels             []string
	}
	if r.Method != http.MethodGet {
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	n, _ := strconv.Atoi(num)
	switch {
	case r.Method == http.MethodGet && num == "":
		if r.URL.Query().Get("labels") != "strata-drift" || r.URL.Query().Get("state") != "open" {
			http.Error(w, "unexpected query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		out := []map[string]any{}
		for _, k := range f.openIssues() {
			out = append(out, shape(k, f.issues[k]))
		}
		writeJSON(w, out)
	case r.Method == http.MethodPost && num == "":
		n = f.newIssue(req.Title, req.Body)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, shape(n, f.issues[n]))
	case r.Method == http.MethodPatch && f.editIssue(n, req.Body, req.State == "closed"):
		writeJSON(w, shape(n, f.issues[n]))
	default:
		f.notFound(w)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
