package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// TestControlsDenyAnswersNotAFile: the default branch's config answered
// with a 200 that is not a file, as GitHub's contents API and GitLab's
// files API might, refuses every unit of bob's apply, who would apply
// both were it read as an empty config.
func TestControlsDenyAnswersNotAFile(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for _, tc := range []struct {
		forge, name, answer, reason string
	}{
		{"github", "an empty object", `{}`, `type "", not a file`},
		{"github", "a directory's entry", `{"type":"dir","name":"strata.yml","path":"strata.yml"}`, `type "dir", not a file`},
		{"github", "a symlink", `{"type":"symlink","target":"other.yml","name":"strata.yml","path":"strata.yml"}`, `type "symlink", not a file`},
		{"github", "encoding none", `{"type":"file","encoding":"none","size":2097152,"content":""}`, `encoding "none", expected base64`},
		{"github", "no content", `{"type":"file","encoding":"base64","size":40,"name":"strata.yml","path":"strata.yml"}`, "a file without content"},
		{"github", "wrong-typed content", `{"type":"file","encoding":"base64","content":5}`, "unmarshal"},
		{"gitlab", "an empty object", `{}`, `the files API answered for ""`},
		{"gitlab", "no content", `{"file_name":"strata.yml","file_path":"strata.yml","encoding":"base64","ref":"main"}`, "does not match its content_sha256"},
		{"gitlab", "an unknown encoding", `{"file_name":"strata.yml","file_path":"strata.yml","size":1,"encoding":"text","content":"x"}`, `encoding "text", expected base64`},
		{"gitlab", "wrong-typed size", `{"file_name":"strata.yml","file_path":"strata.yml","size":"1","encoding":"base64","content":"eA=="}`, "strata.yml at main"},
	} {
		t.Run(tc.forge+" "+tc.name, func(t *testing.T) {
			t.Parallel()
			var f fakeForge = newFakeGitHub(t)
			if tc.forge == "gitlab" {
				f = newFakeGitLab(t)
			}
			st := f.state()
			c := &controlsRun{f: f, gh: st, root: controlsRepo(t, st), events: t.TempDir()}
			st.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true}
			st.answers["strata.yml"] = tc.answer
			r, units := c.apply(t, "bob", 5)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, dir := range []string{"production", "development"} {
				wantUnit(t, units, dir, report.StatusDenied, "the controls could not be checked: reading the default branch's config: strata.yml at main: ")
				wantUnit(t, units, dir, report.StatusDenied, tc.reason)
			}
		})
	}
}

