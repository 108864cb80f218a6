package main

import (
	"crypto/sha256"
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
	"testing"
)

// fakeGitLab serves the REST endpoints strata's controls read, for
// project 42, with the response shapes of GitLab's REST reference. Its
// state is a forgeState, as the fake GitHub's: a team is a group's path.
type fakeGitLab struct {
	forgeState
	url string
}

func newFakeGitLab(t *testing.T) *fakeGitLab {
	t.Helper()
	f := &fakeGitLab{forgeState: newForgeState()}
	f.bot = "project_42_bot_3f2a"
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/api/v4"
	return f
}

// jobEnv is the environment of a GitLab merge request pipeline for merge
// request n, started by actor, with the token or without.
func (f *fakeGitLab) jobEnv(t *testing.T, _, actor string, n int, token bool) []string {
	env := []string{"GITLAB_CI=true", "CI_API_V4_URL=" + f.url, "CI_PROJECT_ID=42", "CI_PIPELINE_ID=7",
		"GITLAB_USER_LOGIN=" + actor, "CI_MERGE_REQUEST_IID=" + strconv.Itoa(n), "CI_DEFAULT_BRANCH=main",
		"CI_SERVER_URL=https://gitlab.example", "CI_PROJECT_PATH=acme/infra"}
	if token {
		env = append(env, "STRATA_GITLAB_TOKEN=glpat-fake")
	}
	return env
}

var (
	glUsers    = regexp.MustCompile(`^/users$`)
	glGroup    = regexp.MustCompile(`^/groups/(.+)/members/([0-9]+)$`)
	glMember   = regexp.MustCompile(`^/projects/42/members/all/([0-9]+)$`)
	glIssues   = regexp.MustCompile(`^/projects/42/issues(?:/([0-9]+))?$`)
	glMerge    = regexp.MustCompile(`^/projects/42/merge_requests/([0-9]+)/merge$`)
	glMR       = regexp.MustCompile(`^/projects/42/merge_requests/([0-9]+)(/approvals|/reviewers)?$`)
	glStatuses = regexp.MustCompile(`^/projects/42/repository/commits/([^/]+)/(statuses|merge_requests)$`)
	glFile     = regexp.MustCompile(`^/projects/42/repository/files/(.+)$`)
	glSetState = regexp.MustCompile(`^/projects/42/statuses/([0-9a-f]+)$`)
	glNotes    = regexp.MustCompile(`^/projects/42/merge_requests/([0-9]+)/notes(?:/([0-9]+))?$`)
)

// glLevels are the access levels a role is given, for the fake.
var glLevels = map[string]int{"admin": 60, "maintain": 40, "write": 30, "read": 20}

