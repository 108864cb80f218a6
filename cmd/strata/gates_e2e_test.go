package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// gatedConfig gates a failing check of app's plan: carol approves it by
// comment.
const gatedConfig = `dirs:
  app: {tags: [app]}
workflows:
  - tag_query: ''
    plan:
      - type: init
      - type: plan
      - type: run
        cmd: ['sh', '-c', 'echo policy says no; exit 3']
        gate:
          token: risky
          any_of: ['user:carol']
`

// gatedUnit runs strata with a report and returns the exit code, the
// only unit's report and stderr.
func gatedUnit(t *testing.T, root string, env []string, args ...string) (int, *report.UnitReport, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, env, append(args, "--report", path)...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: exit %d\n%s", err, r.code, r.stderr)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Units) != 1 {
		t.Fatalf("report %v: %s", err, data)
	}
	return r.code, rep.Units[0], r.stderr
}

// TestGates: a gated step that fails does not fail the plan; it holds
// the unit's apply until the people the gate names approve it, by a
// comment naming its token, on GitHub and on GitLab; the reviewed plan is
// then applied. Outside CI the gate is said and not enforced.
func TestGates(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for name, f := range map[string]fakeForge{"github": newFakeGitHub(t), "gitlab": newFakeGitLab(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := testenv.WriteRepo(t, map[string]string{"strata.yml": gatedConfig, "app/main.tf": "resource \"terraform_data\" \"x\" {}\n"})
			st := f.state()
			st.mu.Lock()
			st.pulls[5] = &fakePull{head: strings.Repeat("a", 40), mergeable: true}
			st.mu.Unlock()
			env := testenv.Env(t, f.jobEnv(t, t.TempDir(), "alice", 5, true)...)

			code, u, stderr := gatedUnit(t, root, env, "plan", "--dir", "app")
			wantGate := "gated: plan step 3 (run) failed, so the apply needs 1 approval from user:carol (comments `strata gate approve risky`)"
			if code != 0 || u.Status != report.StatusPlanned || u.Reason != wantGate || len(u.Gates) != 1 || !strings.Contains(u.Gates[0].Error, "exit status 3") {
				t.Fatalf("plan: exit %d, %s %q, gates %+v\n%s", code, u.Status, u.Reason, u.Gates, stderr)
			}
			code, u, stderr = gatedUnit(t, root, env, "apply", "-auto-approve", "--dir", "app")
			wantHeld := "gate risky (plan step 3 (run) failed) needs 1 approval from user:carol (comments `strata gate approve risky`): 0 of 1"
			if code != 1 || u.Status != report.StatusDenied || u.Reason != wantHeld {
				t.Fatalf("apply before the approval: exit %d, %s %q\n%s", code, u.Status, u.Reason, stderr)
			}
			st.mu.Lock()
			st.commentAuthors[st.comment(5, 0, "LGTM")] = "bob"
			st.commentAuthors[st.comment(5, 0, "strata gate approve risky")] = "bob"
			st.mu.Unlock()
			if code, u, _ = gatedUnit(t, root, env, "apply", "-auto-approve", "--dir", "app"); code != 1 || u.Status != report.StatusDenied {
				t.Fatalf("bob's approval counted: exit %d, %s %q", code, u.Status, u.Reason)
			}
			// carol's old comment, edited to approve (by whoever may edit
			// it): an edited comment approves nothing.
			st.mu.Lock()
			old := st.comment(5, 0, "terrateam gate approve risky")
			st.commentAuthors[old], st.commentEdited[old] = "carol", true
			st.mu.Unlock()
			if code, u, _ = gatedUnit(t, root, env, "apply", "-auto-approve", "--dir", "app"); code != 1 || u.Status != report.StatusDenied {
				t.Fatalf("an edited comment's approval counted: exit %d, %s %q", code, u.Status, u.Reason)
			}
			st.mu.Lock()
			st.commentAuthors[st.comment(5, 0, "terrateam gate approve risky")] = "carol"
			st.mu.Unlock()
			code, u, stderr = gatedUnit(t, root, env, "apply", "-auto-approve", "--dir", "app")
			if code != 0 || u.Status != report.StatusApplied || len(u.Gates) != 1 {
				t.Fatalf("apply after carol's approval: exit %d, %s %q\n%s", code, u.Status, u.Reason, stderr)
			}
			for _, s := range u.Steps {
				if s.Name == "plan" || s.Name == "run" {
					t.Errorf("the approved apply planned again (%s): the reviewed plan is what was gated", s.Name)
				}
			}
		})
	}
}

// TestGatesOutsideCI: at a terminal nobody can approve a gate; strata
// says the gate was raised and is not checked, and applies.
func TestGatesOutsideCI(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	root := testenv.WriteRepo(t, map[string]string{"strata.yml": gatedConfig, "app/main.tf": "resource \"terraform_data\" \"x\" {}\n"})
	env := testenv.Env(t)
	code, u, stderr := gatedUnit(t, root, env, "apply", "-auto-approve", "--dir", "app")
	if code != 0 || u.Status != report.StatusApplied || !strings.Contains(stderr, "gates are checked in GitHub Actions and GitLab CI, where a pull request approves them: here they are not") {
		t.Errorf("exit %d, %s %q\n%s", code, u.Status, u.Reason, stderr)
	}
}