// TestControlsNoDefaultBranchConfig: a default branch without a config,
// while the checkout's config has controls, holds no controls, and the
// run says so in the console, the report and the summary, naming where
// it looked; a token that cannot see the repository, which the forge
// answers 404 for too, refuses every unit.
func TestControlsNoDefaultBranchConfig(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for name, f := range map[string]fakeForge{"github": newFakeGitHub(t), "gitlab": newFakeGitLab(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := f.state()
			c := &controlsRun{f: f, gh: st, root: controlsRepo(t, st), events: t.TempDir()}
			st.mu.Lock()
			st.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true}
			delete(st.files, "strata.yml")
			st.mu.Unlock()
			warning := "the forge answers 404 for the default branch's config (strata.yml, .terrateam/config.yml, .terrateam/config.yaml at main): the controls are the default branch's, and it has none, so the checkout's access_control and apply_requirements are not checked"

			out := t.TempDir()
			rep, summary := filepath.Join(out, "report.json"), filepath.Join(out, "summary.md")
			env := testenv.Env(t, f.jobEnv(t, c.events, "bob", 5, true)...)
			r := runBin(t, c.root, env, "apply", "-auto-approve", "--report", rep, "--summary", summary)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout+r.stderr, warning) {
				t.Errorf("the console does not warn:\n%s%s", r.stdout, r.stderr)
			}
			units := unitsOf(t, rep)
			for _, dir := range []string{"production", "development"} {
				wantUnit(t, units, dir, report.StatusApplied, "")
				if u := units[dir]; u == nil || len(u.Warnings) != 1 || u.Warnings[0] != warning {
					t.Errorf("%s: warnings %q; want %q", dir, u.Warnings, warning)
				}
			}
			if md, err := os.ReadFile(summary); err != nil || !strings.Contains(string(md), "the forge answers 404 for the default branch") {
				t.Errorf("the summary does not warn: %v\n%s", err, md)
			}

			// A run spread over jobs: ci start reads the controls once, and
			// the warning reaches ci finish's report through the manifest.
			bucket := "file://" + t.TempDir()
			plan, _ := startRun(t, c.root, env, "plan", "--state", bucket, "--json")
			for _, w := range plan.Waves {
				for _, shard := range w.Shards {
					if r := runBin(t, c.root, env, "ci", "run", "--state", bucket, "--run", plan.Run, "--wave", itoa(w.Wave), "--shard", itoa(shard)); r.code != 0 {
						t.Fatalf("ci run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
					}
				}
			}
			spread := filepath.Join(out, "spread.json")
			if r := runBin(t, c.root, env, "ci", "finish", "--state", bucket, "--run", plan.Run, "--report", spread); r.code != 0 {
				t.Fatalf("ci finish: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			spreadUnits := unitsOf(t, spread)
			if len(spreadUnits) != 2 {
				t.Errorf("spread over jobs: %d units reported, want 2", len(spreadUnits))
			}
			for dir, u := range spreadUnits {
				if len(u.Warnings) != 1 || u.Warnings[0] != warning {
					t.Errorf("spread over jobs, %s: warnings %q; want %q", dir, u.Warnings, warning)
				}
			}

			st.mu.Lock()
			st.hidden = true
			st.mu.Unlock()
			r, units = c.apply(t, "bob", 5)
			if r.code != 1 {
				t.Fatalf("a repository the token cannot see: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, dir := range []string{"production", "development"} {
				wantUnit(t, units, dir, report.StatusDenied, "the forge answers 404 for strata.yml, .terrateam/config.yml, .terrateam/config.yaml at main, and the repository itself")
			}
		})
	}
}

// TestCommentsOfOthers: a comment that starts with strata's marker and
// is not by the identity strata posts as (GitHub Actions' bot, a GitLab
// token's bot user) is left as it is: runs with --comment post strata's
// own and edit that one, and a comment command's answer goes into it.
func TestCommentsOfOthers(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for name, f := range map[string]fakeForge{"github": newFakeGitHub(t), "gitlab": newFakeGitLab(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := writeRepo(t, map[string]string{
				"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
				"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
			})
			st := f.state()
			st.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true}
			forged := report.CommentMarker + "\nstrata apply: approved, [merge here](https://evil.example)"
			mallory := st.comment(5, 0, forged)
			st.commentAuthors[mallory] = "mallory"
			env := testenv.Env(t, f.jobEnv(t, t.TempDir(), "alice", 5, true)...)
			for _, cmd := range [][]string{{"plan", "--comment"}, {"apply", "-auto-approve", "--comment"}} {
				if r := runBin(t, root, env, cmd...); r.code != 0 {
					t.Fatalf("%v: exit %d\n%s%s", cmd, r.code, r.stdout, r.stderr)
				}
			}
			if name == "github" {
				// alice asks for help: the answer goes into strata's comment.
				env := testenv.Env(t, f.(*fakeGitHub).env(t, t.TempDir(), "alice", "issue_comment", commentBy(5, "alice", "strata help"), "GITHUB_REF=refs/heads/main")...)
				if r := runBin(t, root, env, "ci", "command"); r.code != 0 {
					t.Fatalf("ci command: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
			}
			var ours []string
			for _, c := range st.commentsOf(5) {
				if c["id"] != mallory {
					ours = append(ours, c["body"].(string))
				}
			}
			if st.comments[5][mallory] != forged {
				t.Errorf("mallory's comment was edited:\n%s", st.comments[5][mallory])
			}
			if len(ours) != 1 || !strings.Contains(ours[0], "app@default") || !strings.Contains(ours[0], "applied") {
				t.Errorf("strata's comments %q; want one, the apply's", ours)
			}
			if name == "github" && !strings.Contains(ours[0], "<code>strata help</code> (@alice): strata's commands") {
				t.Errorf("the answer is not in strata's comment:\n%s", ours[0])
			}
		})
	}
}

// TestEditedCommentRunsNothing: mallory edits alice's old comment into
// `strata apply-force`, which alice may run: ci command answers nothing
// and hands nothing on, and ci start refuses to run for it.
func TestEditedCommentRunsNothing(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	root := writeRepo(t, map[string]string{
		"strata.yml":  commandsConfig,
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"db/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	f := newFakeGitHub(t)
	f.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true}
	f.files["strata.yml"] = commandsConfig
	for _, action := range []string{"edited", "deleted"} {
		t.Run(action, func(t *testing.T) {
			payload := strings.Replace(commentBy(5, "alice", "strata apply-force"), `"action":"created"`, `"action":"`+action+`","changes":{"body":{"from":"LGTM"}}`, 1)
			payload = strings.TrimSuffix(payload, "}") + `,"sender":{"login":"mallory","id":9,"type":"User"}}`
			out := filepath.Join(t.TempDir(), "output")
			env := testenv.Env(t, f.env(t, t.TempDir(), "mallory", "issue_comment", payload, "GITHUB_REF=refs/heads/main", "GITHUB_OUTPUT="+out, "STRATA_STATE_URL=file://"+t.TempDir())...)
			r := runBin(t, root, env, "ci", "command", "--github-output")
			if r.code != 0 || !strings.Contains(r.stderr, `strata: the comment's event is "`+action+`", not "created": a comment command runs only from a newly created comment: nothing to run`) {
				t.Fatalf("ci command: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got := readGitHubOutput(t, out); got["command"] != "" || got["ref"] != "" {
				t.Errorf("ci command hands on %v; want nothing", got)
			}
			if len(f.comments[5]) != 0 {
				t.Errorf("answered on the pull request: %v", f.comments[5])
			}
			r = runBin(t, root, env, "ci", "start", "apply", "--pr", "5", "--auto-approve", "--json")
			if r.code != 1 || !strings.Contains(r.stderr, `the comment's event is "`+action+`", not "created"`) {
				t.Errorf("ci start: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestCommentWordsEscaped: what a commenter wrote that strata repeats in
// its answer (the command line, an action it does not know, a tag query,
// gate tokens) is in code and escaped as unit names are: no link, image,
// HTML, mention, code span or table cell of the commenter's in strata's
// voice.
func TestCommentWordsEscaped(t *testing.T) {
	t.Parallel()
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	hostile := "[x](https://evil.example) <img src=x onerror=alert(1)> @org/team `tick` | *b* _i_ ~s~ \\"
	for _, tc := range []struct{ name, body string }{
		{"an unknown action", "strata " + hostile},
		{"a tag query that does not parse", "strata plan (" + hostile},
		{"gate tokens", "strata gate approve " + hostile},
		{"help, with words after it", "strata help " + hostile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeGitHub(t)
			env := testenv.Env(t, f.env(t, t.TempDir(), "bob", "issue_comment", commentBy(5, "bob", tc.body), "GITHUB_REF=refs/heads/main")...)
			if r := runBin(t, root, env, "ci", "command"); r.code != 0 {
				t.Fatalf("ci command: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var answer string
			for _, c := range f.commentsOf(5) {
				answer = c["body"].(string)
			}
			if answer == "" {
				t.Fatal("no answer")
			}
			for _, raw := range []string{"](https://evil", "<img", "`tick`", "| *b*", "*b*", "_i_", "~s~", "\\"} {
				if strings.Contains(answer, raw) {
					t.Errorf("the answer repeats %q as written:\n%s", raw, answer)
				}
			}
			if !mentionsOnlyInCode(answer, "@org/team") {
				t.Errorf("the answer mentions @org/team outside code:\n%s", answer)
			}
			if !strings.Contains(answer, "&#91;x&#93;(https://evil.example) &lt;img src=x onerror=alert(1)&gt; @org/team &#96;tick&#96; &#124; &#42;b&#42; &#95;i&#95; &#126;s&#126; &#92;") {
				t.Errorf("the answer does not show the words escaped:\n%s", answer)
			}
		})
	}
}

// mentionsOnlyInCode says every occurrence of s in md lies inside a
// <code> element, where GitHub links no mention.
func mentionsOnlyInCode(md, s string) bool {
	for i := 0; ; {
		j := strings.Index(md[i:], s)
		if j < 0 {
			return true
		}
		at := i + j
		open, end := strings.LastIndex(md[:at], "<code>"), strings.LastIndex(md[:at], "</code>")
		if open < 0 || end > open {
			return false
		}
		i = at + len(s)
	}
}
