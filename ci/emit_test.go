package ci

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// childJob is a job of an emitted child pipeline, as GitLab reads it.
type childJob struct {
	Needs  []string `yaml:"needs"`
	When   string   `yaml:"when"`
	Script []string `yaml:"script"`
}

// parseChild reads an emitted child pipeline: its jobs by name, and the
// run and image it names.
func parseChild(t *testing.T, b []byte) (jobs map[string]childJob, run, image string) {
	t.Helper()
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	jobs = map[string]childJob{}
	for name, n := range doc {
		switch name {
		case "default":
			var d struct {
				Image struct {
					Name string `yaml:"name"`
				} `yaml:"image"`
			}
			if err := n.Decode(&d); err != nil {
				t.Fatal(err)
			}
			image = d.Image.Name
		case "variables":
			var v map[string]string
			if err := n.Decode(&v); err != nil {
				t.Fatal(err)
			}
			run = v["STRATA_RUN"]
		default:
			var j childJob
			if err := n.Decode(&j); err != nil {
				t.Fatalf("job %s: %v", name, err)
			}
			jobs[name] = j
		}
	}
	return jobs, run, image
}

// reach is the shard jobs a job waits for, through join jobs.
func reach(jobs map[string]childJob, name string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		for _, need := range jobs[n].Needs {
			if seen[need] {
				continue
			}
			seen[need] = true
			walk(need)
		}
	}
	walk(name)
	var out []string
	for n := range seen {
		if strings.HasPrefix(n, "wave-") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// childUnit is a manifest unit of a wave's shard, waiting for after.
func childUnit(id string, wave, shard int, after ...string) ManifestUnit {
	return ManifestUnit{ID: id, Wave: wave, Shard: shard, After: after}
}

// wideUnits is wave 0 of n shards, one unit each, and one unit in wave 1
// waiting for all of them.
func wideUnits(n int) []ManifestUnit {
	var ids []string
	var out []ManifestUnit
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("u%04d@default#s", i)
		ids = append(ids, id)
		out = append(out, childUnit(id, 0, i))
	}
	return append(out, childUnit("last@default#s", 1, 0, ids...))
}

// wideShards are the names of wave 0's n shard jobs, sorted.
func wideShards(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("wave-0-shard-%d", i))
	}
	sort.Strings(out)
	return out
}

// childCases are the manifests TestEmitGitLabChild emits, with the needs
// and join jobs their child pipelines must have.
var childCases = []struct {
	name  string
	units []ManifestUnit
	// needs are the shard jobs each job waits for, through joins.
	needs map[string][]string
	joins int
}{
	{
		name: "a DAG, not stages",
		units: []ManifestUnit{
			childUnit("net@default#a", 0, 0), childUnit("dns@default#a", 0, 1),
			childUnit("db@default#a", 1, 0, "net@default#a"),
			childUnit("cdn@default#a", 1, 1, "dns@default#a", "net@default#a"),
			// Two units of one job waiting for one job: needed once.
			childUnit("app@default#a", 2, 0, "db@default#a"), childUnit("web@default#a", 2, 0, "db@default#a"),
			// Waits for wave 0 only, though it is in wave 2.
			childUnit("mail@default#a", 2, 1, "cdn@default#a"),
		},
		needs: map[string][]string{
			"wave-0-shard-0": nil,
			"wave-0-shard-1": nil,
			"wave-1-shard-0": {"wave-0-shard-0"},
			"wave-1-shard-1": {"wave-0-shard-0", "wave-0-shard-1"},
			"wave-2-shard-0": {"wave-0-shard-0", "wave-1-shard-0"},
			"wave-2-shard-1": {"wave-0-shard-0", "wave-0-shard-1", "wave-1-shard-1"},
		},
	},
	{
		// The finish's 51 needs: 2 joins.
		name:  "50 needs: no join",
		units: wideUnits(50),
		needs: map[string][]string{"wave-1-shard-0": wideShards(50)},
		joins: 2,
	},
	{
		// 120 needs: 3 joins of 40; the finish's 121 needs two of
		// them again, and a join of the last 41.
		name:  "over 50 needs: join jobs",
		units: wideUnits(120),
		needs: map[string][]string{"wave-1-shard-0": wideShards(120)},
		joins: 4,
	},
	{
		// 2,600 needs: 52 joins, then 2 more; the finish's 2,601: 53,
		// then 2.
		name:  "joins of joins",
		units: wideUnits(2600),
		needs: map[string][]string{"wave-1-shard-0": wideShards(2600)},
		joins: 52 + 2 + 53 + 2,
	},
}

