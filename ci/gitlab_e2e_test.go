package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks/config"
)

// Tests of the strata command as CI runs it: the emitted files as the
// commands write them, and a GitLab pipeline run by gitlab-ci-local.

var updateExamples = flag.Bool("update-examples", false, "rewrite docs/examples/ci from the strata ci emit commands")

// buildStrata builds the strata command into a temp dir.
func buildStrata(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "strata")
	if out, err := testenv.BuildStrata("../cmd/strata", bin); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestGitLabPipeline runs the .gitlab-ci.yml that strata ci emit gitlab
// writes with gitlab-ci-local (shell executor) on a git repository of
// fixtures/nested, with real terraform and a file:// bucket: the start
// job plans the run and writes the child pipeline, whose jobs apply every
// unit, each after the units it waits for, and whose finish job writes
// the report. make test installs gitlab-ci-local; elsewhere the test
// needs it on PATH. gitlab-ci-local needs rsync, from the system.
func TestGitLabPipeline(t *testing.T) {
	glci := testenv.Tool(t, "gitlab-ci-local")
	if _, err := exec.LookPath("rsync"); err != nil {
		// A system package, which make tools does not install.
		t.Skip("gitlab-ci-local needs rsync, which is not on PATH")
	}
	testenv.NeedTerraform(t)
	strata := buildStrata(t)
	r := newGitLabRepo(t, strata)
	out := r.pipeline(strata, glci)
	run, rep, m := r.report(out)
	if m.Command != runner.CmdApply || len(m.Units) != 7 {
		t.Errorf("run %s: %s of %d units", m.Run, m.Command, len(m.Units))
	}
	byID := map[string]*report.UnitReport{}
	for _, u := range rep.Units {
		byID[u.ID()] = u
		if u.Status != report.StatusApplied {
			t.Errorf("%s: %s (%s)", u.ID(), u.Status, u.Reason)
		}
	}
	if rep.ExitCode != 0 || len(rep.Units) != 7 {
		t.Errorf("exit code %d, %d units\n%s", rep.ExitCode, len(rep.Units), out)
	}
	checkJobOrder(t, m, byID)
	// The pull request comment of the run.
	comment := r.run(strata, "ci", "comment", "--state", "file://"+r.stateDir, "--run", run, "--link", "https://gitlab.example/group/project/-/pipelines/1")
	for _, want := range []string{report.CommentMarker + "\n### strata apply: 7 applied\n", "[Full summary](https://gitlab.example/group/project/-/pipelines/1)"} {
		if !strings.Contains(comment, want) {
			t.Errorf("strata ci comment: no %q in\n%s", want, comment)
		}
	}
	// The finish job's report is the same run's.
	written, err := report.ReadReport(filepath.Join(r.dir, "strata-report.json"))
	if err != nil {
		t.Fatalf("the finish job wrote no report: %v\n%s", err, out)
	}
	if written.ExitCode != 0 || len(written.Units) != 7 {
		t.Errorf("strata-report.json: exit code %d, %d units", written.ExitCode, len(written.Units))
	}
}

// gitlabRepo is a copy of fixtures/nested that TestGitLabPipeline makes a
// git repository and runs a pipeline in, with its file:// state bucket.
type gitlabRepo struct {
	t        *testing.T
	dir      string
	stateDir string
	env      []string
}

func newGitLabRepo(t *testing.T, strata string) *gitlabRepo {
	t.Helper()
	return &gitlabRepo{
		t:        t,
		dir:      testenv.CopyTree(t, filepath.Join("..", "fixtures", "nested")),
		stateDir: t.TempDir(),
		env: testenv.Env(t,
			"PATH="+filepath.Dir(strata)+string(os.PathListSeparator)+os.Getenv("PATH"),
			"GIT_AUTHOR_NAME=strata", "GIT_AUTHOR_EMAIL=strata@example.com",
			"GIT_COMMITTER_NAME=strata", "GIT_COMMITTER_EMAIL=strata@example.com",
		),
	}
}

