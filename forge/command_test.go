package forge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

func TestWithAnswer(t *testing.T) {
	t.Parallel()
	const m = "<!-- strata:comment -->"
	tests := []struct{ name, old, answer, want string }{
		{"no comment yet", "", "Running…", m + "\n" + answerStart + "\nRunning…\n" + answerEnd + "\n"},
		{"above the run's comment", m + "\n### strata plan: 1 planned\n", "Running…",
			m + "\n" + answerStart + "\nRunning…\n" + answerEnd + "\n\n### strata plan: 1 planned\n"},
		{"in place of the earlier answer", m + "\n" + answerStart + "\nRunning…\n" + answerEnd + "\n\n### strata plan: 1 planned\n", "**Refused:** no",
			m + "\n" + answerStart + "\n**Refused:** no\n" + answerEnd + "\n\n### strata plan: 1 planned\n"},
		{"an answer not closed is kept as text", m + "\n" + answerStart + "\nhalf", "x",
			m + "\n" + answerStart + "\nx\n" + answerEnd + "\n\n" + answerStart + "\nhalf"},
	}
	for _, tt := range tests {
		if got := WithAnswer(tt.old, m, tt.answer); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// TestCommentOf: only a GitHub issue_comment on a pull request is a
// comment a job runs for; an issue's comment, another event and GitLab
// are not.
func TestCommentOf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, payload string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(payload), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	onPR := write("pr.json", `{"action":"created","issue":{"number":5,"pull_request":{"url":"u"}},"comment":{"body":"strata plan"}}`)
	onIssue := write("issue.json", `{"action":"created","issue":{"number":6},"comment":{"body":"strata plan"}}`)
	tests := []struct {
		name  string
		env   []string
		body  string
		found bool
	}{
		{"a pull request comment", []string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=issue_comment", "GITHUB_EVENT_PATH=" + onPR}, "strata plan", true},
		{"an issue's comment", []string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=issue_comment", "GITHUB_EVENT_PATH=" + onIssue}, "", false},
		{"a push", []string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=push", "GITHUB_EVENT_PATH=" + onPR}, "", false},
		{"GitLab", []string{"GITLAB_CI=true", "CI_MERGE_REQUEST_IID=5", "STRATA_COMMENT=strata plan"}, "", false},
	}
	for _, tt := range tests {
		body, found, err := CommentOf(tt.env)
		if err != nil || body != tt.body || found != tt.found {
			t.Errorf("%s: %q %v %v; want %q %v", tt.name, body, found, err, tt.body, tt.found)
		}
	}
	if _, _, err := CommentOf([]string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=issue_comment", "GITHUB_EVENT_PATH=" + filepath.Join(dir, "none.json")}); err == nil {
		t.Error("a payload that is not there: no error")
	}
}

// TestCommentOfOnlyNew: a comment edited or deleted, or an event that
// does not say, is no comment a job runs for; the edit's actor is its
// sender, GITHUB_ACTOR, not the comment's author.
func TestCommentOfOnlyNew(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"edited", "deleted", "", "Created", "pinned"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			payload := `{"action":"` + action + `","changes":{"body":{"from":"LGTM"}},"issue":{"number":5,"pull_request":{"url":"https://api.github.com/repos/acme/infra/pulls/5"}},` +
				`"comment":{"id":1,"body":"strata apply-force","user":{"login":"alice","id":1,"type":"User"}},"repository":{"full_name":"acme/infra","default_branch":"main"},"sender":{"login":"mallory","id":2,"type":"User"}}`
			if action == "" {
				payload = strings.Replace(payload, `"action":"",`, "", 1)
			}
			p := filepath.Join(t.TempDir(), "event.json")
			if err := os.WriteFile(p, []byte(payload), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=issue_comment", "GITHUB_EVENT_PATH=" + p, "GITHUB_ACTOR=mallory", "GITHUB_REPOSITORY=acme/infra", "GITHUB_TOKEN=t0ken"}
			if body, found, err := CommentOf(env); body != "" || found || !errors.Is(err, ErrCommentNotNew) {
				t.Errorf("%q, %v, %v; want ErrCommentNotNew", body, found, err)
			}
			a, err := NewActions(env, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Actor() != "mallory" || a.pr != 5 {
				t.Errorf("actor %q, PR %d; want mallory, who edited it, on PR 5", a.Actor(), a.pr)
			}
		})
	}
}

func TestEdited(t *testing.T) {
	t.Parallel()
	at := func(m int) *time.Time { v := time.Date(2026, 11, 20, 10, m, 0, 0, time.UTC); return &v }
	ts := func(m int) *github.Timestamp { return &github.Timestamp{Time: *at(m)} }
	if edited(ts(0), ts(0)) || !edited(ts(0), ts(5)) || !edited(nil, ts(0)) || !edited(ts(0), nil) {
		t.Error("a GitHub comment is edited when, and only when, its updated_at is past its created_at, or either is missing")
	}
	notes := []struct {
		name string
		note gitlab.Note
		want bool
	}{
		{"as posted", gitlab.Note{CreatedAt: at(0), UpdatedAt: at(0)}, false},
		{"edited", gitlab.Note{CreatedAt: at(0), UpdatedAt: at(5)}, true},
		{"its thread resolved", gitlab.Note{CreatedAt: at(0), UpdatedAt: at(5), ResolvedAt: at(5)}, false},
		{"edited after its thread was resolved", gitlab.Note{CreatedAt: at(0), UpdatedAt: at(7), ResolvedAt: at(5)}, true},
		{"no times", gitlab.Note{}, true},
	}
	for _, n := range notes {
		if got := noteEdited(&n.note); got != n.want {
			t.Errorf("%s: edited %t, want %t", n.name, got, n.want)
		}
	}
}
