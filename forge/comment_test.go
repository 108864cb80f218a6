package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// comments is a pull request's comments on a fake forge: the bodies by
// ID, in order.
type comments struct {
	mu     sync.Mutex
	ids    []int
	bodies map[int]string
	// hidden are the comments minimized, by node ID.
	hidden []string
	next   int
	// authors are the comments' authors by ID: the forge's bot for the
	// comments the token posts, and when not set.
	authors map[int]string
	// user is how GET /user answers: status and body (GitHub's 403 to a
	// job's token when status is 0); userAsked counts the asks.
	userStatus int
	userBody   string
	userAsked  int
	// bot is who the token posts as.
	bot string
}

// by adds a comment by author.
func (c *comments) by(author, body string) int {
	id := c.add(body)
	if c.authors == nil {
		c.authors = map[int]string{}
	}
	c.authors[id] = author
	return id
}

// author is comment id's author.
func (c *comments) author(id int) string {
	if a := c.authors[id]; a != "" {
		return a
	}
	return c.bot
}

// serveUser answers GET /user.
func (c *comments) serveUser(w http.ResponseWriter) {
	c.userAsked++
	if c.userStatus == 0 {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user","status":"403"}`)
		return
	}
	w.WriteHeader(c.userStatus)
	fmt.Fprint(w, c.userBody)
}

// del deletes a comment.
func (c *comments) del(id int) {
	delete(c.bodies, id)
	for i, x := range c.ids {
		if x == id {
			c.ids = append(c.ids[:i], c.ids[i+1:]...)
			return
		}
	}
}

func (c *comments) add(body string) int {
	id := 100 + c.next
	c.next++
	c.ids = append(c.ids, id)
	c.bodies[id] = body
	return id
}

