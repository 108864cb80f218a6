package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The workflow strata ci emit github writes, evaluated as GitHub Actions
// would run it, as far as its jobs' needs, ifs and matrices, and the
// scripts of its strata steps: the tests run those scripts with bash, and
// decide from the start step's outputs which jobs run and over which
// shards.

type workflowStep struct {
	ID               string            `yaml:"id"`
	Run              string            `yaml:"run"`
	Env              map[string]string `yaml:"env"`
	WorkingDirectory string            `yaml:"working-directory"`
}

type workflowJob struct {
	Needs    []string          `yaml:"needs"`
	If       string            `yaml:"if"`
	Outputs  map[string]string `yaml:"outputs"`
	Strategy struct {
		Matrix map[string]string `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []workflowStep `yaml:"steps"`
}

type workflow struct {
	On struct {
		WorkflowCall struct {
			Inputs map[string]struct {
				Default any `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"workflow_call"`
	} `yaml:"on"`
	Env  map[string]string      `yaml:"env"`
	Jobs map[string]workflowJob `yaml:"jobs"`
}

// githubRun is one run of the emitted workflow: the caller's inputs, the
// repository the steps run in, and the start step's outputs once it ran.
type githubRun struct {
	wf      workflow
	root    string
	env     []string
	inputs  map[string]string
	outputs map[string]string
}

func newGitHubRun(t *testing.T, b []byte, root string, env []string, inputs map[string]string) *githubRun {
	t.Helper()
	g := &githubRun{root: root, inputs: inputs, outputs: map[string]string{}}
	if err := yaml.Unmarshal(b, &g.wf); err != nil {
		t.Fatal(err)
	}
	g.env = append(slices.Clone(env), "PATH="+filepath.Dir(strataBin)+":"+os.Getenv("PATH"))
	return g
}

// ranJob is a job that runs, with its matrix's shards (none for a job
// without a matrix).
type ranJob struct {
	name   string
	shards []int
}

// jobsThatRun decides, from the start step's outputs, which jobs run: in
// an order where each comes after the jobs it needs.
func (g *githubRun) jobsThatRun(t *testing.T) []ranJob {
	t.Helper()
	names := make([]string, 0, len(g.wf.Jobs))
	for name := range g.wf.Jobs {
		names = append(names, name)
	}
	sort.Strings(names)
	result := map[string]string{}
	var ran []ranJob
	for len(result) < len(names) {
		var decided []string
		for _, name := range names {
			job := g.wf.Jobs[name]
			_, done := result[name]
			if done || slices.ContainsFunc(job.Needs, func(n string) bool { _, ok := result[n]; return !ok }) {
				continue
			}
			decided = append(decided, name)
		}
		if len(decided) == 0 {
			t.Fatalf("the jobs left wait for each other or for no job: %v decided", result)
		}
		for _, name := range decided {
			result[name] = "skipped"
			if g.runs(t, name, result) {
				result[name] = "success"
				ran = append(ran, ranJob{name, g.matrix(t, name)})
			}
		}
	}
	return ran
}

var (
	needsOutputTerm = regexp.MustCompile(`^needs\.([\w-]+)\.outputs\.([\w-]+) == '([^']*)'$`)
	needsResultTerm = regexp.MustCompile(`^needs\.([\w-]+)\.result == '([^']*)'$`)
	stepOutputExpr  = regexp.MustCompile(`^\$\{\{ steps\.start\.outputs\.([\w-]+) \}\}$`)
	matrixExpr      = regexp.MustCompile(`^\$\{\{ fromJSON\(needs\.([\w-]+)\.outputs\.([\w-]+)\) \}\}$`)
	anyExpr         = regexp.MustCompile(`\$\{\{ (.*?) \}\}`)
)

// runs evaluates a job's if, given the results of the jobs it needs: a
// conjunction of status functions and comparisons of the needed jobs'
// outputs and results; any other term fails the test.
func (g *githubRun) runs(t *testing.T, name string, result map[string]string) bool {
	t.Helper()
	job := g.wf.Jobs[name]
	if job.If == "" {
		return !slices.ContainsFunc(job.Needs, func(n string) bool { return result[n] != "success" })
	}
	expr, ok := strings.CutPrefix(job.If, "${{ ")
	if expr, ok = strings.CutSuffix(expr, " }}"); !ok {
		t.Fatalf("%s: if %q is not one expression", name, job.If)
	}
	for _, term := range strings.Split(expr, " && ") {
		if term == "!cancelled()" || term == "always()" {
			continue
		}
		out, res := needsOutputTerm.FindStringSubmatch(term), needsResultTerm.FindStringSubmatch(term)
		switch {
		case out != nil && slices.Contains(job.Needs, out[1]):
			if g.output(t, out[1], out[2]) != out[3] {
				return false
			}
		case res != nil && slices.Contains(job.Needs, res[1]):
			if result[res[1]] != res[2] {
				return false
			}
		default:
			t.Fatalf("%s: if %q: the test does not evaluate %q (or the job does not need the job it reads)", name, job.If, term)
		}
	}
	return true
}

