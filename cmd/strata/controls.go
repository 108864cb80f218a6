package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/forge"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// controlsOf is what a command asks of the config's controls for op
// (docs/controls.md#in-a-run): nil when they do not govern the command,
// or cannot be checked where it runs, which it says once when the config
// holds any.
func controlsOf(ctx context.Context, c *cli.Context, s *session, op controls.Op) runner.ControlsFunc {
	if op == "" {
		return nil
	}
	env := os.Environ()
	ci := ciplatform.Read(env)
	var open func() (controls.Source, error)
	if ci.Forge() != ciplatform.None {
		open = func() (controls.Source, error) { return openCIForge(env, configPaths(c, s)) }
	}
	has := controls.Compile(s.project.Config).Any()
	switch {
	case open == nil:
	case ci.Job().Token.Value() == "" && !has:
		// Nothing here to check, and no token to read the default
		// branch's controls with: a repository that uses controls
		// passes one (docs/controls.md#the-default-branchs-controls).
		return nil
	default:
		return func(units, auto []*stacks.Unit) (map[*stacks.Unit]string, map[*stacks.Unit]string, map[*stacks.Unit][]string) {
			src, err := open()
			if err != nil {
				v := controls.Unchecked(units, err)
				return v.Denied, v.AutoApplyDenied, nil
			}
			v := controls.Command(ctx, src, s.project.Config, op, units, auto)
			return v.Denied, v.AutoApplyDenied, v.Warnings
		}
	}
	if has {
		fmt.Fprintln(c.App.ErrWriter, "strata: access_control and apply_requirements are checked in GitHub Actions and GitLab CI, where strata knows who runs the command and for which pull request; this run is not checked against them")
	}
	return nil
}

