package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/strata-iac/strata/engines"
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
	opt := Options{Command: command, Environ: po.Environ, Installer: po.Installer, StateDir: po.StateDir, Console: po.Stderr, DropIn: true}
	var (
		enginePath string
		env        []string
		workDir    = dir
	)
	if u != nil {
		run := &stacks.Run{Units: []stacks.RunUnit{{Unit: u, Why: WhySelectedUnit}}, DropIn: true}
		r, err := newRunState(ctx, p, run, opt)
		if err != nil {
			return 1, err
		}
		ur := r.units[0]
		if ur.unsupported {
			return 1, fmt.Errorf("%s: engine %s is not supported", u.Name(), ur.choice.Name)
		}
		j := &job{r: r, ur: ur.unit}
		if command == CmdOutput && !j.init(ctx, false, false, InitArgs{}, nil) {
			// strata's output inits a unit that needs it, as its other
			// commands do; terraform's output then prints as it would.
			return 1, fmt.Errorf("%s: init: %v", u.Name(), firstLine(errorText(j.res.err)))
		}
		if !j.workspace(ctx, false) {
			return 1, fmt.Errorf("%s: selecting workspace %s: %v", u.Name(), u.Workspace, firstLine(errorText(j.res.err)))
		}
		enginePath, workDir = ur.engine.Path, ur.dir
		for k, v := range tfVarsFromEnv(po.Environ) {
			ur.env["TF_VAR_"+k] = v
		}
		for k, v := range stackTFVars(u) {
			ur.env["TF_VAR_"+k] = v
		}
		env = envList(ur.env)
		if takesVarFile[command] {
			varFile, remove, err := r.passthroughVarFile(ctx, j)
			if err != nil {
				return 1, err
			}
			defer remove()
			if varFile != "" {
				// Right after the command, so the user's own -var and
				// -var-file, later on the line, win as they do in plan.
				args = append([]string{"-var-file=" + varFile}, args...)
			}
		}
	} else {
		e, err := topLevelEngine(ctx, p, opt)
		if err != nil {
			return 1, err
		}
		enginePath, env = e.Path, po.Environ
	}
	cmd := exec.CommandContext(ctx, enginePath, append([]string{command}, args...)...)
	cmd.Dir = workDir
	cmd.Env = env
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
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
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
func (r *runState) passthroughVarFile(ctx context.Context, j *job) (string, func(), error) {
	for _, ur := range r.units {
		if ur.role == RoleProducer {
			r.readExternalProducer(ctx, ur)
		}
	}
	vals, missing := r.someInputValues(r.byUnit[j.ur.u])
	for _, m := range missing {
		r.con.note(fmt.Sprintf("warning: input %s of %s is unset: %s", m.input.Var, j.ur.u.Name(), m.why))
	}
	j.ur.inputVals = vals
	content, err := j.prepareInputs()
	if err != nil {
		return "", func() {}, err
	}
	return j.writeVarFile(content)
}

// WhySelectedUnit is the why of a unit a command names directly.
const WhySelectedUnit = "selected"

// topLevelEngine resolves the engine of commands run outside any unit.
func topLevelEngine(ctx context.Context, p *stacks.Project, opt Options) (*engines.Engine, error) {
	in := opt.Installer
	if in == nil {
		var err error
		if in, err = engines.NewInstallerFromLookup(getenvIn(opt.Environ)); err != nil {
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
