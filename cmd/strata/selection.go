package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/history"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/spell"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// selectionFlags are docs/behaviour.md#selection's flags, shared by every command that works on
// units.
func selectionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "all", Usage: "every unit at or below the current dir", Category: "Selection"},
		&cli.BoolFlag{Name: "changed", Usage: "units the changes since the base modify, uncommitted and untracked files included", Category: "Selection"},
		&cli.StringFlag{Name: "base", Usage: "compare --changed with `REF`, or with `applied`: each unit with the commit of its own last successful apply (default: origin/$GITHUB_BASE_REF, origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME, else origin/HEAD, origin/main, origin/master)", Category: "Selection"},
		&cli.StringSliceFlag{Name: "stack", Usage: "units of stack `NAME` (repeatable; a nested stack selects its leaves; a stack with for_each every instance, 'net[eu]' one)", Category: "Selection"},
		&cli.StringFlag{Name: "query", Usage: "units matching the tag `QUERY`", Category: "Selection"},
		&cli.StringSliceFlag{Name: "dir", Usage: "units in `DIR` and below (repeatable)", Category: "Selection"},
		&cli.StringFlag{Name: "workspace", Usage: "units of workspace `W`", Category: "Selection"},
		&cli.BoolFlag{Name: "propagate", Usage: "also add the units depends_on, modified_by and all-for-one reach from the selection (always on under --changed)", Category: "Selection"},
		&cli.BoolFlag{Name: "no-propagate", Usage: "under --changed, do not add units through depends_on, modified_by and all-for-one", Category: "Selection"},
		&cli.StringSliceFlag{Name: "status", Usage: "units whose last recorded status is `STATUS`: drifted, in-sync, planned, no-changes, applied, destroyed, failed or never-applied (repeatable; docs/behaviour.md#history)", Category: "Selection"},
		&cli.BoolFlag{Name: "with-dependencies", Usage: "also add the units the run's units wait for, transitively: plan_after, apply_after, depends_on and inputs (not in a destroy)", Category: "Selection"},
	}
}

// selectRun computes the run of a command from its flags; query, when not
// empty, is one more tag query to intersect (ls QUERY). Units whose dir a
// --changed change deleted never run: each gets a note on stderr.
func selectRun(c *cli.Context, s *session, query string) (*stacks.Run, error) {
	run, _, err := selectRunAndGates(c, s, query)
	return run, err
}

// selectRunAndGates is selectRun that also returns, under --changed, the
// modified units the scope or selection left out: gates of the run wait
// for them too (docs/behaviour.md#rules), and they open only once applied at their digest.
func selectRunAndGates(c *cli.Context, s *session, query string) (*stacks.Run, []*stacks.Unit, error) {
	run, deleted, modified, err := selectUnits(c, s, query)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range deleted {
		fmt.Fprintf(c.App.ErrWriter, "strata: %s@%s: its dir was deleted (%s); it does not run\n", d.Dir, d.Workspace, d.File)
	}
	s.deleted = deleted
	for _, k := range run.Kept {
		fmt.Fprintf(c.App.ErrWriter, "strata: %s is not destroyed: %s (docs/behaviour.md#dependencies)\n", k.Name(), k.Why)
	}
	var gates []*stacks.Unit
	for u := range modified {
		if !run.Has(u) {
			gates = append(gates, u)
		}
	}
	return run, gates, nil
}

