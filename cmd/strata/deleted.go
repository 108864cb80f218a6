package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	cmdpolicy "github.com/strata-iac/strata/command"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// Root modules a change deleted (docs/behaviour.md#changed-units). One
// whose run state says an apply deployed it, with no destroy since, may
// still hold resources: plan and apply put its dir back as it was at that
// commit, for the length of the command (runstate.Restore), and plan its
// destroy to report what its state holds; with --destroy-deleted, apply
// destroys it, after the rest of the run, in destroy order.

// deletedUnit is a deleted unit that may still hold resources, with the
// commit its config is put back from.
type deletedUnit struct {
	stacks.DeletedUnit
	from string
	// leftConfig says the config no longer puts the dir in its stack (the
	// stack left the config, or no longer matches the dir): the unit was
	// found from its run state, and runs from the config at from.
	leftConfig bool
	// instanceRemoved: the unit is of an instance whose key its stack's
	// for_each no longer has; its dir is still there
	// (docs/behaviour.md#stack-instances).
	instanceRemoved bool
}

// ghost is a deleted unit as the run state names it.
func ghost(d stacks.DeletedUnit) *stacks.Unit {
	return &stacks.Unit{Dirspace: &stacks.Dirspace{Dir: d.Dir, Workspace: d.Workspace, Tags: d.Tags}, Stack: d.Stack, Tags: d.Tags}
}

// stillDeployed keeps the deleted units whose run state says an apply
// deployed them and nothing destroyed them since, each with the commit to
// put it back from: the one it was deployed at when this clone has it,
// else the one the change was compared with. Besides the units the config
// gives a deleted dir, each unit of the dir the run state holds a record
// of is looked at: its stack may have left the config with the dir
// (docs/behaviour.md#a-stack-that-left-the-config).
func stillDeployed(c *cli.Context, s *session, deleted []stacks.DeletedUnit) ([]deletedUnit, error) {
	found, err := recordedDeleted(c, s, deleted)
	if err != nil {
		return nil, err
	}
	return keepDeployed(c, s, found)
}

