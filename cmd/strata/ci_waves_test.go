package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/internal/testenv"
)

// emitGitHub writes the GitHub workflow for the repository at root, as
// strata ci emit github with args writes it.
func emitGitHub(t *testing.T, root string, env []string, args ...string) []byte {
	t.Helper()
	r := runBin(t, root, env, append([]string{"ci", "emit", "github", "--strata-version", "v1.2.3"}, args...)...)
	if r.code != 0 {
		t.Fatalf("ci emit github %v: %d\n%s", args, r.code, r.stderr)
	}
	return []byte(r.stdout)
}

// writeLayers writes testenv.Layered's repository of layers×width units
// into root, over what it held: its graph gets deeper, its files stay.
func writeLayers(t *testing.T, root string, layers, width int) {
	t.Helper()
	for name, content := range testenv.Layered(layers, width) {
		testenv.WriteFile(t, filepath.Join(root, name), content)
	}
}

// wantWaveJobs checks which jobs of the emitted workflow run: start, the
// wave jobs of the run's waves and no other, in order, each over the
// shards given, and finish.
func wantWaveJobs(t *testing.T, ran []ranJob, waves int, shards []int) {
	t.Helper()
	want := []ranJob{{name: "start"}}
	for w := 0; w < waves; w++ {
		want = append(want, ranJob{fmt.Sprintf("wave_%d", w), shards})
	}
	want = append(want, ranJob{name: "finish"})
	if !reflect.DeepEqual(ran, want) {
		t.Errorf("jobs that run:\n%v\nwant\n%v", ran, want)
	}
}