// userIDs number the users the fake knows, from 1.
func (f *fakeGitLab) userIDs() []string {
	seen := map[string]bool{}
	for _, members := range f.teams {
		for _, m := range members {
			seen[m] = true
		}
	}
	for u := range f.roles {
		seen[u] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

func (f *fakeGitLab) user(name string) map[string]any {
	id := slices.Index(f.userIDs(), name) + 1
	return map[string]any{"id": id, "username": name, "name": name, "state": "active", "web_url": "https://gitlab.example/" + name}
}

func (f *fakeGitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	path, ok := strings.CutPrefix(r.URL.Path, "/api/v4")
	switch {
	case !ok:
		glNotFound(w)
	case r.Header.Get("PRIVATE-TOKEN") != "glpat-fake":
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"401 Unauthorized"}`)
	case r.Method == http.MethodPost && glSetState.MatchString(path):
		f.setStatus(w, r, glSetState.FindStringSubmatch(path)[1])
	case glNotes.MatchString(path):
		m := glNotes.FindStringSubmatch(path)
		n, _ := strconv.Atoi(m[1])
		var req struct{ Body string }
		if r.Method != http.MethodGet {
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		switch r.Method {
		case http.MethodGet:
			writeJSON(w, f.commentsOf(n))
		case http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			writeJSON(w, map[string]any{"id": f.comment(n, 0, req.Body), "body": req.Body, "noteable_type": "MergeRequest"})
		default:
			id, _ := strconv.Atoi(m[2])
			writeJSON(w, map[string]any{"id": f.comment(n, id, req.Body), "body": req.Body, "noteable_type": "MergeRequest"})
		}
	case path == "/user":
		writeJSON(w, map[string]any{"id": 77, "username": f.bot, "name": "strata", "state": "active", "bot": true, "web_url": "https://gitlab.example/" + f.bot})
	case glUsers.MatchString(path):
		out := []map[string]any{}
		if name := r.URL.Query().Get("username"); slices.Contains(f.userIDs(), name) {
			out = append(out, f.user(name))
		}
		writeJSON(w, out)
	case glGroup.MatchString(path):
		m := glGroup.FindStringSubmatch(path)
		f.serveMember(w, m[2], func(name string) (int, bool) { return 30, slices.Contains(f.teams[m[1]], name) })
	case glMember.MatchString(path):
		f.serveMember(w, glMember.FindStringSubmatch(path)[1], func(name string) (int, bool) {
			role, ok := f.roles[name]
			return glLevels[role], ok
		})
	case glIssues.MatchString(path):
		f.serveIssues(w, r, glIssues.FindStringSubmatch(path)[1])
	case r.Method == http.MethodPut && glMerge.MatchString(path):
		f.merge(w, r, glMerge.FindStringSubmatch(path)[1])
	case glMR.MatchString(path):
		f.serveMR(w, glMR.FindStringSubmatch(path))
	case glStatuses.MatchString(path):
		f.serveCommit(w, glStatuses.FindStringSubmatch(path))
	case f.hidden && strings.HasPrefix(path, "/projects/42"):
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"404 Project Not Found"}`)
	case path == "/projects/42":
		writeJSON(w, map[string]any{"id": 42, "name": "infra", "path_with_namespace": "acme/infra", "default_branch": "main", "visibility": "private"})
	case glFile.MatchString(path) && f.answers[glFile.FindStringSubmatch(path)[1]] != "":
		fmt.Fprint(w, f.answers[glFile.FindStringSubmatch(path)[1]])
	case glFile.MatchString(path):
		name := glFile.FindStringSubmatch(path)[1]
		text, ok := f.files[name]
		if !ok || r.URL.Query().Get("ref") != "main" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"404 File Not Found"}`)
			return
		}
		writeJSON(w, map[string]any{"file_name": name[strings.LastIndex(name, "/")+1:], "file_path": name, "size": len(text), "encoding": "base64",
			"content": base64.StdEncoding.EncodeToString([]byte(text)), "content_sha256": fmt.Sprintf("%x", sha256.Sum256([]byte(text))), "ref": "main", "blob_id": "79f7bbd25901e8334750839545a9bd021f0e4c83",
			"commit_id": "d5a3ff139356ce33e37e73add446f16869741b50", "last_commit_id": "570e7b2abdd848b95f2f578043fc23bd6f6fd24d"})
	default:
		glNotFound(w)
	}
}

func glNotFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"message":"404 Not found"}`)
}

// serveMember answers a membership by user ID: level and whether the
// user is a member.
func (f *fakeGitLab) serveMember(w http.ResponseWriter, id string, of func(name string) (int, bool)) {
	n, _ := strconv.Atoi(id)
	users := f.userIDs()
	if n < 1 || n > len(users) {
		glNotFound(w)
		return
	}
	level, ok := of(users[n-1])
	if !ok {
		glNotFound(w)
		return
	}
	m := f.user(users[n-1])
	m["access_level"], m["created_at"], m["expires_at"] = level, "2026-01-01T00:00:00.000Z", nil
	writeJSON(w, m)
}

// serveMR answers a merge request, its approvals and its reviewers.
func (f *fakeGitLab) serveMR(w http.ResponseWriter, m []string) {
	n, _ := strconv.Atoi(m[1])
	p, ok := f.pulls[n]
	if !ok {
		glNotFound(w)
		return
	}
	switch m[2] {
	case "/approvals":
		by := []map[string]any{}
		for _, a := range p.approvals {
			by = append(by, map[string]any{"user": f.user(a)})
		}
		writeJSON(w, map[string]any{"id": 1000 + n, "iid": n, "project_id": 42, "state": "opened", "approved": len(by) > 0,
			"approvals_required": 0, "approvals_left": 0, "approved_by": by, "has_approval_rules": false})
	case "/reviewers":
		writeJSON(w, []any{})
	default:
		state, status := "opened", "mergeable"
		if p.merged {
			state = "merged"
		}
		if !p.mergeable {
			status = "conflict"
		}
		writeJSON(w, map[string]any{"id": 1000 + n, "iid": n, "project_id": 42, "title": "change", "state": state, "draft": p.draft,
			"sha": p.head, "has_conflicts": !p.mergeable, "detailed_merge_status": status, "merge_commit_sha": nil,
			"source_branch": "change", "target_branch": "main", "author": f.user("alice")})
	}
}

