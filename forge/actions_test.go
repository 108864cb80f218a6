package forge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// branchFiles are the files of the fake repository's branches, by
// "ref:path".
var branchFiles = map[string]string{
	"main:.terrateam/config.yml": "access_control:\n  policies:\n    - tag_query: ''\n      apply: ['team:sre']\n",
	"trunk:strata.yml":           "dirs:\n  app: {tags: [app]}\n",
	"broken:strata.yml":          "access_control:\n  policies:\n    - tag_query: ''\n      apply: ['crew:sre']\n",
}

// actionsEnv is a GitHub Actions job's environment against the fake, with
// the event payload written to a file.
func actionsEnv(t *testing.T, api, event, payload string, more ...string) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	return append([]string{"GITHUB_API_URL=" + api + "/api/v3", "GITHUB_TOKEN=t0ken", "GITHUB_REPOSITORY=acme/infra",
		"GITHUB_RUN_ID=42", "GITHUB_ACTOR=bob", "GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + path}, more...)
}

// TestActionsReadsTheEvent: the actor is the comment's author on
// issue_comment, else GITHUB_ACTOR; the pull request is the one the
// event names.
func TestActionsReadsTheEvent(t *testing.T) {
	t.Parallel()
	_, f := newFake(t, "t0ken")
	srv := f.url
	tests := []struct {
		name, event, payload string
		more                 []string
		actor                string
		pr                   int
	}{
		{"pull_request", "pull_request", `{"action":"synchronize","number":5,"pull_request":{"number":5,"state":"open"},"repository":{"full_name":"acme/infra","default_branch":"main"},"sender":{"login":"bob"}}`, nil, "bob", 5},
		{"issue_comment on a pull request", "issue_comment", `{"action":"created","issue":{"number":5,"pull_request":{"url":"https://api.github.com/repos/acme/infra/pulls/5"}},"comment":{"id":1,"body":"strata apply","user":{"login":"alice","id":1,"type":"User"}},"repository":{"default_branch":"main"}}`, nil, "alice", 5},
		{"issue_comment on an issue", "issue_comment", `{"action":"created","issue":{"number":6},"comment":{"id":2,"body":"hi","user":{"login":"alice"}},"repository":{"default_branch":"main"}}`, nil, "bob", 0},
		{"push", "push", `{"ref":"refs/heads/main","after":"fed","repository":{"default_branch":"main","created_at":1700000000}}`, []string{"GITHUB_REF=refs/heads/main"}, "bob", 0},
		{"a pull request's merge ref without a payload", "workflow_dispatch", `{}`, []string{"GITHUB_REF=refs/pull/9/merge"}, "bob", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := NewActions(actionsEnv(t, srv(), tt.event, tt.payload, tt.more...), nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Actor() != tt.actor || a.pr != tt.pr {
				t.Errorf("actor %q, pull request %d; want %q, %d", a.Actor(), a.pr, tt.actor, tt.pr)
			}
		})
	}
	for what, env := range map[string][]string{
		"an event payload that is not JSON": actionsEnv(t, srv(), "push", `{"repository":`),
		"a missing event payload":           {"GITHUB_TOKEN=t0ken", "GITHUB_REPOSITORY=acme/infra", "GITHUB_ACTOR=bob", "GITHUB_EVENT_PATH=/nonexistent/event.json"},
		"no actor":                          {"GITHUB_TOKEN=t0ken", "GITHUB_REPOSITORY=acme/infra"},
		"no token":                          {"GITHUB_REPOSITORY=acme/infra", "GITHUB_ACTOR=bob"},
	} {
		if _, err := NewActions(env, nil); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

// TestActionsDefaultBranchConfig: a pull request's controls are read
// from the default branch, at the first of the config's paths it holds;
// on the default branch itself nothing is read.
func TestActionsDefaultBranchConfig(t *testing.T) {
	t.Parallel()
	_, f := newFake(t, "t0ken")
	paths := []string{"strata.yml", ".terrateam/config.yml"}
	ctx := context.Background()
	pr := `{"pull_request":{"number":5},"repository":{"default_branch":"main"}}`

	a, err := NewActions(actionsEnv(t, f.url(), "pull_request", pr), paths)
	if err != nil {
		t.Fatal(err)
	}
	cfg, missing, err := a.DefaultBranchConfig(ctx)
	if err != nil || missing != "" || cfg == nil || cfg.AccessControl == nil {
		t.Fatalf("pull request: %+v, %q, %v; want main's .terrateam/config.yml", cfg, missing, err)
	}

	onMain, err := NewActions(actionsEnv(t, f.url(), "push", `{"repository":{"default_branch":"main"}}`, "GITHUB_REF=refs/heads/main", "GITHUB_SHA=fed"), paths)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, missing, err := onMain.DefaultBranchConfig(ctx); cfg != nil || missing != "" || err != nil {
		t.Errorf("on main: %+v, %q, %v; want nothing read", cfg, missing, err)
	}
	if got, err := onMain.PullRequest(ctx); got != nil || err != nil {
		t.Errorf("a push no pull request merged: %+v, %v", got, err)
	}

	// No default branch in the payload: the API says trunk.
	branch, err := NewActions(actionsEnv(t, f.url(), "workflow_dispatch", `{}`, "GITHUB_REF=refs/heads/feature"), paths)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, missing, err := branch.DefaultBranchConfig(ctx); err != nil || missing != "" || cfg == nil || cfg.AccessControl != nil {
		t.Errorf("a branch: %+v, %q, %v; want trunk's strata.yml", cfg, missing, err)
	}
	none, _ := NewActions(actionsEnv(t, f.url(), "pull_request", pr), []string{"nowhere.yml"})
	if cfg, missing, err := none.DefaultBranchConfig(ctx); cfg != nil || missing != "nowhere.yml at main" || err != nil {
		t.Errorf("no config on main: %+v, %q, %v; want not found", cfg, missing, err)
	}
	broken, _ := NewActions(actionsEnv(t, f.url(), "pull_request", `{"pull_request":{"number":5},"repository":{"default_branch":"broken"}}`), paths)
	if _, _, err := broken.DefaultBranchConfig(ctx); err == nil || !strings.Contains(err.Error(), "strata.yml@broken:4:") {
		t.Errorf("a default branch whose config does not load: %v; want its file:line:col", err)
	}
}

// TestActionsChangedFiles: the files of the event's pull request, over
// pages, a rename's old path too; none for a push.
func TestActionsChangedFiles(t *testing.T) {
	t.Parallel()
	_, f := newFake(t, "t0ken")
	a, err := NewActions(actionsEnv(t, f.url(), "pull_request", `{"pull_request":{"number":5},"repository":{"default_branch":"main"}}`), []string{"strata.yml"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.ChangedFiles(context.Background())
	want := []string{"app/main.tf", "strata.yml", ".terrateam/config.yml", ".github/workflows/strata.yml"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("changed files %v, %v; want %v", got, err, want)
	}
	push, _ := NewActions(actionsEnv(t, f.url(), "push", `{}`), nil)
	if got, err := push.ChangedFiles(context.Background()); got != nil || err != nil {
		t.Errorf("a push: %v, %v", got, err)
	}
}

// TestActionsTokenOverride: STRATA_GITHUB_TOKEN, a token that can read
// teams, wins over the job's GITHUB_TOKEN.
func TestActionsTokenOverride(t *testing.T) {
	t.Parallel()
	_, f := newFake(t, "t0ken")
	env := actionsEnv(t, f.url(), "push", `{}`)
	for i, kv := range env {
		if strings.HasPrefix(kv, "GITHUB_TOKEN=") {
			env[i] = "GITHUB_TOKEN=job-token"
		}
	}
	env = append(env, "STRATA_GITHUB_TOKEN=t0ken")
	a, err := NewActions(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in, err := a.InTeam(context.Background(), "carol", "sre"); err != nil || !in {
		t.Errorf("InTeam with STRATA_GITHUB_TOKEN: %v, %v", in, err)
	}
}

// TestDraftPullRequest: the event's pull_request.draft; no pull request,
// or no payload, is not a draft.
func TestDraftPullRequest(t *testing.T) {
	t.Parallel()
	for payload, want := range map[string]bool{
		`{"pull_request":{"number":5,"draft":true}}`:  true,
		`{"pull_request":{"number":5,"draft":false}}`: false,
		`{"ref":"refs/heads/main"}`:                   false,
		`{"pull_request":`:                            false,
	} {
		path := filepath.Join(t.TempDir(), "event.json")
		if err := os.WriteFile(path, []byte(payload), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := DraftPullRequest([]string{"GITHUB_EVENT_PATH=" + path}); got != want {
			t.Errorf("%s: draft %t, want %t", payload, got, want)
		}
	}
	if DraftPullRequest(nil) {
		t.Error("no event payload is a draft")
	}
}
