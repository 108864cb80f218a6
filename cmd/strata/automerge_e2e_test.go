package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// TestAutomerge: with automerge, the apply that leaves a pull request
// nothing to apply merges it (GitHub: with the first method the
// repository allows, at the head it was applied at) and deletes its
// branch; a plan does not merge, a failed apply does not, and a merge the
// forge refuses is a warning, the apply standing.
func TestAutomerge(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	for name, f := range map[string]fakeForge{"github": newFakeGitHub(t), "gitlab": newFakeGitLab(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			automergeOn(t, name, f)
		})
	}
}

func automergeOn(t *testing.T, forgeName string, f fakeForge) {
	st := f.state()
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml":   "dirs:\n  app: {tags: [app]}\n  bad: {tags: [bad]}\nautomerge:\n  enabled: true\n  delete_branch: true\n",
		"app/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
		"bad/main.tf":  "resource \"terraform_data\" \"x\" {\n  provisioner \"local-exec\" {\n    command = \"exit 1\"\n  }\n}\n",
		"app/.gitkeep": "",
	})
	head := strings.Repeat("a", 40)
	// The fake's handlers run on the server's goroutines: the test
	// changes and reads its state under its lock.
	lock := func(f func()) {
		st.mu.Lock()
		defer st.mu.Unlock()
		f()
	}
	lock(func() { st.pulls[5] = &fakePull{head: head, mergeable: true} })
	events := t.TempDir()
	env := testenv.Env(t, f.jobEnv(t, events, "alice", 5, true)...)

	if r := runBin(t, root, env, "plan", "--dir", "app"); r.code != 2 && r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "apply", "-auto-approve", "--dir", "bad"); r.code != 1 || strings.Contains(r.stderr, "automerge") {
		t.Fatalf("a failed apply: exit %d\n%s", r.code, r.stderr)
	}
	lock(func() {
		if len(st.merges) != 0 {
			t.Fatalf("a plan or a failed apply merged: %v", st.merges)
		}
		st.pulls[5].mergeable = false
	})
	r := runBin(t, root, env, "apply", "-auto-approve", "--dir", "app")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: automerge: merging") {
		t.Errorf("a merge the forge refuses: exit %d\n%s", r.code, r.stderr)
	}
	lock(func() { st.pulls[5].mergeable = true })
	r = runBin(t, root, env, "apply", "-auto-approve", "--dir", "app")
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := "5 squash aaaaaaa"
	if forgeName == "gitlab" {
		want = "5 aaaaaaa"
	}
	lock(func() {
		if !slices.Equal(st.merges, []string{want}) || !slices.Equal(st.deleted, []string{"change"}) {
			t.Errorf("merges %v, deleted %v; want [%s], [change]\n%s", st.merges, st.deleted, want, r.stderr)
		}
		st.pulls[6] = &fakePull{head: strings.Repeat("b", 40), mergeable: true}
	})
	if !strings.Contains(r.stderr, "strata: automerge: merged") {
		t.Errorf("the merge is not said:\n%s", r.stderr)
	}

	// Spread over jobs, ci finish merges, as the config said at start.
	env = testenv.Env(t, f.jobEnv(t, events, "alice", 6, true)...)
	testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), "resource \"terraform_data\" \"y\" {}\n")
	bucket := "file://" + t.TempDir()
	plan, _ := startRun(t, root, env, "apply", "--auto-approve", "--dir", "app", "--state", bucket, "--json")
	for _, w := range plan.Waves {
		for _, shard := range w.Shards {
			if r := runBin(t, root, env, "ci", "run", "--state", bucket, "--run", plan.Run, "--wave", itoa(w.Wave), "--shard", itoa(shard)); r.code != 0 {
				t.Fatalf("wave %d shard %d: exit %d\n%s%s", w.Wave, shard, r.code, r.stdout, r.stderr)
			}
		}
	}
	if r := runBin(t, root, env, "ci", "finish", "--state", bucket, "--run", plan.Run); r.code != 0 || !strings.Contains(r.stderr, "automerge: merged") {
		t.Fatalf("finish: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lock(func() {
		if len(st.merges) != 2 || !strings.HasPrefix(st.merges[1], "6 ") {
			t.Errorf("ci finish did not merge PR 6: %v", st.merges)
		}
	})
}