func TestEmitGitLabChild(t *testing.T) {
	for _, tc := range childCases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Manifest{Run: "20261123T101500Z-9f2c4e1a", Units: tc.units}
			b, err := EmitGitLabChild(m, DefaultGitLabOptions())
			if err != nil {
				t.Fatal(err)
			}
			jobs, run, image := parseChild(t, b)
			if run != m.Run || image != DefaultImage {
				t.Errorf("run %q, image %q", run, image)
			}
			shardJobs, joins := checkChildJobs(t, jobs)
			if joins != tc.joins {
				t.Errorf("%d join jobs, want %d", joins, tc.joins)
			}
			for name, want := range tc.needs {
				if got := reach(jobs, name); !reflect.DeepEqual(got, want) {
					t.Errorf("%s waits for %v, want %v", name, got, want)
				}
			}
			sort.Strings(shardJobs)
			if got := reach(jobs, "finish"); !reflect.DeepEqual(got, shardJobs) {
				t.Errorf("finish waits for %d of %d jobs", len(got), len(shardJobs))
			}
			checkShardScripts(t, jobs)
		})
	}
}

// checkChildJobs checks every job of a child pipeline: at most
// GitLabMaxNeeds needs, each of them a job, run always, and a join job's
// script doing nothing. It returns the shard jobs and the number of join
// jobs.
func checkChildJobs(t *testing.T, jobs map[string]childJob) (shardJobs []string, joins int) {
	t.Helper()
	for name, j := range jobs {
		if len(j.Needs) > GitLabMaxNeeds {
			t.Errorf("%s needs %d jobs", name, len(j.Needs))
		}
		if j.When != "always" {
			t.Errorf("%s: when %q", name, j.When)
		}
		for _, n := range j.Needs {
			if _, ok := jobs[n]; !ok {
				t.Errorf("%s needs %s, which is not a job", name, n)
			}
		}
		switch {
		case strings.HasPrefix(name, "join-"):
			joins++
			if !reflect.DeepEqual(j.Script, []string{"true"}) {
				t.Errorf("%s: script %q", name, j.Script)
			}
		case strings.HasPrefix(name, "wave-"):
			shardJobs = append(shardJobs, name)
		}
	}
	return shardJobs, joins
}

// checkShardScripts: each shard job runs its own wave's shard.
func checkShardScripts(t *testing.T, jobs map[string]childJob) {
	t.Helper()
	wave, shard := 0, 0
	for name, j := range jobs {
		if _, err := fmt.Sscanf(name, "wave-%d-shard-%d", &wave, &shard); err == nil {
			want := fmt.Sprintf(`strata ci run --run "$STRATA_RUN" --wave %d --shard %d`, wave, shard)
			if !reflect.DeepEqual(j.Script, []string{want}) {
				t.Errorf("%s: script %q", name, j.Script)
			}
		}
	}
}

