package job

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// envStep is an `env` step: it sets variables for the later steps
// (docs/behaviour.md#workflows-and-steps). Method exec sets name to
// cmd's output, method source reads KEY=VALUE lines from it; a sensitive
// step's values are masked from then on.
type envStep struct{}

// build is the process the step runs, its stdout kept for the values.
func (*envStep) build(in *stepInput) (process, error) {
	argv, env, err := in.command()
	if err != nil {
		return process{}, err
	}
	p := in.process(argv, env)
	p.stdout = &bytes.Buffer{}
	// A hook keeps what the step writes to stderr when asked to.
	p.capture = in.Hook && in.Step.CaptureOutput
	return p, nil
}

func (k *envStep) run(ctx context.Context, in *stepInput) stepOutput {
	p, err := k.build(in)
	if err != nil {
		return failed(err)
	}
	rep, err := in.exec.process(ctx, p)
	out := stepOutput{Reports: []report.StepReport{rep}, Err: err}
	if err != nil {
		return out
	}
	return k.values(in, p.stdout.String(), out)
}

// values adds what the step's cmd printed to its output: the variables
// it sets, the secrets among them, and the note that names them.
func (*envStep) values(in *stepInput, printed string, out stepOutput) stepOutput {
	out.Set = envValues(in.Step, printed)
	names := make([]string, 0, len(out.Set))
	for k := range out.Set {
		names = append(names, k)
	}
	sort.Strings(names)
	if in.Step.Sensitive {
		for _, k := range names {
			out.Secrets = append(out.Secrets, out.Set[k])
		}
	}
	label := "env"
	if in.Hook {
		label = in.Where
	}
	out.Note = fmt.Sprintf("%s: set %s", label, strings.Join(names, ", "))
	return out
}

// envValues are the variables an env step sets from its cmd's output:
// method exec sets name to it, method source reads its KEY=VALUE lines.
func envValues(st stacks.RunStep, out string) map[string]string {
	set := map[string]string{}
	if st.Method == "source" {
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			line := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export "))
			if k, v, ok := strings.Cut(line, "="); ok && k != "" && !strings.HasPrefix(k, "#") {
				set[k] = strings.Trim(v, `"'`)
			}
		}
		return set
	}
	if st.TrimTrailingNewlines {
		out = strings.TrimRight(out, "\r\n")
	}
	set[st.Name] = out
	return set
}
