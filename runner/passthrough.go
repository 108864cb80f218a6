package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/stacks"
)

// PassthroughOptions are the terminal and environment of a passthrough.
type PassthroughOptions struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Environ        []string
	Installer      *engines.Installer
	StateDir       string
	// Signals received by strata; all but interrupts are forwarded to the
	// engine (the terminal's Ctrl-C reaches it directly).
	Signals <-chan os.Signal
}

// Passthrough runs any other engine command (fmt, state, import, console,
// …) with the unit's engine binary directly: terraform-exec cannot pass
// arbitrary arguments or stdin. It runs with the terminal's stdin, stdout
// and stderr, the unit's environment and data dir, after selecting the
// unit's workspace; the engine's exit code is returned. With u nil the
// command runs in dir with the top-level engine (fmt, version, providers
// outside any unit's dir).
func Passthrough(ctx context.Context, p *stacks.Project, u *stacks.Unit, dir, command string, args []string, po PassthroughOptions) (int, error) {
	if po.Environ == nil {
		po.Environ = os.Environ()
	}
	opt := Options{Settings: Settings{Command: command, StateDir: po.StateDir}, Extra: Extra{Environ: po.Environ, Installer: po.Installer}, Output: Output{Console: po.Stderr, DropIn: true}}
	var (
		c   *passCall
		err error
	)
	if u != nil {
		c, err = passthroughInUnit(ctx, p, u, command, args, opt)
	} else {
		c, err = passthroughOutside(ctx, p, dir, args, opt)
	}
	if err != nil {
		return 1, err
	}
	defer c.done()
	cmd := exec.CommandContext(ctx, c.engine, append([]string{command}, c.args...)...)
	cmd.Dir = c.dir
	// The command's span is the engine's parent (docs/behaviour.md#traces).
	cmd.Env = tracing.Environ(ctx, c.env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = po.Stdin, po.Stdout, po.Stderr
	// The terminal's Ctrl-C reaches the engine directly (same process
	// group); strata only waits for it.
	cmd.Cancel = func() error { return nil }
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case s, ok := <-po.Signals:
				if !ok {
					return
				}
				if s != os.Interrupt {
					cmd.Process.Signal(s)
				}
			}
		}
	}()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// passCall is an engine command passed through, ready to run: the
// engine, the dir, the environment and the arguments, and what to remove
// when it ends.
type passCall struct {
	engine, dir string
	env, args   []string
	done        func()
}

// passthroughInUnit prepares a command in a unit's dir as strata's own
// commands would: init when it needs one, its workspace, its environment
// with strata's and the stack's variables, and its var file for the
// commands that read variables.
func passthroughInUnit(ctx context.Context, p *stacks.Project, u *stacks.Unit, command string, args []string, opt Options) (*passCall, error) {
	run := &stacks.Run{Units: []stacks.RunUnit{{Unit: u, Why: WhySelectedUnit}}, DropIn: true}
	r, err := newRunState(ctx, p, run, opt)
	if err != nil {
		return nil, err
	}
	ur := r.units[0]
	if ur.unsupported {
		return nil, fmt.Errorf("%s: engine %s is not supported", u.Name(), ur.Choice.Name)
	}
	// Of the commands passed through, output inits a unit that needs it
	// first, as strata's own commands do.
	if err := r.jobs.Prepare(ctx, ur.Unit, r.policy.Job == cmdpolicy.JobOutput); err != nil {
		// strata's output inits a unit that needs it, as its other
		// commands do; terraform's output then prints as it would.
		return nil, err
	}
	c := &passCall{engine: ur.Engine.Path, dir: ur.Dir, done: func() {}}
	for k, v := range job.TFVarsFromEnv(opt.Environ) {
		ur.Env["TF_VAR_"+k] = v
	}
	for k, v := range ur.Vars.TFVars() {
		ur.Env["TF_VAR_"+k] = v
	}
	asked, err := askedCredentials(p, ur.Unit, opt.Environ)
	if err != nil {
		return nil, err
	}
	for k, v := range asked {
		ur.Env[k] = v
	}
	c.env = job.EnvList(ur.Env)
	if takesVarFile[command] {
		varFile, remove, err := r.passthroughVarFile(ctx, ur)
		if err != nil {
			return nil, err
		}
		c.done = remove
		if varFile != "" {
			// Right after the command, so the user's own -var and
			// -var-file, later on the line, win as they do in plan.
			args = append([]string{"-var-file=" + varFile}, args...)
		}
	}
	c.args = args
	return c, nil
}

