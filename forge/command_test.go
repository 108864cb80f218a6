package forge

import (
	"os"
	"path/filepath"
	"testing"
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
	onPR := write("pr.json", `{"issue":{"number":5,"pull_request":{"url":"u"}},"comment":{"body":"strata plan"}}`)
	onIssue := write("issue.json", `{"issue":{"number":6},"comment":{"body":"strata plan"}}`)
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
