package job

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-iac/strata/report"
)

// runStep is a `run` step: cmd is argv (never a shell string), in the
// step's dir, in its own process group; an interrupt reaches it as
// SIGINT (docs/behaviour.md#workflows-and-steps).
type runStep struct{}

// build is the process the step runs: its argv, substituted, and its
// environment.
func (*runStep) build(in *stepInput) (process, error) {
	argv, env, err := in.command()
	if err != nil {
		return process{}, err
	}
	p := in.process(argv, env)
	p.capture = in.Step.CaptureOutput
	// A gate, not ignore_errors, decides what a gated step's failure does.
	p.ignoreErrors = in.Step.IgnoreErrors && (in.Hook || in.Step.Gate == nil)
	return p, nil
}

func (k *runStep) run(ctx context.Context, in *stepInput) stepOutput {
	p, err := k.build(in)
	if err != nil {
		return failed(err)
	}
	return runGated(ctx, in, p)
}

// runGated runs a run or tool step's process: its report, and its
// failure or the gate its exit code raised (gated).
func runGated(ctx context.Context, in *stepInput, p process) stepOutput {
	rep, err := in.exec.process(ctx, p)
	out := stepOutput{Reports: []report.StepReport{rep}}
	out.Err, out.Gate = gated(ctx, in, err)
	return out
}

// command is a run or env step's argv and environment: its cmd with
// only stack variables and strata's own values substituted
// (substituteCmd), and its env over the process environment.
func (in *stepInput) command() (argv, env []string, err error) {
	var own map[string]string
	if !in.Hook {
		// A unit's step reads its env first, a hook its cmd: which
		// unknown name is reported first.
		if own, err = in.ownEnv(); err != nil {
			return nil, nil, err
		}
	}
	argv, name, ok := substituteCmd(in.Step.Cmd, in.cmdLookup)
	if !ok {
		return nil, nil, in.unknown(name, in.Where+".cmd", true)
	}
	if in.Hook {
		if own, err = in.ownEnv(); err != nil {
			return nil, nil, err
		}
	}
	if len(argv) == 0 {
		return nil, nil, fmt.Errorf("%s: empty cmd", in.Where)
	}
	return argv, in.processEnv(own), nil
}

// gated passes a step's failure through its gate (docs/controls.md#gates):
// a failed step of the plan workflow with a gate raises the gate, and the
// unit goes on; the apply then waits for the gate's approval. A gated
// step of the apply workflow runs once the apply is under way: its
// failure fails the unit, as any step's does.
func gated(ctx context.Context, in *stepInput, err error) (error, *report.Gate) {
	st := in.Step
	if err == nil || st.Gate == nil || ctx.Err() != nil || !strings.HasPrefix(in.Where, report.StepPlan+" ") {
		return err, nil
	}
	g := st.Gate
	return nil, &report.Gate{Step: in.Where, Token: g.Token, Name: g.Name, AnyOf: g.AnyOf, AllOf: g.AllOf, AnyOfCount: g.AnyOfCount,
		Error: in.Masker.Mask(ErrorText(err))}
}