// TestEmitGitLabChildIsDeterministic: the units' order in the manifest
// does not change a byte.
func TestEmitGitLabChildIsDeterministic(t *testing.T) {
	var units []ManifestUnit
	for i := 0; i < 300; i++ {
		u := ManifestUnit{ID: fmt.Sprintf("u%03d", i), Wave: i % 3, Shard: i % 7}
		if u.Wave > 0 {
			for j := 0; j < i; j += 5 {
				if j%3 < u.Wave {
					u.After = append(u.After, fmt.Sprintf("u%03d", j))
				}
			}
		}
		units = append(units, u)
	}
	first, err := EmitGitLabChild(&Manifest{Run: "r", Units: units}, DefaultGitLabOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := len(units) - 1; i > 0; i-- {
		j := (i * 7919) % (i + 1)
		units[i], units[j] = units[j], units[i]
	}
	again, err := EmitGitLabChild(&Manifest{Run: "r", Units: units}, DefaultGitLabOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Error("the output depends on the order of the manifest's units")
	}
}

func TestEmitGitLabChildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     *Manifest
		image string
		want  string
	}{
		{"unknown unit", &Manifest{Run: "r", Units: []ManifestUnit{{ID: "a", Wave: 1, After: []string{"gone"}}}}, DefaultImage, "waits for gone, which is not in the run"},
		{"same wave", &Manifest{Run: "r", Units: []ManifestUnit{{ID: "a"}, {ID: "b", After: []string{"a"}}}}, DefaultImage, "expected an earlier wave"},
		{"run ID a shell would read", &Manifest{Run: "r$(id)"}, DefaultImage, `run ID "r$(id)"`},
		{"no image", &Manifest{Run: "r"}, " ", "no image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EmitGitLabChild(tc.m, GitLabOptions{Shards: 1, Image: tc.image})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestEmitGitLabQuotes: a value from the user reads back as itself.
func TestEmitGitLabQuotes(t *testing.T) {
	image := "registry.example/strata:1.0\"\n  script: [\"id\"] # x: y"
	b, err := EmitGitLabChild(&Manifest{Run: "r", Units: []ManifestUnit{{ID: "a"}}}, GitLabOptions{Shards: 1, Image: image})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, got := parseChild(t, b)
	if got != image || len(jobs) != 2 {
		t.Errorf("image %q, %d jobs\n%s", got, len(jobs), b)
	}
	b, err = EmitGitLabParent(GitLabOptions{Shards: 3, Image: image})
	if err != nil {
		t.Fatal(err)
	}
	var parent struct {
		Variables map[string]string `yaml:"variables"`
	}
	if err := yaml.Unmarshal(b, &parent); err != nil {
		t.Fatal(err)
	}
	if parent.Variables["STRATA_IMAGE"] != image || parent.Variables["STRATA_SHARDS"] != "3" {
		t.Errorf("variables %q", parent.Variables)
	}
}

// TestGitHubWorkflowActionlint checks the emitted workflow, as written by
// default and with the most wave jobs, and the example workflow that
// calls it, with actionlint. make test installs actionlint; elsewhere the
// test needs it on PATH.
func TestGitHubWorkflowActionlint(t *testing.T) {
	lint := testenv.Tool(t, "actionlint")
	opt := DefaultGitHubOptions()
	opt.OIDC = true
	workflow, err := EmitGitHub(opt)
	if err != nil {
		t.Fatal(err)
	}
	largest, err := EmitGitHub(GitHubOptions{MaxWaves: MaxWaveJobs, Shards: MaxShards})
	if err != nil {
		t.Fatal(err)
	}
	drift, err := EmitGitHubDrift([]config.DriftSchedule{
		{Name: "nightly", Schedule: "daily", TagQuery: "dir:a", Reconcile: true},
		{Name: "often", Schedule: "hourly", TagQuery: "tag:a and not tag:b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := os.ReadFile(filepath.Join("..", "docs", "examples", "ci", "github-caller.yml"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for name, content := range map[string][]byte{
		".git/HEAD":                     []byte("ref: refs/heads/main\n"),
		".github/workflows/strata.yml":  workflow,
		".github/workflows/largest.yml": largest,
		".github/workflows/caller.yml":  caller,
		".github/workflows/drift.yml":   drift,
	} {
		writeTestFile(t, filepath.Join(repo, name), content)
	}
	cmd := exec.Command(lint, "-no-color")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}

func writeTestFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEmittedScriptsShellcheck runs shellcheck on every script the
// emitted CI files and the action run: the GitHub workflow's and the
// action's run steps (bash, their shell) and the GitLab pipelines'
// scripts (sh, as the job's image may have no bash). make test installs
// shellcheck.
func TestEmittedScriptsShellcheck(t *testing.T) {
	sc := testenv.Tool(t, "shellcheck")
	github, err := EmitGitHub(GitHubOptions{MaxWaves: 3, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := EmitGitLabParent(DefaultGitLabOptions())
	if err != nil {
		t.Fatal(err)
	}
	child, err := EmitGitLabChild(&Manifest{Run: "20261123T101500Z-9f2c4e1a", Units: childCases[0].units}, DefaultGitLabOptions())
	if err != nil {
		t.Fatal(err)
	}
	action, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{}
	for name, doc := range map[string][]byte{"github": github, "action": action, "gitlab": parent, "gitlab-child": child} {
		var root yaml.Node
		if err := yaml.Unmarshal(doc, &root); err != nil {
			t.Fatal(err)
		}
		shell := "bash"
		if strings.HasPrefix(name, "gitlab") {
			shell = "sh"
		}
		collectScripts(&root, name, shell, scripts)
	}
	if len(scripts) < 6 {
		t.Fatalf("found %d scripts: %v", len(scripts), scripts)
	}
	dir := t.TempDir()
	for name, script := range scripts {
		path := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+".sh")
		writeTestFile(t, path, []byte(script))
		if out, err := exec.Command(sc, "--norc", path).CombinedOutput(); err != nil {
			t.Errorf("%s: shellcheck: %v\n%s\n%s", name, err, out, script)
		}
	}
}

// collectScripts finds the scripts of a CI file: a GitHub step's run, a
// GitLab job's script, before_script and after_script lines. A GitHub
// expression (${{ … }}) reads as a variable to shellcheck.
func collectScripts(n *yaml.Node, where, shell string, out map[string]string) {
	expr := regexp.MustCompile(`\$\{\{[^}]*\}\}`)
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			collectScripts(c, fmt.Sprintf("%s[%d]", where, i), shell, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			key := where + "/" + k
			switch {
			case k == "run" && v.Kind == yaml.ScalarNode && strings.Contains(where, "/steps["):
				out[key] = "#!/usr/bin/env " + shell + "\n" + expr.ReplaceAllString(v.Value, `"$GITHUB_EXPR"`) + "\n"
			case (k == "script" || k == "before_script" || k == "after_script") && v.Kind == yaml.SequenceNode:
				lines := []string{"#!/bin/" + shell}
				for _, l := range v.Content {
					lines = append(lines, l.Value)
				}
				out[key] = strings.Join(lines, "\n") + "\n"
			default:
				collectScripts(v, key, shell, out)
			}
		}
	}
}
