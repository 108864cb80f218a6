package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// commandsConfig lets anyone plan, alice alone apply, force an apply and
// unlock, bob apply-autoapprove the app; an apply needs an approval.
const commandsConfig = `dirs:
  app: {tags: [app]}
  db: {tags: [db]}
access_control:
  unlock: ['user:alice']
  policies:
    - tag_query: ''
      plan: ['*']
      apply: ['user:alice']
      apply_force: ['user:alice']
      apply_autoapprove: ['user:bob']
apply_requirements:
  checks:
    - tag_query: ''
      approved: {enabled: true, any_of_count: 1}
`

// commentBy is the payload of an issue_comment event: login commented
// body on pull request n.
func commentBy(n int, login, body string) string {
	b, _ := json.Marshal(body)
	return `{"action":"created","issue":{"number":` + strconv.Itoa(n) + `,"pull_request":{"url":"https://api.github.com/repos/acme/infra/pulls/` + strconv.Itoa(n) +
		`"}},"comment":{"id":1,"body":` + string(b) + `,"user":{"login":"` + login + `","id":7,"type":"User"}},"repository":{"full_name":"acme/infra","default_branch":"main"}}`
}

// commenter runs strata in GitHub Actions jobs started by comments on
// pull request 5 of a repository whose branch holds a change to app and
// db.
type commenter struct {
	t            *testing.T
	f            *fakeGitHub
	root, bucket string
	events       string
}

// env is a job's environment for login's comment body.
func (cm *commenter) env(login, body string, more ...string) []string {
	// An issue_comment workflow's event commit is the default branch's;
	// the jobs check out the pull request's head.
	more = append(more, "GITHUB_REF=refs/heads/main", "GITHUB_SHA="+strings.Repeat("d", 40), "STRATA_STATE_URL="+cm.bucket)
	return testenv.Env(cm.t, cm.f.env(cm.t, cm.events, login, "issue_comment", commentBy(5, login, body), more...)...)
}

// command runs `ci command --github-output` for the comment and returns
// its outputs and result.
func (cm *commenter) command(login, body string) (map[string]string, binRun) {
	out := filepath.Join(cm.t.TempDir(), "output")
	r := runBin(cm.t, cm.root, cm.env(login, body, "GITHUB_OUTPUT="+out), "ci", "command", "--github-output")
	return readGitHubOutput(cm.t, out), r
}

// run starts the command the comment asks for, as the emitted workflow
// does with ci command's outputs, runs every job and finishes; it returns
// ci start's result when it refused, else ci finish's.
func (cm *commenter) run(login, body string, outputs map[string]string) binRun {
	env := cm.env(login, body)
	args := append([]string{"ci", "start", outputs["command"], "--pr", outputs["pr"], "--json"}, strings.Fields(outputs["args"])...)
	if outputs["command"] == "apply" {
		args = append(args, "--auto-approve")
	}
	start := runBin(cm.t, cm.root, env, args...)
	if start.code != 0 {
		return start
	}
	var plan startedRun
	if err := json.Unmarshal([]byte(start.stdout), &plan); err != nil {
		cm.t.Fatalf("%v: %s", err, start.stdout)
	}
	for _, w := range plan.Waves {
		for _, shard := range w.Shards {
			if r := runBin(cm.t, cm.root, env, "ci", "run", "--run", plan.Run, "--wave", itoa(w.Wave), "--shard", itoa(shard)); r.code != 0 {
				cm.t.Fatalf("wave %d shard %d: exit %d\n%s%s", w.Wave, shard, r.code, r.stdout, r.stderr)
			}
		}
	}
	rep := filepath.Join(cm.t.TempDir(), "report.json")
	finish := runBin(cm.t, cm.root, env, "ci", "finish", "--run", plan.Run, "--report", rep)
	data, _ := os.ReadFile(rep)
	finish.stdout = string(data)
	if r := runBin(cm.t, cm.root, env, "ci", "comment", "--run", plan.Run, "--post"); r.code != 0 {
		cm.t.Fatalf("ci comment: exit %d\n%s", r.code, r.stderr)
	}
	return finish
}