// askedCredentials are the credentials the env of the unit's plan step
// names: a command passed through runs the providers as plan does
// (docs/behaviour.md#credentials).
func askedCredentials(p *stacks.Project, ur *job.Unit, process []string) (map[string]string, error) {
	out := map[string]string{}
	for i, st := range p.StepsFor(ur.Spec, stacks.StepPlan) {
		if st.Type != stacks.StepPlan {
			continue
		}
		for _, e := range st.Env {
			if !environ.IsCredential(e.Key) {
				continue
			}
			where := fmt.Sprintf("plan step %d (plan).env.%s", i+1, e.Key)
			v, err := job.SubstituteFor(e.Value, where, ur.Spec, job.VariableLookup(ur.Vars, nil, process, ur.Env))
			if err != nil {
				return nil, err
			}
			out[e.Key] = v
		}
	}
	return out, nil
}

// passthroughOutside prepares a command outside any unit: the engine the
// repository's config chooses, in dir, with strata's environment.
func passthroughOutside(ctx context.Context, p *stacks.Project, dir string, args []string, opt Options) (*passCall, error) {
	e, err := topLevelEngine(ctx, p, opt)
	if err != nil {
		return nil, err
	}
	return &passCall{engine: e.Path, dir: dir, env: environ.WithoutCredentials(opt.Environ), args: args, done: func() {}}, nil
}

// takesVarFile are the engine commands strata passes through that read
// input variables: they get the unit's var file, as its plan does.
var takesVarFile = map[string]bool{"console": true, "refresh": true, "import": true}

// passthroughVarFile writes the var file a unit's plan would get: its
// inputs from other stacks, their producers read as they stand, and the
// TF_VAR_ values of strata's environment. An input whose producer has no
// value is left out with a warning naming it, and the command runs anyway:
// console and import read state, and the engine says when it needs the
// variable after all.
func (r *runState) passthroughVarFile(ctx context.Context, ur *unitRun) (string, func(), error) {
	for _, p := range r.units {
		if p.role == RoleProducer {
			r.readExternalProducer(ctx, p)
		}
	}
	vals, missing := r.someInputValues(ur)
	for _, m := range missing {
		r.con.Warn("", fmt.Sprintf("input %s of %s is unset: %s", m.input.Var, ur.Spec.Name(), m.why))
	}
	ur.InputVals = vals
	return r.jobs.WriteVarFile(ur.Unit)
}

// WhySelectedUnit is the why of a unit a command names directly.
const WhySelectedUnit = "selected"

// topLevelEngine resolves the engine of commands run outside any unit.
func topLevelEngine(ctx context.Context, p *stacks.Project, opt Options) (*engines.Engine, error) {
	in := opt.Installer
	if in == nil {
		var err error
		if in, err = engines.NewInstallerFromLookup(environ.Getenv(opt.Environ)); err != nil {
			return nil, err
		}
	}
	e, errs := ResolveEngines(ctx, in, []stacks.EngineChoice{p.TopLevelEngine()})
	return e[0], errs[0]
}

// PassthroughAllowedOutside reports whether a passthrough command may run
// outside any unit's dir.
func PassthroughAllowedOutside(command string) bool {
	switch strings.ToLower(command) {
	case "fmt", "version", "providers":
		return true
	}
	return false
}