// output is a job's output: for start, the step output its outputs name
// ("" when the step set none, as GitHub Actions reads it).
func (g *githubRun) output(t *testing.T, job, name string) string {
	t.Helper()
	expr, ok := g.wf.Jobs[job].Outputs[name]
	if job != "start" || !ok {
		t.Fatalf("needs.%s.outputs.%s: the job declares no such output", job, name)
	}
	m := stepOutputExpr.FindStringSubmatch(expr)
	if m == nil {
		t.Fatalf("start's output %s is %q, not a step output", name, expr)
	}
	return g.outputs[m[1]]
}

// matrix is the shards of a job's matrix, read from the output its
// fromJSON names.
func (g *githubRun) matrix(t *testing.T, name string) []int {
	t.Helper()
	expr, ok := g.wf.Jobs[name].Strategy.Matrix["shard"]
	if !ok {
		return nil
	}
	m := matrixExpr.FindStringSubmatch(expr)
	if m == nil {
		t.Fatalf("%s: matrix %q", name, expr)
	}
	var shards []int
	if err := json.Unmarshal([]byte(g.output(t, m[1], m[2])), &shards); err != nil || len(shards) == 0 {
		t.Fatalf("%s: the matrix %s is %q: %v", name, expr, g.output(t, m[1], m[2]), err)
	}
	return shards
}

// eval replaces each expression of a value: inputs (the caller's, else
// the workflow's defaults), start's outputs and matrix.shard; github.*
// and secrets.* are empty, as no secret is set; a || takes the first
// alternative that is not.
func (g *githubRun) eval(t *testing.T, s string, shard int) string {
	t.Helper()
	return anyExpr.ReplaceAllStringFunc(s, func(e string) string {
		for _, term := range strings.Split(anyExpr.FindStringSubmatch(e)[1], " || ") {
			var v string
			switch name, input := strings.CutPrefix(term, "inputs."); {
			case input:
				var ok bool
				if v, ok = g.inputs[name]; !ok {
					def, declared := g.wf.On.WorkflowCall.Inputs[name]
					if !declared {
						t.Fatalf("%s: no such input", term)
					}
					v = fmt.Sprint(def.Default)
				}
			case strings.HasPrefix(term, "needs.start.outputs."):
				v = g.output(t, "start", strings.TrimPrefix(term, "needs.start.outputs."))
			case term == "matrix.shard":
				v = fmt.Sprint(shard)
			case strings.HasPrefix(term, "github.") || strings.HasPrefix(term, "secrets."):
			default:
				t.Fatalf("the test does not evaluate %s", e)
			}
			if v != "" {
				return v
			}
		}
		return ""
	})
}

// step is the step of a job with that id, or with id "" its last.
func (g *githubRun) step(t *testing.T, job, id string) workflowStep {
	t.Helper()
	steps := g.wf.Jobs[job].Steps
	if id == "" && len(steps) > 0 {
		return steps[len(steps)-1]
	}
	for _, st := range steps {
		if st.ID == id {
			return st
		}
	}
	t.Fatalf("job %s has no step %q", job, id)
	return workflowStep{}
}

// runStep runs a step's script as GitHub Actions does (bash -eo
// pipefail), in its working directory, with the workflow's and the step's
// environment; it returns what the script did and the outputs it set.
func (g *githubRun) runStep(t *testing.T, st workflowStep, shard int) (binRun, map[string]string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "github_output")
	env := append(slices.Clone(g.env), "GITHUB_OUTPUT="+out)
	for _, vars := range []map[string]string{g.wf.Env, st.Env} {
		for k, v := range vars {
			if v = g.eval(t, v, shard); v != "" {
				env = append(env, k+"="+v)
			}
		}
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", st.Run)
	cmd.Dir, cmd.Env = filepath.Join(g.root, g.eval(t, st.WorkingDirectory, shard)), env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := binRun{}
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		r.code = ee.ExitCode()
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r, readGitHubOutput(t, out)
}

// start runs the start job's strata step and keeps its outputs.
func (g *githubRun) start(t *testing.T) binRun {
	t.Helper()
	r, outputs := g.runStep(t, g.step(t, "start", "start"), 0)
	g.outputs = outputs
	return r
}

// readGitHubOutput reads the outputs a step wrote to GITHUB_OUTPUT:
// NAME=VALUE lines, and NAME<<DELIMITER, the value's lines, DELIMITER.
func readGitHubOutput(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]string{}
	} else if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var value []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				value = append(value, lines[i])
			}
			outputs[name] = strings.Join(value, "\n")
		} else if name, value, ok := strings.Cut(lines[i], "="); ok {
			outputs[name] = value
		}
	}
	return outputs
}
