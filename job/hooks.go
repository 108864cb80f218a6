package job

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/oidc"
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
	return &Hooks{run: r, root: root, env: env, Masker: m, display: &console.Unit{Name: "hooks", Masker: m}, Set: map[string]string{}}
}

// Run runs steps in order. failed says the command's units failed (post
// hooks) or an earlier hook did: then only steps with run_on failure or
// always run, else those with success or always. It returns the first
// failure, which stops the steps that need success.
func (h *Hooks) Run(ctx context.Context, steps []stacks.HookStep, failed bool) error {
	var first error
	for _, st := range steps {
		bad := failed || first != nil
		switch {
		case st.RunOn == "always":
		case st.RunOn == "failure" && bad:
		case st.RunOn == "success" && !bad:
		default:
			continue
		}
		if err := ctx.Err(); err != nil && first == nil {
			return fmt.Errorf("%s: %w", st.Where, err)
		}
		var err error
		switch st.Type {
		case report.StepRun, report.StepEnv:
			err = h.process(ctx, st)
		case report.StepOIDC:
			err = h.oidc(ctx, st)
		default:
			// slack and drift_create_issue: Terrateam's own, which check
			// says strata does not act on.
			continue
		}
		if err != nil && first == nil {
			first = fmt.Errorf("%s (%s): %w", st.Where, st.Type, err)
		}
	}
	return first
}

// oidc makes the step's cloud credentials for every unit: secrets all.
func (h *Hooks) oidc(ctx context.Context, st stacks.HookStep) error {
	started := h.run.Now()
	env := withCredentials(maps.Clone(h.env), h.run.Environ)
	maps.Copy(env, h.Set)
	sctx, span := tracing.Span(ctx, st.Where, attribute.String("strata.step", st.Where))
	creds, err := oidc.Make(sctx, st.OIDC, env)
	skipped := h.run.skipsOIDC(err)
	if skipped {
		err = nil
	}
	tracing.End(span, spanFailure(h.Masker, err))
	h.Steps = append(h.Steps, report.StepReport{Name: st.Where, StartedAt: started, FinishedAt: h.run.Now(), OK: err == nil})
	if skipped || err != nil {
		return err
	}
	h.Masker.Add(creds.Secrets...)
	h.Sensitive = append(h.Sensitive, creds.Secrets...)
	maps.Copy(h.Set, creds.Env)
	h.run.Console.Note(fmt.Sprintf("[hooks] %s: %s credentials set", st.Where, st.OIDC.Provider))
	return nil
}

// process runs a run or env step: argv as written, with only strata's
// own values substituted (what env steps set is data, read by a shell
// from the environment).
func (h *Hooks) process(ctx context.Context, st stacks.HookStep) error {
	argv, name, ok := substituteCmd(st.Cmd, func(name string) (string, bool) {
		if !strataValue(name) {
			return "", false
		}
		v, ok := h.env[name]
		return v, ok
	})
	if !ok {
		return fmt.Errorf("unknown variable %q in %s.cmd: a hook's cmd takes only strata's own values (STRATA_ROOT, STRATA_TMPDIR and their TERRATEAM_ names); "+
			"read any other variable in a shell, where it is data: ['sh', '-c', 'echo \"$%s\"']", name, st.Where, name)
	}
	env := maps.Clone(h.env)
	maps.Copy(env, h.Set)
	for _, e := range st.Env {
		v, name, ok := substitute(e.Value, h.envLookup)
		if !ok {
			return fmt.Errorf("unknown variable %q in %s.env.%s: not set by a hook nor in the environment; write $$ for a literal $", name, st.Where, e.Key)
		}
		env[e.Key] = v
	}
	var stdout *bytes.Buffer
	if st.Type == report.StepEnv {
		stdout = &bytes.Buffer{}
	}
	rep, err := h.run.process(ctx, process{
		display: h.display, masker: h.Masker, name: st.Where, where: st.Where, dir: h.root, argv: argv, env: EnvList(env),
		capture: st.CaptureOutput, ignoreErrors: st.IgnoreErrors && st.Type == report.StepRun, stdout: stdout, who: "hooks", errSide: true,
	})
	h.Steps = append(h.Steps, rep)
	if err != nil || stdout == nil {
		return err
	}
	set := envValues(st.RunStep, stdout.String())
	names := make([]string, 0, len(set))
	for k, v := range set {
		h.Set[k] = v
		names = append(names, k)
		if st.Sensitive {
			h.Masker.Add(v)
			h.Sensitive = append(h.Sensitive, v)
		}
	}
	sort.Strings(names)
	h.run.Console.Note(fmt.Sprintf("[hooks] %s: set %s", st.Where, strings.Join(names, ", ")))
	return nil
}

// envLookup finds a name in a hook step's env, as a workflow step's env
// does (docs/behaviour.md#substitution): what earlier env hooks set, then
// strata's environment, credentials included, as the way to ask for one
// (docs/behaviour.md#credentials), then strata's own values.
func (h *Hooks) envLookup(name string) (string, bool) {
	if v, ok := h.Set[name]; ok {
		return v, true
	}
	if v, ok := environ.Lookup(h.run.Environ, name); ok {
		return v, true
	}
	v, ok := h.env[name]
	return v, ok
}