// theComment is strata's one comment on pull request 5.
func (cm *commenter) theComment() string {
	st := cm.f.state()
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	for _, id := range sortedKeys(st.comments[5]) {
		if body := st.comments[5][id]; strings.HasPrefix(body, report.CommentMarker) {
			out = append(out, body)
		}
	}
	if len(out) != 1 {
		cm.t.Fatalf("%d strata comments on PR #5, want one: %q", len(out), out)
	}
	return out[0]
}

func sortedKeys(m map[int]string) []int {
	return slices.Sorted(maps.Keys(m))
}

// TestCommentCommands: the commands of pull request comments, end to end
// on a fake GitHub with real terraform. ci command reads the comment,
// answers what runs nothing (help, unlock, a command it does not know) in
// strata's one comment and hands plan and apply on at the pull request's
// head; ci start runs them under the comment's control: apply the plans
// reviewed at the head, apply-force without apply_requirements,
// apply-autoapprove by its own list; a head that moved is refused.
func TestCommentCommands(t *testing.T) {
	testenv.NeedTerraform(t)
	root := pushedRepo(t, map[string]string{
		"strata.yml":  commandsConfig,
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"db/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	gitIn(t, root, "checkout", "-q", "-b", "change")
	testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), "resource \"terraform_data\" \"x\" { input = 1 }\n")
	testenv.WriteFile(t, filepath.Join(root, "db", "main.tf"), "resource \"terraform_data\" \"x\" { input = 2 }\n")
	gitIn(t, root, "commit", "-qam", "change")
	rev, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(string(rev))
	f := newFakeGitHub(t)
	st := f.state()
	st.mu.Lock()
	st.pulls[5] = &fakePull{head: head, mergeable: true}
	st.files["strata.yml"] = commandsConfig // the default branch's: its controls hold
	st.mu.Unlock()
	cm := &commenter{t: t, f: f, root: root, bucket: "file://" + t.TempDir(), events: t.TempDir()}

	// Not a command: nothing said, nothing run.
	if out, r := cm.command("bob", "LGTM"); r.code != 0 || out["command"] != "" || len(st.comments[5]) != 0 {
		t.Fatalf("a plain comment: exit %d, outputs %v\n%s", r.code, out, r.stderr)
	}
	// A command it does not know is answered with the commands it knows.
	if out, r := cm.command("bob", "terrateam destroy"); r.code != 0 || out["command"] != "" {
		t.Fatalf("an unknown command: exit %d, outputs %v\n%s", r.code, out, r.stderr)
	}
	if c := cm.theComment(); !strings.Contains(c, "<code>terrateam destroy</code> (@bob): **Not run:** <code>terrateam destroy: unknown action; expected one of: plan, apply") || !strings.Contains(c, "| `strata apply-force [QUERY]` |") {
		t.Errorf("the answer to an unknown command:\n%s", c)
	}

	// bob plans; the plan's comment replaces the answer.
	out, r := cm.command("bob", "strata plan")
	if want := map[string]string{"command": "plan", "args": "--changed --base origin/main", "ref": head, "pr": "5"}; r.code != 0 || !mapsEqual(out, want) {
		t.Fatalf("strata plan: exit %d, outputs %v, want %v\n%s", r.code, out, want, r.stderr)
	}
	if c := cm.theComment(); !strings.Contains(c, "<code>strata plan</code> (@bob): Running at "+head[:12]) {
		t.Errorf("the answer to a plan:\n%s", c)
	}
	if fin := cm.run("bob", "strata plan", out); fin.code != 0 && fin.code != 2 {
		t.Fatalf("the plan: exit %d\n%s%s", fin.code, fin.stdout, fin.stderr)
	}
	if c := cm.theComment(); strings.Contains(c, "strata:answer") || !strings.Contains(c, "app@default") {
		t.Errorf("the plan's comment:\n%s", c)
	}

	commentApplies(t, cm, head)
}