// configPaths are where the project's config may sit in the repository,
// in the order strata looks for it: the one it loaded, then the names it
// looks for at the project's root. A pull request that renames or
// deletes its config is still held to the default branch's.
func configPaths(c *cli.Context, s *session) []string {
	top, prefix := s.project.Root, ""
	if repo, err := s.gitRepo(c); err == nil {
		top = repo.Top()
		if rel, err := filepath.Rel(top, s.project.Root); err == nil && rel != "." {
			prefix = filepath.ToSlash(rel) + "/"
		}
	}
	var out []string
	if s.cfgPath != "" {
		if rel, err := filepath.Rel(top, s.cfgPath); err == nil && !strings.HasPrefix(rel, "..") {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	for _, name := range []string{config.StrataConfigFile, config.TerrateamConfigFile, config.TerrateamConfigFileYAML} {
		if p := prefix + name; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// onForge is what a command run in CI does on its forge once it ended:
// the apply status (docs/controls.md#the-apply-status), automerge
// (docs/controls.md#automerge) and drift issues
// (docs/ci.md#drift-schedules).
type onForge struct {
	status      controls.StatusSettings
	merge       controls.Automerge
	driftIssues bool
}

// onForgeOf is what a config asks of the forge after a command.
func onForgeOf(cfg *config.Config) onForge {
	return onForge{status: controls.StatusSettingsOf(cfg), merge: controls.AutomergeOf(cfg), driftIssues: len(cfg.DriftSchedules()) > 0}
}

// after does each, opening the forge once, and only when one needs it.
func (o onForge) after(ctx context.Context, c *cli.Context, pol *cmdpolicy.Policy, rep *report.Report) {
	forgeOf := sync.OnceValues(func() (ciForge, error) { return openCIForge(os.Environ(), nil) })
	setApplyStatus(ctx, c, forgeOf, o.status, pol, rep)
	automerge(ctx, c, forgeOf, o.merge, pol, rep)
	driftIssues(ctx, c, forgeOf, o.driftIssues, pol, rep)
}

// applyStatusSink sets a pull request's apply status (forge.Actions,
// forge.GitLabCI).
type applyStatusSink interface {
	SetApplyStatus(ctx context.Context, state, description, url string) (bool, error)
}

// setApplyStatus sets the apply status of the pull request a CI run is
// for, after its command (docs/controls.md#the-apply-status). Not being
// able to is a warning: a branch rule that requires the status still
// holds the merge back.
func setApplyStatus(ctx context.Context, c *cli.Context, forgeOf func() (ciForge, error), set controls.StatusSettings, pol *cmdpolicy.Policy, rep *report.Report) {
	state, description, ok := set.ApplyStatus(pol, rep.Units)
	if !ok {
		return
	}
	sink, err := forgeOf()
	if sink == nil && err == nil {
		return
	}
	url := ""
	if rep.CI != nil {
		url = rep.CI.RunURL
	}
	done := false
	if err == nil {
		done, err = sink.SetApplyStatus(ctx, state, description, url)
	}
	switch {
	case err != nil:
		warnf(c, "the commit status %q was not set: %v", controls.ApplyStatusName, err)
	case done:
		fmt.Fprintf(c.App.ErrWriter, "strata: commit status %q: %s, %s\n", controls.ApplyStatusName, state, description)
	}
}

// ciForge is what strata asks of the forge of the CI it runs in: the
// controls' source, the apply status and the pull request comment.
type ciForge interface {
	controls.Source
	applyStatusSink
	commentSink
	Merge(ctx context.Context, deleteBranch bool) (merged bool, how string, err error)
	DriftIssues(ctx context.Context, findings []forge.DriftFinding) ([]string, error)
	Comments(ctx context.Context) ([]controls.Comment, error)
}

// gatesOf is how a command checks the gates its units' plans raised
// (docs/controls.md#gates): in GitHub Actions and GitLab CI against the
// pull request's approvals and comments, the forge opened once.
// Elsewhere nobody can approve a gate, and anyone with the credentials
// could run the engine directly: strata says once that the gates are not
// checked, as it does of the controls, and applies.
func gatesOf(ctx context.Context, c *cli.Context) runner.GateFunc {
	env := os.Environ()
	if ciplatform.Read(env).Forge() == ciplatform.None {
		var once sync.Once
		return func(u *stacks.Unit, gates []report.Gate) string {
			once.Do(func() {
				fmt.Fprintf(c.App.ErrWriter, "strata: %s: %s; gates are checked in GitHub Actions and GitLab CI, where a pull request approves them: here they are not\n", u.Name(), report.GatedReason(gates))
			})
			return ""
		}
	}
	// One checker for the command: the pull request, its comments and
	// the teams are asked once, whatever the number of gated units.
	checker := sync.OnceValues(func() (*controls.GateChecker, error) {
		f, err := openCIForge(env, nil)
		if err == nil && f == nil {
			err = errors.New("no forge to read the approvals from")
		}
		if err != nil {
			return nil, err
		}
		return controls.NewGateChecker(f), nil
	})
	return func(_ *stacks.Unit, gates []report.Gate) string {
		g, err := checker()
		if err != nil {
			return fmt.Sprintf("the gates could not be checked: %v", err)
		}
		return g.Check(ctx, gates)
	}
}

// automerge merges the pull request a CI run is for once its command
// left nothing to apply (docs/controls.md#automerge). Not being able to
// (a branch rule, a head that moved) is a warning: the apply stands.
func automerge(ctx context.Context, c *cli.Context, forgeOf func() (ciForge, error), a controls.Automerge, pol *cmdpolicy.Policy, rep *report.Report) {
	if !a.Merges(pol, rep.Units) {
		return
	}
	f, err := forgeOf()
	if f == nil && err == nil {
		return
	}
	how := ""
	if err == nil {
		_, how, err = f.Merge(ctx, a.DeleteBranch)
	}
	if how != "" {
		fmt.Fprintf(c.App.ErrWriter, "strata: automerge: %s\n", how)
	}
	if err != nil {
		warnf(c, "automerge: %v", err)
	}
}

// openCIForge opens the forge of GitHub Actions or GitLab CI from the
// job's environment; nil and no error anywhere else.
func openCIForge(env []string, configPaths []string) (ciForge, error) {
	var f ciForge
	var err error
	switch ciplatform.Read(env).Forge() {
	case ciplatform.GitHub:
		var a *forge.Actions
		if a, err = forge.NewActions(env, configPaths); err == nil {
			f = a
		}
	case ciplatform.GitLab:
		var g *forge.GitLabCI
		if g, err = forge.NewGitLabCI(env, configPaths); err == nil {
			f = g
		}
	}
	// No typed nil in the interface: nil means no forge.
	return f, err
}

// mergedPullRequestOf names the pull request whose merge a CI apply on a
// push applies, asked of the forge once and only when a reviewed plan of
// a pull request is met (docs/behaviour.md#saved-plans). A forge that
// cannot tell is said once; then no pull request's review counts for the
// apply.
func mergedPullRequestOf(ctx context.Context, errW io.Writer, env []string) func() string {
	var once sync.Once
	var name string
	return func() string {
		once.Do(func() {
			f, err := openCIForge(env, nil)
			var pr *controls.PullRequest
			if err == nil && f != nil {
				pr, err = f.PullRequest(ctx)
			}
			switch {
			case err != nil:
				fmt.Fprintf(errW, "strata: warning: which pull request this apply merges: %v; no pull request's reviewed plan is compared with what it plans\n", err)
			case pr != nil:
				name = job.PullRequestName(pr.Number, env)
			}
		})
		return name
	}
}