// TestEmittedWorkflowRunsEveryWave: the workflow emitted for a repository
// of 2 waves is the one emitted once its graph has 5, and run for the
// deeper graph, as GitHub Actions runs it, every wave's jobs run, in
// order, over the shards start gave them: every unit is applied and every
// invariant holds. A job given a wave or a shard the run does not have
// fails naming the run's size.
func TestEmittedWorkflowRunsEveryWave(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, testenv.Layered(2, 2))
	env := hermeticEnv(t)
	workflow := emitGitHub(t, root, env)
	writeLayers(t, root, 5, 2)
	if again := emitGitHub(t, root, env); string(again) != string(workflow) {
		t.Fatal("the workflow changed with the repository's graph")
	}
	bucket := "file://" + t.TempDir()
	g := newGitHubRun(t, workflow, root, env, map[string]string{"command": "apply", "auto-approve": "true", "shards": "2", "state-url": bucket})
	if r := g.start(t); r.code != 0 {
		t.Fatalf("start: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if g.outputs["waves"] != "5" || g.outputs["run"] == "" {
		t.Fatalf("start's outputs: %v", g.outputs)
	}
	ran := g.jobsThatRun(t)
	wantWaveJobs(t, ran, 5, []int{0, 1})
	for _, job := range ran {
		if !strings.HasPrefix(job.name, "wave_") {
			continue
		}
		step := g.step(t, job.name, "")
		if !strings.Contains(step.Run, "--wave "+strings.TrimPrefix(job.name, "wave_")+" ") {
			t.Errorf("%s runs %s", job.name, step.Run)
		}
		for _, shard := range job.shards {
			if r, _ := g.runStep(t, step, shard); r.code != 0 {
				t.Fatalf("%s shard %d: %d\n%s%s", job.name, shard, r.code, r.stdout, r.stderr)
			}
		}
	}
	r, outputs := g.runStep(t, g.step(t, "finish", "finish"), 0)
	if r.code != 0 || outputs["exit-code"] != "0" {
		t.Fatalf("finish: %d, outputs %v\n%s%s", r.code, outputs, r.stdout, r.stderr)
	}
	rep := readReport(t, filepath.Join(root, "strata-report.json"))
	if len(rep.Units) != 10 {
		t.Errorf("the report has %d units, want 10", len(rep.Units))
	}
	for _, u := range rep.Units {
		if u.Status != "applied" {
			t.Errorf("%s: %s", u.Name(), u.Status)
		}
	}
	run := g.outputs["run"]
	if r := runBin(t, root, env, "ci", "check", "--state", bucket, "--run", run); r.code != 0 {
		t.Errorf("check: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct{ wave, shard, want string }{
		{"5", "0", "has 5 waves (0 to 4); --wave 5 is none of them"},
		{"0", "2", "spreads each wave over at most 2 shards (0 to 1); --shard 2 is none of them"},
	} {
		r := runBin(t, root, env, "ci", "run", "--state", bucket, "--run", run, "--wave", tc.wave, "--shard", tc.shard)
		if r.code != 1 || !strings.Contains(r.stderr, "run "+run+" "+tc.want) {
			t.Errorf("wave %s shard %s: %d\n%s", tc.wave, tc.shard, r.code, r.stderr)
		}
	}
}

// TestEmittedWorkflowWaveBound: the default workflow runs the wave jobs
// of a run of 1 wave and of ci.DefaultMaxWaves waves, each exactly its
// waves; a run of one wave more fails at start, naming the --max-waves
// that runs it, with no output set and nothing written to the bucket.
func TestEmittedWorkflowWaveBound(t *testing.T) {
	env := hermeticEnv(t)
	workflow := emitGitHub(t, writeRepo(t, map[string]string{"strata.yml": "dirs: {}\n"}), env)
	for _, layers := range []int{1, ci.DefaultMaxWaves, ci.DefaultMaxWaves + 1} {
		root := writeRepo(t, testenv.Layered(layers, 1))
		bucket := t.TempDir()
		g := newGitHubRun(t, workflow, root, env, map[string]string{"command": "plan", "state-url": "file://" + bucket})
		r := g.start(t)
		if layers <= ci.DefaultMaxWaves {
			if r.code != 0 {
				t.Fatalf("%d waves: start: %d\n%s", layers, r.code, r.stderr)
			}
			wantWaveJobs(t, g.jobsThatRun(t), layers, []int{0})
			continue
		}
		want := fmt.Sprintf("needs %d waves, more than --max-waves %d: the workflow strata ci emit github wrote has %d wave jobs; write it again with strata ci emit github --max-waves %d or more",
			layers, ci.DefaultMaxWaves, ci.DefaultMaxWaves, layers)
		if r.code != 1 || !strings.Contains(r.stderr, want) || len(g.outputs) != 0 {
			t.Errorf("%d waves: start: %d, outputs %v\n%s", layers, r.code, g.outputs, r.stderr)
		}
		if entries, err := os.ReadDir(bucket); err != nil || len(entries) != 0 {
			t.Errorf("%d waves: the refused start wrote %v (%v)", layers, entries, err)
		}
		bigger := emitGitHub(t, root, env, "--max-waves", fmt.Sprint(layers))
		g = newGitHubRun(t, bigger, root, env, map[string]string{"command": "plan", "state-url": "file://" + bucket})
		if r := g.start(t); r.code != 0 {
			t.Fatalf("--max-waves %d: start: %d\n%s", layers, r.code, r.stderr)
		}
		wantWaveJobs(t, g.jobsThatRun(t), layers, []int{0})
	}
	for _, args := range [][]string{{"ci", "emit", "github", "--max-waves", "0"}, {"ci", "emit", "github", "--max-waves", "101"}, {"ci", "start", "plan", "--max-waves", "0"}} {
		if r := runBin(t, t.TempDir(), env, args...); r.code != 1 || !strings.Contains(r.stderr, "--max-waves "+args[len(args)-1]+": expected") {
			t.Errorf("%v: %d\n%s", args, r.code, r.stderr)
		}
	}
}

// TestEmitPinsAVersion: a workflow's default strata is never empty. A
// build with no release version and no commit of its own (this test's)
// is refused, naming the flag; --strata-version pins what it is given,
// and a version that is neither a release nor a commit is refused.
func TestEmitPinsAVersion(t *testing.T) {
	root := fixture(t, "nested")
	code, out, errOut := strata(t, "-C", root, "ci", "emit", "github")
	if code != 1 || out != "" || !strings.Contains(errOut, "no release version and no commit of its own") || !strings.Contains(errOut, "pass --strata-version") {
		t.Errorf("emit from a development build: exit %d, %q\n%s", code, out, errOut)
	}
	code, out, errOut = strata(t, "-C", root, "ci", "emit", "github", "--strata-version", "0123abc")
	if code != 0 || !strings.Contains(out, "        default: 0123abc\n") {
		t.Errorf("emit --strata-version: exit %d\n%s\n%s", code, errOut, out)
	}
	code, _, errOut = strata(t, "-C", root, "ci", "emit", "github", "--strata-version", "latest")
	if code != 1 || !strings.Contains(errOut, "--strata-version latest: expected a release (v1.2.3) or a commit") {
		t.Errorf("emit --strata-version latest: exit %d\n%s", code, errOut)
	}
}