// setStatus answers POST /statuses/SHA: a commit status set.
func (f *fakeGitLab) setStatus(w http.ResponseWriter, r *http.Request, sha string) {
	var st struct {
		State, Name, Description string
		TargetURL                string `json:"target_url"`
	}
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.statuses = append(f.statuses, fmt.Sprintf("%s %s: %s: %s", sha[:7], st.Name, st.State, st.Description))
	w.WriteHeader(http.StatusCreated)
	writeJSON(w, map[string]any{"id": len(f.statuses), "sha": sha, "status": st.State, "name": st.Name, "description": st.Description,
		"target_url": st.TargetURL, "allow_failure": false, "created_at": "2026-11-20T10:00:00.000Z", "author": f.user("alice")})
}

// serveIssues lists the open issues labelled strata-drift, files one and
// edits one, in GitLab's shapes.
func (f *fakeGitLab) serveIssues(w http.ResponseWriter, r *http.Request, num string) {
	shape := func(n int, is *fakeIssue) map[string]any {
		state := map[bool]string{true: "opened", false: "closed"}[is.open]
		return map[string]any{"id": 5000 + n, "iid": n, "project_id": 42, "title": is.title, "description": is.body, "state": state,
			"labels": []string{"strata-drift"}, "web_url": fmt.Sprintf("https://gitlab.com/acme/infra/-/issues/%d", n)}
	}
	var req struct {
		Title, Description string
		StateEvent         string `json:"state_event"`
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
		if r.URL.Query().Get("labels") != "strata-drift" || r.URL.Query().Get("state") != "opened" {
			http.Error(w, "unexpected query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		out := []map[string]any{}
		for _, k := range f.openIssues() {
			out = append(out, shape(k, f.issues[k]))
		}
		writeJSON(w, out)
	case r.Method == http.MethodPost && num == "":
		n = f.newIssue(req.Title, req.Description)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, shape(n, f.issues[n]))
	case r.Method == http.MethodPut && f.editIssue(n, req.Description, req.StateEvent == "close"):
		writeJSON(w, shape(n, f.issues[n]))
	default:
		glNotFound(w)
	}
}

// merge answers PUT /merge_requests/N/merge as GitLab does: 405 when
// it cannot be merged, 409 when its head is not the sha given.
func (f *fakeGitLab) merge(w http.ResponseWriter, r *http.Request, num string) {
	n, _ := strconv.Atoi(num)
	p, ok := f.pulls[n]
	if !ok {
		glNotFound(w)
		return
	}
	var req struct {
		SHA                      string `json:"sha"`
		ShouldRemoveSourceBranch bool   `json:"should_remove_source_branch"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case !p.mergeable || p.merged:
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprint(w, `{"message":"405 Method Not Allowed"}`)
	case req.SHA != p.head:
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"message":"SHA does not match HEAD of source branch: `+p.head+`"}`)
	default:
		p.merged, p.mergeCommit = true, strings.Repeat("f", 40)
		f.merges = append(f.merges, fmt.Sprintf("%d %s", n, req.SHA[:7]))
		if req.ShouldRemoveSourceBranch {
			f.deleted = append(f.deleted, "change")
		}
		writeJSON(w, map[string]any{"id": 1000 + n, "iid": n, "project_id": 42, "state": "merged", "sha": p.head,
			"merge_commit_sha": p.mergeCommit, "source_branch": "change", "target_branch": "main", "author": f.user("alice")})
	}
}

// serveCommit answers a commit's statuses and the merge requests that
// hold it.
func (f *fakeGitLab) serveCommit(w http.ResponseWriter, m []string) {
	sha := m[1]
	out := []map[string]any{}
	for n, p := range f.pulls {
		switch {
		case m[2] == "merge_requests" && p.merged && p.mergeCommit == sha:
			out = append(out, map[string]any{"iid": n, "state": "merged", "merge_commit_sha": sha})
		case m[2] == "statuses" && p.head == sha:
			for _, name := range slices.Sorted(maps.Keys(p.statuses)) {
				status := p.statuses[name]
				if status == "failure" {
					status = "failed"
				}
				out = append(out, map[string]any{"id": len(out) + 1, "sha": sha, "ref": "change", "status": status, "name": name,
					"allow_failure": false, "pipeline_id": 99, "created_at": "2026-11-20T10:00:00.000Z"})
			}
		}
	}
	writeJSON(w, out)
}