// selectUnits is selectRun that also returns the units a --changed change
// deleted, as far as the selection covers them.
func selectUnits(c *cli.Context, s *session, query string) (*stacks.Run, []stacks.DeletedUnit, map[*stacks.Unit]string, error) {
	q := c.String("query")
	switch {
	case q == "":
		q = query
	case query != "":
		q = "(" + q + ") and (" + query + ")"
	}
	sel := stacks.Selection{
		Cwd:              s.cwd,
		All:              c.Bool("all"),
		Stacks:           c.StringSlice("stack"),
		Query:            q,
		Dirs:             c.StringSlice("dir"),
		Workspace:        c.String("workspace"),
		EnvWorkspace:     cmp.Or(os.Getenv("TF_WORKSPACE"), s.selectedWorkspace),
		TFWorkspace:      os.Getenv("TF_WORKSPACE"),
		Propagate:        c.Bool("propagate"),
		NoPropagate:      c.Bool("no-propagate"),
		WithDependencies: c.Bool("with-dependencies"),
		Destroying:       s.destroying,
	}
	var deleted []stacks.DeletedUnit
	switch {
	case c.Bool("changed") && sel.All:
		return nil, nil, nil, cli.Exit("--changed and --all: choose one (--all is the default without --changed)", 1)
	case c.IsSet("base") && !c.Bool("changed"):
		return nil, nil, nil, cli.Exit("--base works with --changed", 1)
	case c.Bool("changed"):
		var err error
		if sel.ModifiedAll, deleted, err = changedUnits(c, s); err != nil {
			return nil, nil, nil, cli.Exit(err.Error(), 1)
		}
		sel.Modified = make(map[*stacks.Unit]string, len(sel.ModifiedAll))
		for u, rs := range sel.ModifiedAll {
			sel.Modified[u] = rs[0]
		}
		for u, why := range s.project.DependentsOfDeleted(deleted) {
			if _, ok := sel.Modified[u]; !ok {
				sel.Modified[u] = why
			}
			sel.ModifiedAll[u] = append(sel.ModifiedAll[u], why)
		}
	}
	run, emptied, err := selectByStatus(c, s, sel)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(run.Units) == 0 && !c.Bool("changed") && !emptied {
		if msg := noMatch(s, sel); msg != "" {
			return nil, nil, nil, cli.Exit(msg, 1)
		}
	}
	if deleted, err = s.project.DeletedIn(sel, deleted); err != nil {
		return nil, nil, nil, cli.Exit(err.Error(), 1)
	}
	return run, deleted, sel.Modified, nil
}

// refuseWithDependencies refuses --with-dependencies with --resume, whose
// report names the units.
func refuseWithDependencies(c *cli.Context) error {
	if c.Bool("with-dependencies") && c.Path("resume") != "" {
		return cli.Exit("--with-dependencies does not go with --resume: the report names the units", 1)
	}
	return nil
}

// noMatch explains an empty run that a selection flag made: a mistyped
// --dir or a query that matches nothing is an error, never a quiet
// success. An empty run with no selection (nothing here) or under
// --changed (nothing changed) is not.
func noMatch(s *session, sel stacks.Selection) string {
	var given []string
	for _, d := range sel.Dirs {
		given = append(given, "--dir "+d)
	}
	for _, st := range sel.Stacks {
		given = append(given, "--stack "+st)
	}
	if sel.Query != "" {
		given = append(given, "query "+strconv.Quote(sel.Query))
	}
	if sel.Workspace != "" {
		given = append(given, "--workspace "+sel.Workspace)
	}
	if units := s.project.UnitsIn(s.cwd); sel.EnvWorkspace != "" && len(units) > 0 && len(given) == 0 {
		from := "TF_WORKSPACE " + sel.EnvWorkspace
		if os.Getenv("TF_WORKSPACE") == "" {
			from = fmt.Sprintf("the workspace terraform has selected here, %s,", sel.EnvWorkspace)
		}
		var have []string
		for _, u := range units {
			have = append(have, u.Workspace)
		}
		return fmt.Sprintf("%s is no workspace of %s; its workspaces: %s (declare more under dirs.%s.workspaces, or select one with strata workspace select)",
			from, s.cwd, strings.Join(slices.Compact(have), ", "), s.cwd)
	}
	if sel.Workspace == "" && sel.TFWorkspace != "" {
		given = append(given, "TF_WORKSPACE "+sel.TFWorkspace)
	}
	if len(given) == 0 {
		return ""
	}
	msg := "no units match " + strings.Join(given, ", ")
	if sel.Query != "" {
		if notes := s.project.QueryNotes(sel.Query); len(notes) > 0 {
			msg += ": " + strings.Join(notes, "; ")
		}
	}
	for _, d := range sel.Dirs {
		if best := closestDir(s.project, path.Clean(d)); best != "" {
			msg += fmt.Sprintf("; did you mean --dir %s?", best)
			break
		}
	}
	return msg + " (strata ls lists the units)"
}

// closestDir is the unit dir nearest to d by edit distance, when it is
// near enough to be a typo.
func closestDir(p *stacks.Project, d string) string {
	var dirs []string
	for _, u := range p.Units {
		if len(dirs) == 0 || dirs[len(dirs)-1] != u.Dir {
			dirs = append(dirs, u.Dir)
		}
	}
	return spell.Nearest(d, dirs, len(d)/3+1)
}

