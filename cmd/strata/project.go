package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/forge"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// session is what every command starts from: where strata runs and the
// project there.
type session struct {
	project *stacks.Project
	cfgPath string // the config file the project was loaded from
	cwd     string // repo-relative dir strata was started in
	// deleted are the units whose dir a --changed change deleted, as far
	// as the selection covers them.
	deleted []stacks.DeletedUnit
	// repo is the git work tree, once gitRepo opened it; a run's jobs
	// may open it (runner.Options.Repo), so repoMu guards it.
	repo    *git.Repo
	repoErr error
	repoMu  sync.Mutex
	// selectedWorkspace is the workspace terraform has selected in the
	// dir strata runs in, when it picks the drop-in unit (selectedWorkspace).
	selectedWorkspace string
	// branches are the branches of the pull request or push the CI runs
	// for.
	branches stacks.Branches
	// destroying: the command destroys, so --with-dependencies leaves out
	// what units outside the run still need (stacks.Selection.Destroying).
	destroying bool
}

// openProject finds the repository, loads it and prints its warnings once.
// A config with errors stops the command with exit 1 after listing them.
func openProject(c *cli.Context) (*session, error) {
	loc, err := locateProject(c)
	if err != nil {
		return nil, err
	}
	if err := runstate.CleanRestored(c.Context, stateDirAt(c, loc.root), loc.root, func(msg string) { warnf(c, "%s", msg) }); err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	return loc.load(c, nil)
}

// location is where a command's repository and config are.
type location struct {
	start, root, cfgPath string
}

// locateProject finds the repository strata was started in, and its
// config.
func locateProject(c *cli.Context) (*location, error) {
	start, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the current directory: %w", err)
	}
	if d := c.Path("chdir"); d != "" {
		start, err = filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("-C %s: %w", d, err)
		}
	}
	root, cfgPath, err := config.FindRoot(start)
	if err != nil {
		return nil, fmt.Errorf("finding the repository of %s: %w", start, err)
	}
	if f := c.Path("config"); f != "" {
		if cfgPath, err = filepath.Abs(f); err != nil {
			return nil, fmt.Errorf("--config %s: %w", f, err)
		}
		if _, err := os.Stat(cfgPath); err != nil {
			return nil, cli.Exit(fmt.Sprintf("config %s: %v", f, err), 1)
		}
	} else if cfgPath != "" {
		if tt, _ := config.TerrateamConfigIn(root); tt != "" && filepath.Base(cfgPath) == config.StrataConfigFile {
			rel, _ := filepath.Rel(root, tt)
			warnf(c, "both %s and %s exist; using %s", config.StrataConfigFile, filepath.ToSlash(rel), config.StrataConfigFile)
		}
	}
	return &location{start: start, root: root, cfgPath: cfgPath}, nil
}

// rel is the dir strata was started in, relative to the repository root;
// "." when it is not under it.
func (l *location) rel() string {
	rel, err := filepath.Rel(l.root, l.start)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "."
	}
	return rel
}

// load loads the project, from the tree that tree returns once the config
// is read (stacks.LoadFrom; nil reads the repository), and prints its
// warnings once.
func (l *location) load(c *cli.Context, tree func() (*stacks.Tree, error)) (*session, error) {
	start, root, cfgPath := l.start, l.root, l.cfgPath
	rel := l.rel()
	var opts []stacks.LoadOption
	ws := selectedWorkspace(c, start)
	if ws != "" {
		opts = append(opts, stacks.WithSelectedWorkspace(filepath.ToSlash(rel), ws))
	}
	p, err := stacks.LoadFrom(root, cfgPath, tree, opts...)
	var ce *config.Error
	if errors.As(err, &ce) {
		printDiagnostics(c.App.ErrWriter, p.Diagnostics)
		var why strings.Builder
		fmt.Fprintf(&why, "the config has %d error(s):", len(p.Diagnostics.Errors()))
		for _, d := range p.Diagnostics.Errors() {
			why.WriteString("\n" + d.String())
		}
		return nil, &exitError{code: 1, configErrors: len(p.Diagnostics.Errors()), configWarnings: len(p.Diagnostics.Warnings()), why: why.String()}
	}
	if err != nil {
		return nil, fmt.Errorf("loading the repository at %s: %w", root, err)
	}
	branches := stacks.BranchesFromCI(os.Getenv)
	if ciplatform.From(os.Getenv).Platform == ciplatform.GitHub {
		branches.Draft = forge.DraftPullRequest(os.Environ())
	}
	if b := c.String("dest-branch"); b != "" {
		branches.Dest = b
	}
	if b := c.String("source-branch"); b != "" {
		branches.Source = b
	}
	p.SetBranches(branches)
	printDiagnostics(c.App.ErrWriter, p.Diagnostics.Warnings())
	countWarnings(c, len(p.Diagnostics.Warnings()))
	if c.Command != nil && c.Command.Name == "check" {
		ws := p.BranchTagWarnings(branches)
		printDiagnostics(c.App.ErrWriter, ws)
		countWarnings(c, len(ws))
	}
	return &session{project: p, cfgPath: cfgPath, cwd: filepath.ToSlash(rel), selectedWorkspace: ws, branches: branches}, nil
}