// keepDeployed keeps the units of found whose run state says an apply
// deployed them and nothing destroyed them since, each with the commit to
// put it back from.
func keepDeployed(c *cli.Context, s *session, found []deletedUnit) ([]deletedUnit, error) {
	var units []*stacks.Unit
	byUnit := map[*stacks.Unit]deletedUnit{}
	for _, d := range found {
		u := ghost(d.DeletedUnit)
		units = append(units, u)
		byUnit[u] = d
	}
	if len(units) == 0 {
		return nil, nil
	}
	states, err := unitStates(c, s, units)
	if err != nil {
		return nil, err
	}
	repo, err := s.gitRepo(c)
	if err != nil {
		return nil, err
	}
	var out []deletedUnit
	for _, u := range units {
		us := states[u]
		if !us.StillDeployed() {
			continue
		}
		d := byUnit[u]
		d.from = d.Commit
		if repo.Has(us.Deployed.Commit) {
			d.from = us.Deployed.Commit
		}
		if d.from == "" {
			warnf(c, "%s@%s (stack %s) was deployed at %s, which this clone does not have: what its state holds is not known", d.Dir, d.Workspace, d.Stack.Name, git.ShortID(us.Deployed.Commit))
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// removedInstances are the units of stack instances whose key the config's
// for_each no longer has (docs/behaviour.md#stack-instances): for each dir
// the run has a unit of an instance in, the records the run state holds of
// that stack's instances the config does not have. They are deleted units
// whose stack left the config, and whose dir is still there.
func removedInstances(c *cli.Context, s *session, run *stacks.Run) ([]deletedUnit, error) {
	bases := map[string]map[string]bool{} // dir -> stacks as written
	var dirs []string
	for _, ru := range run.Units {
		if ru.Stack.Instance == "" {
			// Only the dirs of instances are looked at: a run of stacks
			// without for_each reads no run state for this.
			continue
		}
		if bases[ru.Dir] == nil {
			bases[ru.Dir] = map[string]bool{}
			dirs = append(dirs, ru.Dir)
		}
		bases[ru.Dir][ru.Stack.BaseName()] = true
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	recorded, err := recordedUnits(c, s, dirs)
	if err != nil {
		return nil, err
	}
	var out []deletedUnit
	for i, dir := range dirs {
		for _, r := range recorded[i] {
			base, key, ok := config.SplitInstance(r.Stack)
			if !ok || key == "" || !bases[dir][base] {
				continue
			}
			if _, still := s.project.Stack(r.Stack); still {
				continue
			}
			gone := stacks.DeletedUnit{Dir: dir, Workspace: r.Workspace, Stack: &stacks.Stack{Name: r.Stack, Base: base, Instance: key}, Commit: "HEAD"}
			out = append(out, deletedUnit{DeletedUnit: gone, leftConfig: true, instanceRemoved: true})
		}
	}
	return out, nil
}

// recordedUnits lists, for each of dirs, the units the run state holds
// records of: in the --state bucket when there is one, else in the
// state dir.
func recordedUnits(c *cli.Context, s *session, dirs []string) ([][]runstate.RecordedUnit, error) {
	var st *objstore.Store
	if url := c.String("state"); url != "" && len(dirs) > 0 {
		var err error
		if st, err = openBucket(c, url); err != nil {
			return nil, err
		}
		defer st.Close()
	}
	out := make([][]runstate.RecordedUnit, len(dirs))
	for i, dir := range dirs {
		var err error
		if st != nil {
			out[i], err = runstate.RecordedInBucket(c.Context, st, dir)
		} else {
			out[i], err = runstate.RecordedLocal(stateDirOf(c, s), dir)
		}
		if err != nil {
			return nil, fmt.Errorf("the run state of %s: %w", dir, err)
		}
	}
	return out, nil
}

// recordedDeleted is the deleted units the config gives a stack, and
// after them, for each deleted dir, the units the run state holds records
// of that the config does not give (a stack that left the config), with
// a stack of the recorded name.
func recordedDeleted(c *cli.Context, s *session, deleted []stacks.DeletedUnit) ([]deletedUnit, error) {
	var out []deletedUnit
	have := map[string]bool{}
	key := func(dir, ws, stack string) string { return dir + "\x00" + ws + "\x00" + stack }
	var dirs []stacks.DeletedUnit
	seen := map[string]bool{}
	for _, d := range deleted {
		if !seen[d.Dir] {
			seen[d.Dir] = true
			dirs = append(dirs, d)
		}
		if d.Stack != nil {
			have[key(d.Dir, d.Workspace, d.Stack.Name)] = true
			out = append(out, deletedUnit{DeletedUnit: d})
		}
	}
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = d.Dir
	}
	recorded, err := recordedUnits(c, s, names)
	if err != nil {
		return nil, err
	}
	for i, d := range dirs {
		for _, r := range recorded[i] {
			if have[key(d.Dir, r.Workspace, r.Stack)] {
				continue
			}
			have[key(d.Dir, r.Workspace, r.Stack)] = true
			gone := stacks.DeletedUnit{Dir: d.Dir, Workspace: r.Workspace, Stack: &stacks.Stack{Name: r.Stack}, File: d.File, Commit: d.Commit}
			out = append(out, deletedUnit{DeletedUnit: gone, leftConfig: true})
		}
	}
	return out, nil
}

// deletedRun is what runDeleted did: the report of the deleted units and
// the exit code it calls for.
type deletedRun struct {
	report *report.Report
	code   int
}

// runDeleted puts the deleted units back, plans their destroy (or, for
// apply --destroy-deleted, destroys them, asking as apply does) and takes
// their dirs away again. Each unit's report says what its state holds.
// st is the --state bucket the run opened, nil without one.
func runDeleted(ctx context.Context, c *cli.Context, s *session, st *objstore.Store, gone []deletedUnit, opt runner.Options) (*deletedRun, error) {
	stateDir := stateDirOf(c, s)
	restored, err := restoreDeleted(ctx, c, s, stateDir, gone)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := restored.Remove(); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "strata: removing the deleted dirs put back (%s): %v\n", strings.Join(restored.Names(), ", "), err)
		}
	}()
	runs, err := deletedUnitsRuns(ctx, c, s, stateDir, gone)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return &deletedRun{report: &report.Report{}}, nil
	}
	pol := cmdpolicy.Must(opt.Command)
	destroy := pol.Applies && c.Bool("destroy-deleted")
	dopt := deletedOptions(opt, destroy)
	var res *runner.Result
	for _, dr := range runs {
		r, err := executeDeleted(ctx, st, stateDir, dr.project, dr.run, dopt)
		if err != nil {
			return nil, err
		}
		res = joinResults(res, r, dopt.Command, dopt.DetailedExitCode)
	}
	removed := map[string]bool{}
	for _, d := range gone {
		if d.instanceRemoved {
			removed[d.Dir+"@"+d.Workspace+"#"+d.Stack.Name] = true
		}
	}
	return reportDeleted(c, pol, res, destroy, opt.DetailedExitCode, removed), nil
}

// joinResults adds the result of one more run of deleted units to those
// before it.
func joinResults(a, b *runner.Result, command string, detailed bool) *runner.Result {
	if a == nil {
		return b
	}
	return joinDeleted(a, &deletedRun{report: b.Report, code: b.ExitCode}, command, detailed)
}