// changedUnits decides the modified units of --changed
// (docs/behaviour.md#changed-units): against one base, or, on a push
// build of the base branch and with --base applied, each unit against the
// commit of its own last successful apply, read from the run state (the
// --state bucket when given, else the state dir). A push build whose run
// state records no such commit compares with HEAD^1, and says what that
// can lose.
func changedUnits(c *cli.Context, s *session) (map[*stacks.Unit][]string, []stacks.DeletedUnit, error) {
	repo, err := s.gitRepo(c)
	if err != nil {
		return nil, nil, err
	}
	base := c.String("base")
	from, perUnit, err := repo.Base(git.ChangeOptions{Base: base, Env: os.Getenv})
	if err != nil {
		return nil, nil, err
	}
	if perUnit {
		deployed, err := deployedCommits(c, s)
		if err != nil {
			return nil, nil, err
		}
		if len(deployed) > 0 || base == git.BaseApplied {
			return withReasons(s.project.ModifiedSinceDeployed(deployed, func(commit string) ([]stacks.FileChange, error) {
				if repo.Has(commit) {
					return repo.Changes(commit)
				}
				if repo.Shallow() {
					return nil, fmt.Errorf("--changed: a unit was last applied at %s, which this shallow clone does not have; fetch history with git fetch --unshallow (or fetch-depth: 0 in actions/checkout)", commit)
				}
				return nil, stacks.ErrCommitMissing
			}))
		}
		how := "keep it between runs with --state URL (or STRATA_STATE_URL)"
		if c.String("state") != "" {
			how = "units record it as they are applied"
		}
		warnf(c, "--changed on a push build: the run state records no unit's last applied commit, so this run compares with HEAD^1 only, and a push whose run was skipped or cancelled is never applied; %s", how)
	}
	changes, err := repo.Changes(from)
	if err != nil {
		return nil, nil, err
	}
	modified, deleted := s.project.ModifiedReasons(changes)
	if from == "" {
		// Deleted in the working tree only: HEAD still has the dir.
		from = repo.Head()
	}
	for i := range deleted {
		deleted[i].Commit = from
	}
	return modified, deleted, nil
}

// deployedCommits reads the commit of each unit's last successful apply
// from the run state (docs/behaviour.md#changed-units).
func deployedCommits(c *cli.Context, s *session) (map[*stacks.Unit]string, error) {
	states, err := unitStates(c, s, s.project.Units)
	if err != nil {
		return nil, err
	}
	return runstate.DeployedCommits(states), nil
}

// unitStates reads the records of units from the run state: the --state
// bucket when the command has one, else the state dir.
func unitStates(c *cli.Context, s *session, units []*stacks.Unit) (map[*stacks.Unit]*runstate.UnitState, error) {
	if url := c.String("state"); url != "" {
		st, err := openBucket(c, url)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return runstate.ReadBucket(c.Context, st, units)
	}
	return runstate.ReadLocal(stateDirOf(c, s), units, func(msg string) {
		warnf(c, "%s", msg)
	})
}

// stateDirOf is the command's state dir: --state-dir, else .strata at the
// root.
func stateDirOf(c *cli.Context, s *session) string { return stateDirAt(c, s.project.Root) }

// stateDirAt is the state dir of a command whose repository is at root:
// --state-dir, else .strata at root.
func stateDirAt(c *cli.Context, root string) string {
	if dir := c.Path("state-dir"); dir != "" {
		return dir
	}
	return runstate.DefaultPath(root)
}

// selectedWorkspace is the workspace terraform has selected in dir start
// (its data dir's environment file) when it picks a drop-in command's unit
// (docs/behaviour.md#workspaces-in-drop-in): "" when TF_WORKSPACE or a
// selection flag decides, or terraform's is the default.
func selectedWorkspace(c *cli.Context, start string) string {
	if os.Getenv("TF_WORKSPACE") != "" {
		return ""
	}
	for _, f := range []string{"all", "stack", "query", "dir", "workspace", "changed"} {
		if c.IsSet(f) {
			return ""
		}
	}
	dataDir := cmp.Or(os.Getenv("TF_DATA_DIR"), ".terraform")
	if !filepath.IsAbs(dataDir) {
		dataDir = filepath.Join(start, dataDir)
	}
	f, err := os.Open(filepath.Join(dataDir, "environment"))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 256))
	ws := strings.TrimSpace(string(b))
	if ws == "default" || !plainWorkspace(ws) {
		return ""
	}
	return ws
}

// plainWorkspace reports whether ws is a workspace name strata takes from
// terraform's environment file: a path segment of safe characters, at
// most 90 of them.
func plainWorkspace(ws string) bool { return len(ws) <= 90 && workspaceName.MatchString(ws) }

