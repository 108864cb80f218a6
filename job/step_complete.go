package job

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/strata-iac/strata/report"
)

// An apply or destroy in one unit's dir whose plan changes nothing ends
// as terraform's does: "Apply complete!" with nothing counted, then the
// outputs (docs/behaviour.md#scope). The words are terraform's; the
// outputs are the engine's own `output`, which renders values as an
// apply does.

// completeNoChanges prints the end of a drop-in apply or destroy with no
// changes: for an apply, as a step reading the outputs; a destroy prints
// no outputs, and its words need no engine.
func (j *job) completeNoChanges(ctx context.Context) {
	if j.run.Policy.Destroys {
		var b bytes.Buffer
		heading(&b, "Destroy complete! Resources: 0 destroyed.", j.run.Exec.colour)
		out := j.run.Console.Step(j.ur.Display, report.StepApply)
		out.Write(b.Bytes())
		out.Close()
		return
	}
	_, err := j.in.step(ctx, report.StepOutput, j.in.invocation(report.StepOutput, nil, &completeCall{}), false)
	j.failed(ctx, report.StepOutput, err)
}

// completeCall is `output` as people read it, after the words an apply
// with nothing to do ends with.
type completeCall struct{}

func (*completeCall) Argv() []string      { return []string{"output"} }
func (*completeCall) checksVersion() bool { return false }

func (*completeCall) run(ctx context.Context, x *Executor, _ *tfexec.Terraform, inv invocation, out, _ io.Writer) (outcome, error) {
	argv := []string{"output"}
	if !x.colour {
		argv = append(argv, "-no-color")
	}
	// With no outputs the engine warns on stderr and prints nothing; an
	// apply then prints no "Outputs:" either.
	var outputs bytes.Buffer
	if _, err := x.runRaw(ctx, inv, argv, &outputs, io.Discard); err != nil {
		return outcome{}, err
	}
	var b bytes.Buffer
	heading(&b, "Apply complete! Resources: 0 added, 0 changed, 0 destroyed.", x.colour)
	if outputs.Len() > 0 {
		heading(&b, "Outputs:\n", x.colour)
		b.Write(outputs.Bytes())
	}
	_, err := out.Write(b.Bytes())
	return outcome{}, err
}

// heading writes a line as terraform writes its closing words: after a
// blank line, in bold green when in colour.
func heading(b *bytes.Buffer, line string, colour bool) {
	if colour {
		b.WriteString("\x1b[0m\x1b[1m\x1b[32m\n" + line + "\n\x1b[0m")
		return
	}
	b.WriteString("\n" + line + "\n")
}

// savedPlanWords ends a drop-in plan -out=FILE as terraform's does: where
// the plan was saved, and how to apply exactly it (docs/behaviour.md#scope).
// strata plans into its own state dir, and the engine, told it runs in
// automation, names that file, not the user's.
func (j *job) savedPlanWords(file string) {
	if rel, err := filepath.Rel(j.ur.Dir, file); err == nil && filepath.IsLocal(rel) {
		file = rel
	}
	var b bytes.Buffer
	b.WriteString("\n" + strings.Repeat("─", 77) + "\n\nSaved the plan to: " + file + "\n\n" +
		"To perform exactly these actions, run the following command to apply:\n    strata apply " + strconv.Quote(file) + "\n")
	out := j.run.Console.Step(j.ur.Display, report.StepPlan)
	out.Write(b.Bytes())
	out.Close()
}