// githubComments serves a pull request's comments, two to a page, with
// the shapes of GitHub's REST reference.
func githubComments(t *testing.T, c *comments) *GitHub {
	t.Helper()
	if c.bot == "" {
		c.bot = "github-actions[bot]"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Path == "/api/graphql" {
			var q struct {
				Query     string
				Variables struct {
					Input struct{ SubjectID, Classifier string }
				}
			}
			json.NewDecoder(r.Body).Decode(&q)
			if !strings.Contains(q.Query, "minimizeComment") || q.Variables.Input.Classifier != "OUTDATED" {
				http.Error(w, "unexpected query", http.StatusBadRequest)
				return
			}
			c.hidden = append(c.hidden, q.Variables.Input.SubjectID)
			fmt.Fprint(w, `{"data":{"minimizeComment":{"clientMutationId":null}}}`)
			return
		}
		var req struct{ Body string }
		if r.Method != http.MethodGet && r.Method != http.MethodDelete {
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		comment := func(id int) map[string]any {
			typ := map[bool]string{true: "Bot", false: "User"}[strings.HasSuffix(c.author(id), "[bot]")]
			return map[string]any{"id": id, "node_id": fmt.Sprintf("IC_%d", id), "body": c.bodies[id], "html_url": fmt.Sprintf("https://github.com/acme/infra/pull/5#issuecomment-%d", id), "user": map[string]any{"login": c.author(id), "id": 41898282, "type": typ}}
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v3/user":
			c.serveUser(w)
		case r.Method == http.MethodGet && r.URL.Path == "/api/v3/repos/acme/infra/issues/5/comments":
			page, _ := strconv.Atoi(r.URL.Query().Get("page"))
			page = max(page, 1)
			var out []map[string]any
			for i, id := range c.ids {
				if i/2 == page-1 {
					out = append(out, comment(id))
				}
			}
			if 2*page < len(c.ids) {
				w.Header().Set("Link", fmt.Sprintf(`<http://%s%s?page=%d>; rel="next"`, r.Host, r.URL.Path, page+1))
			}
			json.NewEncoder(w).Encode(out)
		case r.Method == http.MethodPost && r.URL.Path == "/api/v3/repos/acme/infra/issues/5/comments":
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(comment(c.add(req.Body)))
		case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/v3/repos/acme/infra/issues/comments/"):
			id, _ := strconv.Atoi(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
			c.del(id)
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/api/v3/repos/acme/infra/issues/comments/"):
			id, _ := strconv.Atoi(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
			c.bodies[id] = req.Body
			json.NewEncoder(w).Encode(comment(id))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	g, err := NewGitHub(GitHubOptions{API: srv.URL + "/api/v3", Token: "t0ken", Repository: "acme/infra"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGitHubUpsertComment: the first post creates strata's comment; the
// next edit it in place, found by its marker past the first page.
func TestGitHubUpsertComment(t *testing.T) {
	t.Parallel()
	c := &comments{bodies: map[int]string{}}
	c.add("LGTM")
	c.add("please rebase")
	c.add("ship it")
	g := githubComments(t, c)
	ctx := context.Background()
	for i, body := range []string{"<!-- strata -->\nplan: 1 to change", "<!-- strata -->\napply: 1 applied"} {
		url, err := g.UpsertComment(ctx, 5, "<!-- strata -->", body, EditInPlace)
		if err != nil || !strings.HasPrefix(url, "https://github.com/acme/infra/pull/5#issuecomment-103") {
			t.Fatalf("post %d: %q, %v", i, url, err)
		}
	}
	if len(c.ids) != 4 || c.bodies[103] != "<!-- strata -->\napply: 1 applied" || c.bodies[100] != "LGTM" {
		t.Errorf("comments %v %v; want one of strata's, edited", c.ids, c.bodies)
	}
}

// TestGitLabUpsertComment: the same on a merge request's notes.
func TestGitLabUpsertComment(t *testing.T) {
	t.Parallel()
	c := &comments{bodies: map[int]string{}}
	c.by("dana", "looks good")
	g := gitlabNotes(t, c)
	for _, body := range []string{"<!-- strata -->\nplan", "<!-- strata -->\napply"} {
		if where, err := g.UpsertComment(context.Background(), 5, "<!-- strata -->", body, EditInPlace); err != nil || where != "MR !5 note 101" {
			t.Fatalf("%q, %v", where, err)
		}
	}
	if len(c.ids) != 2 || c.bodies[101] != "<!-- strata -->\napply" {
		t.Errorf("notes %v %v", c.ids, c.bodies)
	}
	// GitLab hides no note: minimize deletes the earlier one.
	if where, err := g.UpsertComment(context.Background(), 5, "<!-- strata -->", "<!-- strata -->\nplan again", Minimize); err != nil || where != "MR !5 note 102" {
		t.Fatalf("minimize: %q, %v", where, err)
	}
	if fmt.Sprint(c.ids) != "[100 102]" || c.bodies[100] != "looks good" {
		t.Errorf("after minimize: notes %v %v", c.ids, c.bodies)
	}
}

// gitlabNotes serves a merge request's notes with the shapes of GitLab's
// REST reference; the token's user is strata-bot unless c says.
func gitlabNotes(t *testing.T, c *comments) *GitLab {
	t.Helper()
	if c.bot == "" {
		c.bot = "project_42_bot_3f2a"
	}
	if c.userStatus == 0 {
		c.userStatus, c.userBody = http.StatusOK, `{"id":77,"username":"project_42_bot_3f2a","name":"strata","state":"active","bot":true,"web_url":"https://gitlab.example/project_42_bot_3f2a"}`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		var req struct{ Body string }
		if r.Method != http.MethodGet && r.Method != http.MethodDelete {
			json.NewDecoder(r.Body).Decode(&req)
		}
		note := func(id int) map[string]any {
			return map[string]any{"id": id, "body": c.bodies[id], "noteable_type": "MergeRequest", "noteable_iid": 5, "system": false, "author": map[string]any{"id": 77, "username": c.author(id)}}
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v4/user":
			c.serveUser(w)
		case r.Method == http.MethodGet && r.URL.Path == "/api/v4/projects/42/merge_requests/5/notes":
			var out []map[string]any
			for _, id := range c.ids {
				out = append(out, note(id))
			}
			json.NewEncoder(w).Encode(out)
		case r.Method == http.MethodPost && r.URL.Path == "/api/v4/projects/42/merge_requests/5/notes":
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(note(c.add(req.Body)))
		case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/v4/projects/42/merge_requests/5/notes/"):
			id, _ := strconv.Atoi(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
			c.del(id)
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/api/v4/projects/42/merge_requests/5/notes/"):
			id, _ := strconv.Atoi(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
			c.bodies[id] = req.Body
			json.NewEncoder(w).Encode(note(id))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	g, err := NewGitLab(GitLabOptions{API: srv.URL + "/api/v4", Token: "glpat", Project: "42"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestCommentStrategies: append keeps every comment, delete leaves only
// the newest of strata's, minimize hides the one before the newest; other
// people's comments stay.
func TestCommentStrategies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		strategy CommentStrategy
		ours     int
		hidden   []string
	}{
		{Append, 3, nil},
		{Delete, 1, nil},
		{Minimize, 3, []string{"IC_101", "IC_102"}},
	} {
		c := &comments{bodies: map[int]string{}}
		c.add("LGTM")
		g := githubComments(t, c)
		for i := range 3 {
			if _, err := g.UpsertComment(ctx, 5, "<!-- strata -->", fmt.Sprintf("<!-- strata -->\nrun %d", i), tc.strategy); err != nil {
				t.Fatalf("%s: %v", tc.strategy, err)
			}
		}
		ours := 0
		for _, b := range c.bodies {
			if strings.HasPrefix(b, "<!-- strata -->") {
				ours++
			}
		}
		if ours != tc.ours || c.bodies[100] != "LGTM" || fmt.Sprint(c.hidden) != fmt.Sprint(tc.hidden) {
			t.Errorf("%s: %d of strata's comments %v, hidden %v; want %d, hidden %v", tc.strategy, ours, c.bodies, c.hidden, tc.ours, tc.hidden)
		}
	}
}

// TestOnlyStrataEditsItsComment: a comment counts as strata's only when
// its author is who the token posts as (GET /user's login, or
// github-actions[bot] for a job's token, which /user answers 403; a
// GitLab token's bot user). Anyone else's comment that starts with the
// marker is never edited, deleted or hidden; an identity that cannot be
// learned edits nothing and posts anew. /user is asked once.
func TestOnlyStrataEditsItsComment(t *testing.T) {
	t.Parallel()
	const marker = "<!-- strata -->"
	forged := marker + "\n[approve here](https://evil.example)"
	for _, tc := range []struct {
		name     string
		gitlab   bool
		strategy CommentStrategy
		// userStatus and userBody are /user's answer (GitHub's 403 when 0).
		userStatus int
		userBody   string
		// bot is who the token's comments are by.
		bot string
		// want are the bodies after two posts, in order.
		want []string
	}{
		{name: "a job's token edits its own", strategy: EditInPlace,
			want: []string{forged, marker + "\nrun 1"}},
		{name: "a job's token deletes its own", strategy: Delete,
			want: []string{forged, marker + "\nrun 1"}},
		{name: "a job's token appends", strategy: Append,
			want: []string{forged, marker + "\nrun 0", marker + "\nrun 1"}},
		{name: "a user's token", strategy: EditInPlace, userStatus: 200, bot: "strata-ci",
			userBody: `{"login":"strata-ci","id":12,"type":"User","site_admin":false}`,
			want:     []string{forged, marker + "\nrun 1"}},
		{name: "an app's token", strategy: EditInPlace, userStatus: 200, bot: "strata-app[bot]",
			userBody: `{"login":"strata-app[bot]","id":13,"type":"Bot"}`,
			want:     []string{forged, marker + "\nrun 1"}},
		{name: "/user fails", strategy: EditInPlace, userStatus: 502, userBody: `{"message":"Bad Gateway"}`,
			want: []string{forged, marker + "\nrun 0", marker + "\nrun 1"}},
		{name: "/user fails, delete", strategy: Delete, userStatus: 502, userBody: `{"message":"Bad Gateway"}`,
			want: []string{forged, marker + "\nrun 0", marker + "\nrun 1"}},
		{name: "/user not JSON", strategy: EditInPlace, userStatus: 200, userBody: `<html>`,
			want: []string{forged, marker + "\nrun 0", marker + "\nrun 1"}},
		{name: "GitLab edits its own", gitlab: true, strategy: EditInPlace,
			want: []string{forged, marker + "\nrun 1"}},
		{name: "GitLab deletes its own", gitlab: true, strategy: Minimize,
			want: []string{forged, marker + "\nrun 1"}},
		{name: "GitLab's /user fails", gitlab: true, strategy: EditInPlace, userStatus: 401, userBody: `{"message":"401 Unauthorized"}`,
			want: []string{forged, marker + "\nrun 0", marker + "\nrun 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &comments{bodies: map[int]string{}, userStatus: tc.userStatus, userBody: tc.userBody, bot: tc.bot}
			c.by("mallory", forged)
			var post func(body string) error
			if tc.gitlab {
				g := gitlabNotes(t, c)
				post = func(body string) error {
					_, err := g.UpsertComment(context.Background(), 5, marker, body, tc.strategy)
					return err
				}
			} else {
				g := githubComments(t, c)
				post = func(body string) error {
					_, err := g.UpsertComment(context.Background(), 5, marker, body, tc.strategy)
					return err
				}
			}
			for i := range 2 {
				if err := post(fmt.Sprintf("%s\nrun %d", marker, i)); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, id := range c.ids {
				got = append(got, c.bodies[id])
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) || len(c.hidden) != 0 {
				t.Errorf("comments %q, hidden %v; want %q", got, c.hidden, tc.want)
			}
			if c.userAsked != 1 {
				t.Errorf("/user asked %d times, want once", c.userAsked)
			}
		})
	}
}

// TestAnswerOnlyIntoStrataComment: the answer to a comment command goes
// into strata's own comment, never into another's that starts with the
// marker.
func TestAnswerOnlyIntoStrataComment(t *testing.T) {
	t.Parallel()
	c := &comments{bodies: map[int]string{}}
	forged := "<!-- strata -->\nmallory's"
	c.by("mallory", forged)
	a := &Actions{GitHub: githubComments(t, c), pr: 5}
	for i := range 2 {
		if _, posted, err := a.Answer(context.Background(), "<!-- strata -->", fmt.Sprintf("answer %d", i)); err != nil || !posted {
			t.Fatalf("%v, %v", posted, err)
		}
	}
	if len(c.ids) != 2 || c.bodies[100] != forged || !strings.Contains(c.bodies[101], "answer 1") || strings.Contains(c.bodies[101], "mallory") {
		t.Errorf("comments %v %v; want mallory's untouched and strata's answered once", c.ids, c.bodies)
	}
}
