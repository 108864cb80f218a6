package job

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/strata-iac/strata/report"
)

// toolStep runs checkov, conftest or opa from PATH in the unit's dir with
// the step's extra_args; a missing tool fails the unit.
type toolStep struct{}

// build is the process of the tool at path: its extra_args substituted
// (checkov's default `-d .` when there are none), its output kept.
func (*toolStep) build(in *stepInput, path string) (process, error) {
	own, err := in.ownEnv()
	if err != nil {
		return process{}, err
	}
	args, err := in.substAll(in.Step.ExtraArgs, in.Where+".extra_args")
	if err != nil {
		return process{}, err
	}
	if len(args) == 0 && in.Step.Type == report.StepCheckov {
		args = []string{"-d", "."}
	}
	p := in.process(append([]string{path}, args...), in.processEnv(own))
	p.capture = true
	p.ignoreErrors = in.Step.IgnoreErrors && in.Step.Gate == nil
	return p, nil
}

func (k *toolStep) run(ctx context.Context, in *stepInput) stepOutput {
	tool := in.Step.Type
	path, err := exec.LookPath(tool)
	if err != nil {
		return stepOutput{Err: fmt.Errorf("%s is not on PATH: install it or remove the %s step", tool, in.Where),
			Reports: []report.StepReport{{Name: tool, StartedAt: in.Now(), FinishedAt: in.Now()}}}
	}
	p, err := k.build(in, path)
	if err != nil {
		return failed(err)
	}
	return runGated(ctx, in, p)
}
