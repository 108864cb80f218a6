package controls

import (
	"context"
	"fmt"
	"slices"

	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// Source is what a CI run knows of the command it runs: who asks, the
// forge's answers, the pull request the units are applied for, and the
// default branch's config (docs/controls.md#in-a-run).
type Source interface {
	Forge
	// Actor is who asks: a comment's author, else the CI's actor.
	Actor() string
	// PullRequest is the pull request the command runs for, nil when
	// there is none.
	PullRequest(ctx context.Context) (*PullRequest, error)
	// ChangedFiles are the files the pull request the command runs for
	// changes, a rename's old and new paths both; nil when it runs for
	// none, or for one already merged.
	ChangedFiles(ctx context.Context) ([]string, error)
	// ConfigPaths are where the repository's config may sit.
	ConfigPaths() []string
	// DefaultBranchConfig is the config of the repository's default
	// branch when the command runs on another commit. When that branch
	// has none (the forge answered 404 where it looked), cfg is nil and
	// missing says where it was looked for; on the default branch itself
	// both are empty.
	DefaultBranchConfig(ctx context.Context) (cfg *config.Config, missing string, err error)
}

// Verdict is what the controls refuse of one command: units it may not
// run at all, and auto_apply units it may plan and not apply. Warnings
// are what each unit's report must say of how the controls were read.
type Verdict struct {
	Denied, AutoApplyDenied map[*stacks.Unit]string
	Warnings                map[*stacks.Unit][]string
}

// Command decides what the controls of cfg refuse of a command: op to
// units, and, in plan, the apply of the auto_apply units among them.
// The controls are the default branch's where default_branch_overrides
// says so, so a pull request cannot loosen its own. Anything the source
// cannot answer refuses every unit, with its error.
func Command(ctx context.Context, src Source, cfg *config.Config, op Op, units, autoApply []*stacks.Unit) Verdict {
	var v Verdict
	fail := func(err error) Verdict { return Unchecked(units, err) }
	def, missing, err := src.DefaultBranchConfig(ctx)
	if err != nil {
		return fail(fmt.Errorf("reading the default branch's config: %w", err))
	}
	if missing != "" && Compile(cfg).Any() {
		v.Warnings = warnAll(units, NoDefaultBranchConfig(missing))
	}
	if def != nil || missing != "" {
		cfg = WithDefaultBranch(cfg, def)
	}
	c := Compile(cfg)
	if !c.Any() && (op == Plan || op == Apply) {
		return v
	}
	var pr *PullRequest
	if op.Applies() || len(autoApply) > 0 {
		if pr, err = src.PullRequest(ctx); err != nil {
			return fail(fmt.Errorf("reading the pull request: %w", err))
		}
	}
	req := Request{Op: op, Actor: src.Actor(), PR: pr, Units: units}
	if c.Access && c.Changes.asks() {
		if req.Changed, err = src.ChangedFiles(ctx); err != nil {
			return fail(fmt.Errorf("reading the files the pull request changes: %w", err))
		}
		req.ConfigFiles = src.ConfigPaths()
	}
	v.Denied = c.Decide(ctx, src, req)
	var auto []*stacks.Unit
	for _, u := range autoApply {
		if _, ok := v.Denied[u]; !ok {
			auto = append(auto, u)
		}
	}
	if len(auto) > 0 {
		req.Op, req.Units = Apply, auto
		v.AutoApplyDenied = c.Decide(ctx, src, req)
	}
	return v
}

// NoDefaultBranchConfig is the warning of a run whose checkout's config
// has controls while the default branch has no config: the default
// branch's controls, none, are the ones that hold
// (docs/controls.md#the-default-branchs-controls).
func NoDefaultBranchConfig(missing string) string {
	return fmt.Sprintf("the forge answers 404 for the default branch's config (%s): the controls are the default branch's, and it has none, so the checkout's access_control and apply_requirements are not checked", missing)
}

// warnAll gives each unit the warning w.
func warnAll(units []*stacks.Unit, w string) map[*stacks.Unit][]string {
	out := make(map[*stacks.Unit][]string, len(units))
	for _, u := range units {
		out[u] = []string{w}
	}
	return out
}

// overridable are the sections default_branch_overrides names when the
// config leaves it out.
var overridable = []string{"access_control", "apply_requirements", "destination_branches"}

// WithDefaultBranch is cfg with the sections the default branch's config
// def names in its default_branch_overrides (all of them when it names
// none) taken from def: a section def leaves out is left out. A nil def
// is a default branch with no config, whose sections are all left out.
func WithDefaultBranch(cfg, def *config.Config) *config.Config {
	out := *cfg
	if def == nil {
		def = &config.Config{}
	}
	keys := overridable
	if def.DefaultBranchOverrides != nil {
		keys = nil
		for _, k := range *def.DefaultBranchOverrides {
			keys = append(keys, k.Value)
		}
	}
	out.DefaultBranchOverrides = def.DefaultBranchOverrides
	if slices.Contains(keys, "access_control") {
		out.AccessControl = def.AccessControl
	}
	if slices.Contains(keys, "apply_requirements") {
		out.ApplyRequirements = def.ApplyRequirements
	}
	if slices.Contains(keys, "destination_branches") {
		out.DestinationBranches = def.DestinationBranches
	}
	return &out
}

// Unchecked is the verdict when the controls cannot be checked: every
// unit refused, with err (docs/controls.md#when-the-forge-fails).
func Unchecked(units []*stacks.Unit, err error) Verdict {
	return Verdict{Denied: denyAll(units, fmt.Sprintf("the controls could not be checked: %v", err))}
}

// Unlock says why the source's actor may not release a pull request's
// locks (access_control.unlock, the default branch's where
// default_branch_overrides says so), or "" when they may. Anything the
// source cannot answer refuses, with its error.
func Unlock(ctx context.Context, src Source, cfg *config.Config) string {
	def, missing, err := src.DefaultBranchConfig(ctx)
	if err != nil {
		return fmt.Sprintf("the controls could not be checked: reading the default branch's config: %v", err)
	}
	if def != nil || missing != "" {
		cfg = WithDefaultBranch(cfg, def)
	}
	c := Compile(cfg)
	if !c.Access {
		return ""
	}
	actor := src.Actor()
	d := &decider{c: c, f: src, ctx: ctx, teams: map[[2]string]bool{}, roles: map[string]string{}}
	ok, err := d.matchesAny(actor, c.Unlock)
	switch {
	case err != nil:
		return fmt.Sprintf("the controls could not be checked: %v", err)
	case !ok:
		return fmt.Sprintf("%s may not unlock: access_control.unlock lets %s", actor, describe(c.Unlock))
	}
	return ""
}