// restoreDeleted puts the deleted units' dirs back as they were at the
// commit each is put back from (runstate.Restore).
func restoreDeleted(ctx context.Context, c *cli.Context, s *session, stateDir string, gone []deletedUnit) (*runstate.Restored, error) {
	// Opened with ctx, not through s.gitRepo: an interrupt stops the restore.
	repo, err := git.Open(ctx, s.project.Root)
	if err != nil {
		return nil, err
	}
	dirs := make([]runstate.RestoreDir, len(gone))
	for i, d := range gone {
		dirs[i] = runstate.RestoreDir{Dir: d.Dir, Commit: d.from}
	}
	return runstate.Restore(ctx, s.project.Root, stateDir, repo, dirs, func(msg string) {
		warnf(c, "%s", msg)
	})
}

// deletedUnitsRunOf is a run of deleted units and the config it is
// decided from.
type deletedUnitsRunOf struct {
	project *stacks.Project
	run     *stacks.Run
}

// deletedUnitsRuns loads the config with the deleted dirs put back and
// decides the runs of the deleted units it finds there; a deleted unit it
// does not find gets a warning. A unit whose stack left the config is
// found in the config as it was at the commit it is put back from, one
// run for each such commit; those runs go first, as nothing the config
// still holds can read from a stack it no longer has
// (docs/behaviour.md#a-stack-that-left-the-config).
func deletedUnitsRuns(ctx context.Context, c *cli.Context, s *session, stateDir string, gone []deletedUnit) ([]deletedUnitsRunOf, error) {
	var runs []deletedUnitsRunOf
	byCommit := map[string][]deletedUnit{}
	var commits []string
	var current []deletedUnit
	for _, d := range gone {
		if !d.leftConfig {
			current = append(current, d)
			continue
		}
		if _, ok := byCommit[d.from]; !ok {
			commits = append(commits, d.from)
		}
		byCommit[d.from] = append(byCommit[d.from], d)
	}
	for _, commit := range commits {
		back, err := configAt(ctx, s, stateDir, commit)
		if err != nil {
			return nil, err
		}
		if run := findDeleted(c, back, byCommit[commit]); len(run.Units) > 0 {
			runs = append(runs, deletedUnitsRunOf{back, run})
		}
	}
	if len(current) > 0 {
		back, err := stacks.Load(s.project.Root, s.cfgPath)
		if err != nil {
			return nil, fmt.Errorf("loading the config with the deleted dirs put back: %w", err)
		}
		if run := findDeleted(c, back, current); len(run.Units) > 0 {
			runs = append(runs, deletedUnitsRunOf{back, run})
		}
	}
	return runs, nil
}

// findDeleted is the run of the deleted units a config has; a deleted
// unit it does not have gets a warning.
func findDeleted(c *cli.Context, back *stacks.Project, gone []deletedUnit) *stacks.Run {
	run := &stacks.Run{}
	for _, d := range gone {
		found := false
		for _, u := range back.Units {
			if u.Dir == d.Dir && u.Workspace == d.Workspace && u.Stack.Name == d.Stack.Name {
				run.Units = append(run.Units, stacks.RunUnit{Unit: u, Why: stacks.WhyDeleted})
				found = true
			}
		}
		if !found {
			warnf(c, "%s@%s was deployed, and its dir as it was at %s is no root module of stack %s: what its state holds is not known", d.Dir, d.Workspace, git.ShortID(d.from), d.Stack.Name)
		}
	}
	return run
}

// configAt loads the project with the config file as it was at commit:
// the one that still has the stacks of units whose stack left the config.
// The file is written into the state dir's tmp/ under its own name for the
// load, and removed after.
func configAt(ctx context.Context, s *session, stateDir, commit string) (*stacks.Project, error) {
	if s.cfgPath == "" {
		return nil, fmt.Errorf("a deleted unit's stack left the config, and there is no config file to read as it was at %s", git.ShortID(commit))
	}
	rel, err := filepath.Rel(s.project.Root, s.cfgPath)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("the config %s is not inside %s, so it cannot be read as it was at %s", s.cfgPath, s.project.Root, git.ShortID(commit))
	}
	repo, err := git.Open(ctx, s.project.Root)
	if err != nil {
		return nil, err
	}
	data, err := repo.FileAt(commit, filepath.ToSlash(rel))
	if err != nil {
		return nil, fmt.Errorf("reading the config as it was at %s: %w", git.ShortID(commit), err)
	}
	tmp := filepath.Join(stateDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tmp, "config-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, filepath.Base(s.cfgPath))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	back, err := stacks.Load(s.project.Root, path)
	if err != nil {
		return nil, fmt.Errorf("loading the config as it was at %s, with the deleted dirs put back: %w", git.ShortID(commit), err)
	}
	return back, nil
}

