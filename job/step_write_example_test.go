package job

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// The worked example of docs/architecture.md#adding-a-step-kind: a kind
// that is one file and one row of stepKinds, its row added by the test
// that runs it (TestAddingAStepKind). Between the two marks below, the
// code is the document's word for word (TestAddingAStepKindDoc).

// --- docs/architecture.md#adding-a-step-kind ---
// writeStep writes a file in the unit's dir for the later steps.
type writeStep struct{}

// build is the file's path and content.
func (*writeStep) build(in *stepInput) (path string, content []byte, err error) {
	text, err := in.subst(strings.Join(in.Step.Cmd, " "), in.Where+".cmd")
	if err != nil {
		return "", nil, err
	}
	path, err = safepath.Join(in.Dir, in.Step.Name)
	return path, []byte(text), err
}

func (k *writeStep) run(ctx context.Context, in *stepInput) stepOutput {
	started := in.Now()
	path, content, err := k.build(in)
	if err == nil {
		err = atomicfile.Write(path, content, 0o600)
	}
	out := stepOutput{Err: err, Reports: []report.StepReport{
		{Name: in.Name, StartedAt: started, FinishedAt: in.Now(), OK: err == nil}}}
	if err == nil {
		out.Set = map[string]string{"STRATA_WRITTEN": path}
		out.Note = in.Where + ": wrote " + in.Step.Name
	}
	return out
}

// --- end ---

// TestAddingAStepKindDoc: the document's example is the code above.
func TestAddingAStepKindDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("step_write_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### Adding a step kind")
	_, block, ok2 := strings.Cut(section, "```go\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	_, mine, ok4 := strings.Cut(string(src), "// --- docs/architecture.md#adding-a-step-kind ---\n")
	mine, _, ok5 := strings.Cut(mine, "\n// --- end ---")
	if !ok || !ok2 || !ok3 || !ok4 || !ok5 {
		t.Fatal("the example's code block or its marks are gone")
	}
	if block != mine {
		t.Errorf("docs/architecture.md's example and step_write_example_test.go differ:\n%s\n---\n%s", block, mine)
	}
}

// TestAddingAStepKind: the example's kind, one file and one row, runs in
// a workflow as any kind does: built from its input alone (the path under
// the unit's dir, the content substituted; an unknown name is the step's
// failure), and what it sets reaches the next step's environment, its
// note and report the job's.
//
// Not parallel: it adds the kind's row to the package's table while no
// other test runs (the parallel ones wait for it), and takes it out.
func TestAddingAStepKind(t *testing.T) {
	stepKinds["write"] = &writeStep{}
	defer delete(stepKinds, "write")
	in := testInput(stacks.RunStep{Type: "write", Name: "out.txt", Cmd: []string{"region", "${region}"}}, "plan step 1 (write)", nil)
	path, content, err := (&writeStep{}).build(in)
	if err != nil || path != filepath.Join(in.Dir, "out.txt") || string(content) != "region eu-west-1" {
		t.Errorf("build: %q %q %v", path, content, err)
	}
	if _, _, err := (&writeStep{}).build(testInput(stacks.RunStep{Type: "write", Name: "x", Cmd: []string{"$NOPE"}}, "plan step 1 (write)", nil)); err == nil ||
		!strings.Contains(err.Error(), `unknown variable "NOPE" in plan step 1 (write).cmd`) {
		t.Errorf("an unknown name: %v", err)
	}
	if _, _, err := (&writeStep{}).build(testInput(stacks.RunStep{Type: "write", Name: "../x", Cmd: []string{"a"}}, "plan step 1 (write)", nil)); err == nil {
		t.Error("a name outside the unit's dir was taken")
	}

	var out bytes.Buffer
	x := &fakeExec{}
	j := testJob(t, workflowYML, x, &out)
	j.runWorkflow(context.Background(), report.StepPlan, []stacks.RunStep{
		{Type: "write", Name: "out.txt", Cmd: []string{"in", "${region}"}, RunOn: "success"},
		{Type: "run", Cmd: []string{"sh", "-c", "cat \"$STRATA_WRITTEN\""}, RunOn: "success"},
	})
	if j.res.Err != nil {
		t.Fatalf("failed: %v", j.res.Err)
	}
	written := filepath.Join(j.ur.Dir, "out.txt")
	if b, err := os.ReadFile(written); err != nil || string(b) != "in eu-west-1" {
		t.Errorf("written: %q %v", b, err)
	}
	if len(x.procs) != 1 || envOf(x.procs[0].env)["STRATA_WRITTEN"] != written {
		t.Errorf("the next step's environment: %+v", x.procs)
	}
	if len(j.res.Steps) != 2 || j.res.Steps[0].Name != "write" || !j.res.Steps[0].OK {
		t.Errorf("reports: %+v", j.res.Steps)
	}
	if !strings.Contains(out.String(), "plan step 1 (write): wrote out.txt") {
		t.Errorf("notes: %q", out.String())
	}
}