// gitRepo is the git work tree holding the project, opened once per
// command.
func (s *session) gitRepo(c *cli.Context) (*git.Repo, error) {
	s.repoMu.Lock()
	defer s.repoMu.Unlock()
	if s.repo == nil && s.repoErr == nil {
		// A project outside any work tree is asked once too.
		s.repo, s.repoErr = git.Open(c.Context, s.project.Root)
	}
	return s.repo, s.repoErr
}

// warningsKey keeps, in the app's metadata, how many warnings strata
// printed of its own in this command, outside a run's console: the
// config's and the command's (docs/behaviour.md#console-output).
const warningsKey = "warnings"

// countWarnings counts n warnings printed.
func countWarnings(c *cli.Context, n int) {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	had, _ := c.App.Metadata[warningsKey].(int)
	c.App.Metadata[warningsKey] = had + n
}

// warningsPrinted is how many warnings countWarnings counted.
func warningsPrinted(c *cli.Context) int {
	n, _ := c.App.Metadata[warningsKey].(int)
	return n
}

// warnf prints a warning of strata's own on the error stream, and counts
// it.
func warnf(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, "strata: warning: "+format+"\n", args...)
	countWarnings(c, 1)
}

func printDiagnostics(w io.Writer, ds config.Diagnostics) {
	for _, d := range ds {
		fmt.Fprintln(w, d.String())
	}
}

// disabled says the config turns strata off in CI, and says why: enabled:
// false, or a pull request destination_branches does not name. In GitHub
// Actions and GitLab CI the command then runs nothing; elsewhere it runs,
// after a note for enabled: false (docs/behaviour.md#the-config-file).
func disabled(c *cli.Context, s *session) bool {
	inCI := ciplatform.From(os.Getenv).Forge() != ciplatform.None
	if b := s.branches; inCI && b.Source != "" && b.Dest != "" && b.Source != b.Dest && !s.project.Config.RunsFor(b.Dest, b.Source) {
		fmt.Fprintf(c.App.ErrWriter, "strata: a pull request from %s into %s is none that destination_branches in %s names: strata runs nothing for it\n", b.Source, b.Dest, s.project.ConfigFile)
		return true
	}
	e := s.project.Config.Enabled
	if !e.Set || e.Value {
		return false
	}
	if !inCI {
		fmt.Fprintf(c.App.ErrWriter, "strata: %s says enabled: false, so strata runs nothing in CI; here it runs\n", s.project.ConfigFile)
		return false
	}
	fmt.Fprintf(c.App.ErrWriter, "strata: %s says enabled: false: strata runs nothing in CI for this repository\n", s.project.ConfigFile)
	return true
}

// noConfiguration is the error of a command run where there is nothing to
// work on: no config found from the start dir up, and no root module at or
// below the root, as terraform's "No configuration files" is an error
// (docs/behaviour.md#scope). nil when there is a config or a module.
func noConfiguration(s *session) error {
	if s.cfgPath != "" || len(s.project.Dirspaces) > 0 {
		return nil
	}
	return cli.Exit(fmt.Sprintf("no configuration: no %s or %s in %s or a dir above it, and no root module (*.tf, *.tf.json, *.tofu) in it or below it; run strata in a repository, or in a module's dir",
		config.StrataConfigFile, config.TerrateamConfigFile, s.project.Root), 1)
}
