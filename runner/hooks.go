package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// runHooks are a command's hooks once the pre hooks ran.
type runHooks struct {
	h      *job.Hooks
	post   []stacks.HookStep
	preErr error
	tmpDir string
}

// hookOp is the hooks' operation of a command: apply for one that
// applies, plan for one that only plans, "" for the others, which run
// no hooks.
func hookOp(p *command.Policy) string {
	switch {
	case p.Applies:
		return stacks.StepApply
	case p.Plans:
		return stacks.StepPlan
	}
	return ""
}

// preHooks runs the config's pre hooks before any unit
// (docs/behaviour.md#hooks). What their env steps set reaches every
// unit; when one fails, no unit runs, each failing with the hook's
// error. It returns nil when the command has no hooks.
func (r *runState) preHooks(ctx context.Context) (*runHooks, error) {
	op := hookOp(r.policy)
	if op == "" || len(r.units) == 0 {
		return nil, nil
	}
	pre, post := r.p.HooksFor(op)
	if len(pre)+len(post) == 0 {
		return nil, nil
	}
	if r.opt.NoHooks {
		// A hook that needs what only CI has (docs/behaviour.md#hooks).
		r.con.Note(fmt.Sprintf("strata: --no-hooks: the config's %d pre and %d post hook steps of %s are not run", len(pre), len(post), op))
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "strata-hooks-")
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	rh := &runHooks{h: r.jobs.NewHooks(r.p.Root, tmp, r.base), post: post, tmpDir: tmp}
	if rh.preErr = rh.h.Run(ctx, pre, false); rh.preErr != nil {
		if ctx.Err() != nil {
			// Interrupted: the units are cancelled, as any not started.
			return rh, nil
		}
		r.hookFailure = "not run: " + rh.h.Masker.Mask(rh.preErr.Error())
		return rh, nil
	}
	r.useHookValues(rh.h)
	return rh, nil
}

// useHookValues gives every unit what the pre hooks' env steps set: over
// strata's own environment, under the stack variables, as the process
// environment is; TF_VAR_ names reach the engine as variables. Their
// sensitive values are masked in every unit's output.
func (r *runState) useHookValues(h *job.Hooks) {
	if len(h.Set) == 0 {
		return
	}
	base := maps.Clone(r.base)
	for k, v := range h.Set {
		if name, ok := strings.CutPrefix(k, "TF_VAR_"); ok {
			r.jobs.TFVars[name] = v
			continue
		}
		base[k] = v
	}
	r.base = base
	for _, ur := range r.units {
		r.setEnv(ur, r.pluginDir)
		ur.Masker.Add(h.Sensitive...)
	}
}

// postHooks runs the post hooks once the units ended, run_on picking by
// the command's outcome, and records the hooks in the report: a failed
// hook fails the command.
func (r *runState) postHooks(ctx context.Context, rh *runHooks, rep *report.Report) {
	if rh == nil {
		return
	}
	defer os.RemoveAll(rh.tmpDir)
	if ctx.Err() != nil {
		// Interrupted: the post hooks for failure still run, as cleanup,
		// for as long as an interrupted engine gets (KillAfter; zero:
		// no bound).
		ctx = context.WithoutCancel(ctx)
		if r.opt.KillAfter > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, r.opt.KillAfter)
			defer cancel()
		}
	}
	err := rh.preErr
	if postErr := rh.h.Run(ctx, rh.post, err != nil || !rep.OK); err == nil {
		err = postErr
	}
	if err != nil {
		err = errors.New(rh.h.Masker.Mask(err.Error()))
	}
	rep.SetHooks(rh.h.Steps, err)
}
