package job

import (
	"context"
	"fmt"
	"maps"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// Hooks runs a command's hooks (docs/behaviour.md#hooks): steps run once
// in the repository root, before the command's units and after them.
// What their env steps set reaches every unit.
type Hooks struct {
	run     *Run
	root    string
	env     map[string]string // the hooks' own environment, without what they set
	display *console.Unit
	exec    stepExec // runs what the steps build: the run itself
	// Masker masks the sensitive values the hooks set; the runner adds
	// them to every unit's.
	Masker *console.Masker
	// Set is what the env steps set, by name (TF_VAR_ names included).
	Set map[string]string
	// Sensitive are the values of Set marked sensitive.
	Sensitive []string
	// Steps are the hook steps that ran, in order, for the report.
	Steps []report.StepReport
}

// NewHooks prepares a command's hooks: base is strata's environment
// (ProcessEnvOf), tmpDir a dir they may write to.
func (r *Run) NewHooks(root, tmpDir string, base map[string]string) *Hooks {
	env := maps.Clone(base)
	for k, v := range r.TFVars {
		env["TF_VAR_"+k] = v
	}
	for _, prefix := range []string{"STRATA_", "TERRATEAM_"} {
		env[prefix+"ROOT"], env[prefix+"TMPDIR"] = root, tmpDir
	}
	m := console.NewMasker(environ.CredentialValues(r.Environ)...)
	return &Hooks{run: r, exec: r, root: root, env: env, Masker: m, display: &console.Unit{Name: "hooks", Masker: m}, Set: map[string]string{}}
}

// Run runs steps in order, each by its kind (stepKinds: run, env and
// oidc), and folds what each returns into the hooks' Set, Sensitive and
// Steps. failed says the command's units failed (post hooks) or an
// earlier hook did: then only steps with run_on failure or always run,
// else those with success or always. It returns the first failure, which
// stops the steps that need success.
func (h *Hooks) Run(ctx context.Context, steps []stacks.HookStep, failed bool) error {
	var first error
	for _, st := range steps {
		if !runsOn(st.RunOn, failed || first != nil) {
			continue
		}
		if err := ctx.Err(); err != nil && first == nil {
			return fmt.Errorf("%s: %w", st.Where, err)
		}
		switch st.Type {
		case report.StepRun, report.StepEnv, report.StepOIDC:
		default:
			// slack and drift_create_issue: Terrateam's own, which check
			// says strata does not act on.
			continue
		}
		if err := h.fold(stepKinds[st.Type].run(ctx, h.input(st))); err != nil && first == nil {
			first = fmt.Errorf("%s (%s): %w", st.Where, st.Type, err)
		}
	}
	return first
}

// input is a hook step's input: in the repository root, from the hooks'
// own environment and what earlier hooks set.
func (h *Hooks) input(st stacks.HookStep) *stepInput {
	return &stepInput{Step: st.RunStep, Where: st.Where, Name: st.Where, Hook: true, Who: "hooks", Dir: h.root,
		Env: h.env, Set: h.Set, Environ: h.run.Environ, Masker: h.Masker, Display: h.display, Now: h.run.Now, exec: h.exec}
}

// fold takes what a hook step returned: its report, the values it sets
// for every unit, the secrets among them; it returns its failure.
func (h *Hooks) fold(out stepOutput) error {
	h.Steps = append(h.Steps, out.Reports...)
	if out.NoToken {
		h.run.noteNoToken()
	}
	if len(out.Secrets) > 0 {
		h.Masker.Add(out.Secrets...)
		h.Sensitive = append(h.Sensitive, out.Secrets...)
	}
	maps.Copy(h.Set, out.Set)
	if out.Note != "" && out.Err == nil {
		h.run.Console.Note("[hooks] " + out.Note)
	}
	return out.Err
}