// deletedOptions decides the deleted units' options from the run's: a
// destroy when destroy is set, else a destroy plan with -detailed-exitcode,
// with none of the run's engine arguments, drop-in files or readers.
func deletedOptions(opt runner.Options, destroy bool) runner.Options {
	dopt := opt
	dopt.EngineArgs = runner.EngineArgs{}
	dopt.External, dopt.PlanOut, dopt.ApplyFile, dopt.PlanJSON, dopt.DropIn = nil, "", "", "", false
	// Only the deleted units: nothing reads what a destroy removes.
	dopt.NoPropagate, dopt.Readers, dopt.ReaderDone, dopt.UnitDone = true, nil, nil, nil
	if destroy {
		dopt.Command = cmdpolicy.Destroy
	} else {
		dopt.Command = cmdpolicy.Plan
		dopt.EngineArgs.Plan.Destroy = true
		dopt.DetailedExitCode = true
	}
	return dopt
}

// executeDeleted runs the deleted units, with the --state bucket st
// attached when there is one: what a destroy records goes to the bucket
// too, so that the next run does not find these units deployed.
func executeDeleted(ctx context.Context, st *objstore.Store, stateDir string, back *stacks.Project, run *stacks.Run, dopt runner.Options) (*runner.Result, error) {
	stateWritten := func() error { return nil }
	if st != nil {
		var err error
		if stateWritten, err = attachState(ctx, st, stateDir, run.List(), &dopt); err != nil {
			return nil, err
		}
	}
	res, err := runner.Execute(ctx, back, run, dopt)
	if werr := stateWritten(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// reportDeleted decides what each deleted unit's report says its state
// holds, and the exit code: a deleted unit's resources kept are reported,
// never a failure.
// removed names (dir@workspace#stack) the units of instances whose key
// was removed, which say so instead of a deleted dir.
func reportDeleted(c *cli.Context, pol *cmdpolicy.Policy, res *runner.Result, destroy, detailed bool, removed map[string]bool) *deletedRun {
	out := &deletedRun{report: res.Report}
	for _, u := range res.Report.Units {
		if destroy || u.Status == report.StatusFailed {
			continue
		}
		what, how := "its dir was deleted", "strata apply --changed --destroy-deleted destroys them"
		if removed[u.ID()] {
			what, how = "its key was removed from for_each", "strata apply --destroy-deleted destroys them"
		}
		if u.Status == report.StatusBlocked {
			u.Reason = what + "; " + u.Reason
			continue
		}
		n := u.Changes.Destroy
		if n == 0 {
			u.Status, u.Reason = report.StatusNoChanges, what+"; its state holds nothing"
			continue
		}
		if !pol.Applies && c.Bool("destroy-deleted") {
			how = "apply --destroy-deleted destroys them"
		}
		u.Status = report.StatusPlanned
		u.Reason = fmt.Sprintf("%s; its state holds %s: %s", what, report.CountOf(n, "resource"), how)
		warnf(c, "%s@%s: %s", u.Dir, u.Workspace, u.Reason)
	}
	out.code = res.ExitCode
	switch {
	case destroy:
	case !pol.Applies && res.ExitCode == 2 && !detailed:
		out.code = 0
	case pol.Applies && res.ExitCode == 2:
		// Reported, not failed: keeping a deleted unit's resources is the
		// user's call.
		out.code = 0
	}
	return out
}

func destroyDeletedFlag() cli.Flag {
	return &cli.BoolFlag{Name: "destroy-deleted", Usage: "destroy, from their config at the commit they were last applied at, the units whose dir --changed finds deleted (apply; plan shows the destroy)", EnvVars: []string{"STRATA_DESTROY_DELETED"}}
}

// joinDeleted adds the deleted units' reports to the run's, with the exit
// code both call for.
func joinDeleted(res *runner.Result, d *deletedRun, command string, detailed bool) *runner.Result {
	rep := res.Report
	units := append(append([]*report.UnitReport(nil), rep.Units...), d.report.Units...)
	joined := report.NewReport(command, rep.StartedAt, time.Now(), units, detailed)
	joined.CI = rep.CI
	code := res.ExitCode
	switch {
	case code == 1 || d.code == 1:
		code = 1
	case code == 2 || d.code == 2:
		code = 2
	}
	joined.ExitCode, joined.OK = code, code == 0 || code == 2
	return &runner.Result{Report: joined, ExitCode: code}
}

// warnStillDeployed names, for a CI run, the deleted units that its jobs
// do not look at and that may still hold resources: a run on one machine
// reports and destroys them.
func warnStillDeployed(c *cli.Context, s *session) error {
	gone, err := stillDeployed(c, s, s.deleted)
	if err != nil {
		return err
	}
	for _, d := range gone {
		warnf(c, "%s@%s: its dir was deleted, and the run state says it was applied at %s and not destroyed since: its state may still hold resources; strata plan --changed --state URL reports them, and strata apply --changed --destroy-deleted --state URL destroys them", d.Dir, d.Workspace, git.ShortID(d.from))
	}
	return nil
}