// run runs a command in the repository and returns its output; the test
// fails when the command does.
func (r *gitlabRepo) run(name string, args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pipeline commits the emitted .gitlab-ci.yml with the fixture and runs
// it on the default branch with gitlab-ci-local, returning its output.
func (r *gitlabRepo) pipeline(strata, glci string) string {
	r.t.Helper()
	pipeline := r.run(strata, "ci", "emit", "gitlab", "--shards", "2")
	writeTestFile(r.t, filepath.Join(r.dir, ".gitlab-ci.yml"), []byte(pipeline))
	r.run("git", "init", "-q", "-b", "main")
	r.run("git", "add", "-A")
	r.run("git", "commit", "-q", "-m", "nested")
	r.run("git", "remote", "add", "origin", "https://gitlab.example/group/project.git")
	// The project's CI/CD variables, which child pipelines see too. A
	// pipeline of the default branch applies.
	writeTestFile(r.t, filepath.Join(r.dir, ".gitlab-ci-local-variables.yml"), []byte(
		"STRATA_STATE_URL: \"file://"+r.stateDir+"\"\nSTRATA_ARGS: \"--all\"\nSTRATA_SHARDS: \"2\"\n"))
	// gitlab-ci-local's child pipelines are experimental: its exit code
	// does not follow a failed child job; the report says what ran.
	return r.run(glci, "--force-shell-executor")
}

// report returns the run the start job wrote to strata-start.json, and
// its report and manifest from the bucket; out is the pipeline's output,
// for failures.
func (r *gitlabRepo) report(out string) (string, *report.Report, *Manifest) {
	t := r.t
	t.Helper()
	var started struct {
		Run string `json:"run"`
	}
	b, err := os.ReadFile(filepath.Join(r.dir, "strata-start.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := json.Unmarshal(b, &started); err != nil || started.Run == "" {
		t.Fatalf("strata-start.json: %v %s", err, b)
	}
	ctx := context.Background()
	st, err := objstore.Open(ctx, "file://"+r.stateDir, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, m, err := BuildReport(ctx, st, started.Run)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return started.Run, rep, m
}

// checkJobOrder: each unit's job ran after the jobs of the units it waits
// for.
func checkJobOrder(t *testing.T, m *Manifest, byID map[string]*report.UnitReport) {
	t.Helper()
	for _, mu := range m.Units {
		u := byID[mu.ID]
		if u == nil || len(u.Steps) == 0 {
			continue
		}
		for _, id := range mu.After {
			before := byID[id]
			if before == nil || len(before.Steps) == 0 {
				t.Errorf("%s waits for %s, which did not run", mu.ID, id)
				continue
			}
			if end, start := before.Steps[len(before.Steps)-1].FinishedAt, u.Steps[0].StartedAt; start.Before(end) {
				t.Errorf("%s started at %s, before %s finished at %s", mu.ID, start, id, end)
			}
		}
	}
}

// TestEmitExamples: docs/examples/ci holds what the strata ci emit
// commands write for fixtures/nested (go test ./ci -run TestEmitExamples
// -update-examples rewrites them).
func TestEmitExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata")
	}
	strata := buildStrata(t)
	fixture, err := filepath.Abs(filepath.Join("..", "fixtures", "nested"))
	if err != nil {
		t.Fatal(err)
	}
	state := "file://" + t.TempDir()
	env := append(os.Environ(), "STRATA_STATE_URL="+state)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(strata, args...)
		cmd.Dir, cmd.Env = fixture, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("strata %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}
	run("ci", "start", "apply", "--auto-approve", "--all", "--shards", "2", "--run", "example", "--json")
	examples := map[string][]byte{
		"github-workflow.yml": run("ci", "emit", "github", "--strata-version", "v1.2.3"),
		"gitlab-ci.yml":       run("ci", "emit", "gitlab"),
		"child.yml":           run("ci", "emit", "gitlab", "--run", "example"),
	}
	for name, got := range examples {
		path := filepath.Join("..", "docs", "examples", "ci", name)
		if *updateExamples {
			writeTestFile(t, path, got)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what strata ci emit writes; go test ./ci -run TestEmitExamples -update-examples rewrites it", path)
		}
	}
}

// TestExampleNames: no file under docs/examples has the name of a file
// strata reads (its config) or of one ci emit says to commit, so none is
// taken for a repository's own: strata started in docs/examples/ci finds
// no example for its config.
func TestExampleNames(t *testing.T) {
	taken := map[string]bool{config.StrataConfigFile: true, "config.yml": true, "config.yaml": true, ".gitlab-ci.yml": true, "strata-drift.yml": true}
	examples := filepath.Join("..", "docs", "examples")
	err := filepath.WalkDir(examples, func(path string, d fs.DirEntry, err error) error {
		if err == nil && taken[d.Name()] {
			t.Errorf("%s has the name of a file strata reads or ci emit writes", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(examples)
	if err != nil {
		t.Fatal(err)
	}
	if _, cfg, err := config.FindRoot(filepath.Join(abs, "ci")); err != nil || strings.HasPrefix(cfg, abs+string(filepath.Separator)) {
		t.Errorf("strata started in docs/examples/ci takes %s for its config (%v)", cfg, err)
	}
}