// workspaceName is plainWorkspace's characters; its length is checked
// apart (a counted repeat compiles into as many copies at every start).
var workspaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// moduleDir refuses to run in a dir that is a local module of units, not
// a root module of its own: it runs as part of the units that call it,
// which the error names (docs/behaviour.md#scope).
func moduleDir(s *session) error {
	if s.cwd == "." || len(s.project.UnitsIn(s.cwd)) > 0 {
		return nil
	}
	callers := s.project.UnitsCalling(s.cwd)
	if len(callers) == 0 {
		return nil
	}
	names := make([]string, len(callers))
	for i, u := range callers {
		names[i] = u.Name()
	}
	var dirs []string
	for _, u := range callers {
		dirs = append(dirs, u.Dir)
	}
	dirs = slices.Compact(dirs) // units come sorted by dir
	return cli.Exit(fmt.Sprintf("%s is a module that %s call, not a root module: it is planned and applied with them; run strata in %s, or at the root",
		s.cwd, strings.Join(names, ", "), strings.Join(dirs, " or ")), 1)
}

// withReasons is a unit's one reason as the list of its reasons.
func withReasons(first map[*stacks.Unit]string, deleted []stacks.DeletedUnit, err error) (map[*stacks.Unit][]string, []stacks.DeletedUnit, error) {
	all := make(map[*stacks.Unit][]string, len(first))
	for u, r := range first {
		all[u] = []string{r}
	}
	return all, deleted, err
}

// selectByStatus is Project.Select with --status
// (docs/behaviour.md#history): the units the other flags select whose
// last recorded status is one asked for, then what propagation and
// --with-dependencies add to them. emptied says the other flags selected
// units and none had the status: an empty run then is no mistyped flag.
func selectByStatus(c *cli.Context, s *session, sel stacks.Selection) (run *stacks.Run, emptied bool, err error) {
	filter, err := history.ParseStatuses(c.StringSlice("status"))
	if err != nil {
		return nil, false, cli.Exit(err.Error(), 1)
	}
	if filter == nil {
		run, err := s.project.Select(sel)
		if err != nil {
			return nil, false, cli.Exit(err.Error(), 1)
		}
		return run, false, nil
	}
	if c.Path("resume") != "" {
		return nil, false, cli.Exit("--status does not go with --resume: the report names the units", 1)
	}
	base := sel
	base.Propagate, base.NoPropagate, base.WithDependencies = false, true, false
	picked, err := s.project.Select(base)
	if err != nil {
		return nil, false, cli.Exit(err.Error(), 1)
	}
	if len(picked.Units) == 0 {
		return picked, false, nil
	}
	keep, err := unitsWithStatus(c, s, filter, picked.List())
	if err != nil {
		return nil, false, cli.Exit(err.Error(), 1)
	}
	seeds := map[*stacks.Unit]string{}
	all := map[*stacks.Unit][]string{}
	for _, ru := range picked.Units {
		if keep[ru.Unit] {
			seeds[ru.Unit], all[ru.Unit] = ru.Why, ru.Whys
		}
	}
	if len(seeds) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "strata: no unit selected has the last recorded status %s\n", strings.Join(filter.Names, " or "))
	}
	// The units kept seed the selection, as --changed's modified units
	// do; it propagates as the flags asked.
	propagates := (sel.Modified != nil || sel.Propagate) && !sel.NoPropagate
	again := sel
	again.Modified, again.ModifiedAll = seeds, all
	again.Propagate, again.NoPropagate = false, !propagates
	run, err = s.project.Select(again)
	if err != nil {
		return nil, false, cli.Exit(err.Error(), 1)
	}
	return run, len(seeds) == 0, nil
}

// unitsWithStatus are the units whose last recorded status the filter
// selects, read from the history's index (the bucket's with --state,
// else the state dir's); never-applied asks the run state too, which
// knows the units applied before strata kept history.
func unitsWithStatus(c *cli.Context, s *session, filter *history.Filter, units []*stacks.Unit) (map[*stacks.Unit]bool, error) {
	h, done, err := openHistory(c, stateDirOf(c, s))
	if err != nil {
		return nil, err
	}
	defer done()
	ix, err := h.Index(c.Context)
	if err != nil {
		return nil, err
	}
	out := map[*stacks.Unit]bool{}
	var unapplied []*stacks.Unit
	for _, u := range units {
		us := ix.Units[u.ID()]
		if filter.Match(us) {
			out[u] = true
			if filter.Has(history.NeverApplied) && (us == nil || us.AppliedAt == nil) {
				unapplied = append(unapplied, u)
			}
		}
	}
	if len(unapplied) > 0 {
		states, err := unitStates(c, s, unapplied)
		if err != nil {
			return nil, err
		}
		others := filter.Without(history.NeverApplied)
		for _, u := range unapplied {
			if st := states[u]; st != nil && (st.Deployed != nil || st.Apply != nil && st.Apply.Result == report.StatusApplied) &&
				!others.Match(ix.Units[u.ID()]) {
				delete(out, u)
			}
		}
	}
	return out, nil
}
