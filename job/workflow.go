package job

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/subst"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// A unit's steps come from the first workflow whose tag query matches it
// (docs/behaviour.md#workflows-and-steps): its plan: list in a plan job, its apply: list in an apply job,
// [init, plan] and [init, apply] when there is none.

// workflowSteps returns the unit's steps for one phase (plan or apply).
func (r *Run) workflowSteps(ur *Unit, phase string) []stacks.RunStep {
	return r.Project.StepsFor(ur.Spec, phase)
}

// SubstitutionError names a variable no source defines.
type SubstitutionError struct {
	Name, Stack, Where string
	// InCmd: the name was in a run or env step's cmd, where only stack
	// variables and strata's own values are substituted.
	InCmd bool
}

func (e *SubstitutionError) Error() string {
	if e.InCmd {
		return fmt.Sprintf("unknown variable %q in %s (stack %s): a step's cmd takes only stack variables and strata's own values (STRATA_*, TERRATEAM_*); "+
			"read any other variable in a shell, where it is data: ['sh', '-c', 'echo \"$%s\"']; write $$ for a literal $", e.Name, e.Where, e.Stack, e.Name)
	}
	return fmt.Sprintf("unknown variable %q in %s (stack %s): not a stack variable nor in the environment; write $$ for a literal $", e.Name, e.Where, e.Stack)
}

// substitute replaces ${name} and $name in one pass (subst.Expand).
func substitute(s string, lookup func(string) (string, bool)) (string, string, bool) {
	return subst.Expand(s, lookup)
}

// VariableLookup finds a name for substitution as a unit's step does
// (stepInput.lookup): the unit's stack variables, then what earlier env
// steps set, then strata's environment, then the unit's own environment
// (STRATA_DIR, …).
func VariableLookup(vars *Vars, set map[string]string, env []string, unitEnv map[string]string) func(string) (string, bool) {
	return (&stepInput{Vars: vars, Set: set, Environ: env, Env: unitEnv}).lookup
}

// SubstituteFor substitutes s for one unit, or names the unknown variable.
func SubstituteFor(s, where string, u *stacks.Unit, lookup func(string) (string, bool)) (string, error) {
	out, name, ok := substitute(s, lookup)
	if !ok {
		return "", &SubstitutionError{Name: name, Stack: u.Stack.Name, Where: where}
	}
	return out, nil
}

// substituteCmd substitutes a run or env step's argv. Values from the
// process environment or from env steps may be chosen by whoever names a
// branch or opens a pull request, so they are never spliced into a
// command: lookup gives only stack variables and strata's own values, and
// a shell's script (sh -c SCRIPT) is passed as written, its names read by
// the shell from the step's environment, as data.
func substituteCmd(argv []string, lookup func(string) (string, bool)) ([]string, string, bool) {
	script := shellScriptIndex(argv)
	out := make([]string, len(argv))
	for i, a := range argv {
		if i == script {
			out[i] = a
			continue
		}
		v, name, ok := substitute(a, lookup)
		if !ok {
			return nil, name, false
		}
		out[i] = v
	}
	return out, "", true
}

// shells are the programs whose -c argument is a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// shellScriptIndex is the index of the script in `sh [options] -c
// [options] SCRIPT [name [args…]]`, or -1 when argv is not a shell
// running one.
func shellScriptIndex(argv []string) int {
	if len(argv) == 0 || !shells[path.Base(argv[0])] {
		return -1
	}
	sawC := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			if sawC && i+1 < len(argv) {
				return i + 1
			}
			return -1
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++ // the option's name
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if a[0] == '-' && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'c') {
				sawC = true
			}
		default:
			if sawC {
				return i
			}
			return -1
		}
	}
	return -1
}

// process is one process a step runs.
type process struct {
	display      *console.Unit
	masker       *console.Masker
	name, where  string
	dir          string
	argv, env    []string
	capture      bool
	ignoreErrors bool
	stdout       *bytes.Buffer
	who          string // the unit, or the hook, a note names
	unitID       string // the unit's ID, "" for a hook
	// errSide: its stdout goes where the engine's stderr goes (hooks:
	// in drop-in, stdout is the engine's alone).
	errSide bool
}

// process runs p in its own process group, its output in the console
// block of p.display (an interrupt reaches it as SIGINT), and reports it
// as a step.
func (r *Run) process(ctx context.Context, p process) (rep report.StepReport, err error) {
	started := r.Now()
	attrs := []attribute.KeyValue{attribute.String("strata.step", p.name)}
	if p.unitID != "" {
		attrs = append(attrs, attribute.String("strata.unit.id", p.unitID))
	}
	ctx, span := tracing.Span(ctx, p.name, attrs...)
	defer func() { tracing.End(span, spanFailure(p.masker, err)) }()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	// Its span is the process's parent (docs/behaviour.md#traces).
	cmd.Dir, cmd.Env = p.dir, tracing.Environ(ctx, p.env)
	ownProcessGroup(cmd)
	out := r.Console.Step(p.display, p.name)
	var kept bytes.Buffer
	var stdout io.Writer = out
	if p.errSide {
		stdout = out.Stderr()
	}
	cmd.Stdout, cmd.Stderr = stdout, out.Stderr()
	if p.capture {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, &kept), io.MultiWriter(out.Stderr(), &kept)
	}
	if p.stdout != nil {
		cmd.Stdout = p.stdout
	}
	err = cmd.Start()
	if err == nil {
		r.Procs.add(cmd)
		defer r.Procs.remove(cmd)
		// The step's process group gets one SIGINT, as engines do.
		err = waitInterruptible(ctx, cmd, interruptGroup, r.KillAfter)
	}
	out.Close()
	if err != nil {
		err = fmt.Errorf("%s: %w", strings.Join(p.argv, " "), err)
		if p.ignoreErrors && ctx.Err() == nil {
			r.Console.UnitNote(p.who, fmt.Sprintf("%s failed, ignored (ignore_errors): %v", p.where, err))
			err = nil
		}
	}
	rep = report.StepReport{Name: p.name, StartedAt: started, FinishedAt: r.Now(), OK: err == nil}
	if p.capture {
		rep.Output = p.masker.Mask(kept.String())
	}
	return rep, err
}

// initSteps are the steps of the init command: the workflow's init steps
// (their extra_args and env), else a plain init.
func (r *Run) initSteps(ur *Unit) []stacks.RunStep {
	for _, st := range r.workflowSteps(ur, report.StepPlan) {
		if st.Type == report.StepInit {
			return []stacks.RunStep{st}
		}
	}
	return []stacks.RunStep{stacks.DefaultStep(report.StepInit)}
}