// commentApplies: who may apply, what an apply needs, a head that moved,
// apply-force, unlock and help, after bob's plan.
func commentApplies(t *testing.T, cm *commenter, head string) {
	st := cm.f.state()
	// bob may not apply; alice may, once the pull request is approved.
	out, _ := cm.command("bob", "strata apply")
	if fin := cm.run("bob", "strata apply", out); fin.code != 1 || !strings.Contains(fin.stdout, `bob may not apply app@default: access_control policy \"\" lets user:alice apply it`) {
		t.Errorf("bob's apply: exit %d\n%s%s", fin.code, fin.stdout, fin.stderr)
	}
	if fin := cm.run("alice", "strata apply", out); fin.code != 1 || !strings.Contains(fin.stdout, `apply_requirements check \"\": needs 1 approval, has none`) {
		t.Errorf("an apply with no approval: exit %d\n%s%s", fin.code, fin.stdout, fin.stderr)
	}
	// bob's apply-autoapprove is his, and still needs the approval.
	out, _ = cm.command("bob", "strata apply-autoapprove dir:app")
	if fin := cm.run("bob", "strata apply-autoapprove dir:app", out); fin.code != 1 || !strings.Contains(fin.stdout, "needs 1 approval, has none") || strings.Contains(fin.stdout, `"dir": "db"`) {
		t.Errorf("apply-autoapprove with no approval: exit %d\n%s%s", fin.code, fin.stdout, fin.stderr)
	}

	// The head moved since the plan: the apply is refused and answered.
	st.mu.Lock()
	st.pulls[5].head = strings.Repeat("b", 40)
	st.mu.Unlock()
	out, _ = cm.command("alice", "strata apply-force")
	out["ref"] = head // the jobs checked out the head before it moved
	if r := cm.run("alice", "strata apply-force", out); r.code != 1 || !strings.Contains(r.stderr, "the head of PR #5 moved to bbbbbbbbbbbb since the command") {
		t.Errorf("a head that moved: exit %d\n%s", r.code, r.stderr)
	}
	if c := cm.theComment(); !strings.Contains(c, "**Not run:** the head of PR #5 moved") {
		t.Errorf("the refusal is not answered:\n%s", c)
	}
	st.mu.Lock()
	st.pulls[5].head = head
	st.mu.Unlock()

	// alice's apply-force applies the reviewed plans with no approval.
	fin := cm.run("alice", "strata apply-force", out)
	if fin.code != 0 || strings.Count(fin.stdout, `"status": "applied",`) != 2 {
		t.Fatalf("apply-force: exit %d\n%s%s", fin.code, fin.stdout, fin.stderr)
	}
	// The reviewed plans themselves: applied with no plan of their own,
	// each saying whose review it was.
	if strings.Contains(fin.stdout, `"name": "plan"`) || strings.Count(fin.stdout, `"reused": true`) != 2 || strings.Count(fin.stdout, "applied the reviewed plan from PR #5") != 2 {
		t.Errorf("apply-force did not apply the reviewed plans:\n%s", fin.stdout)
	}

	// unlock: bob may not, alice may.
	if _, r := cm.command("bob", "strata unlock"); r.code != 0 || !strings.Contains(cm.theComment(), "**Refused:** bob may not unlock: access_control.unlock lets user:alice") {
		t.Errorf("bob's unlock: exit %d\n%s\n%s", r.code, r.stderr, cm.theComment())
	}
	if _, r := cm.command("alice", "strata unlock"); r.code != 0 || !strings.Contains(cm.theComment(), "PR #5: 2 dirspaces unlocked") {
		t.Errorf("alice's unlock: exit %d\n%s\n%s", r.code, r.stderr, cm.theComment())
	}
	if _, r := cm.command("alice", "strata help"); r.code != 0 || !strings.Contains(cm.theComment(), "<code>strata help</code> (@alice): strata's commands") {
		t.Errorf("help: exit %d\n%s", r.code, cm.theComment())
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
