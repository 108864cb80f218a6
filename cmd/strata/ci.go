package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/stacks"

	"github.com/sethvargo/go-githubactions"
	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
)

// ciCommand is `strata ci`: one run sharded over many CI jobs that share
// a bucket (docs/ci.md).
func ciCommand() *cli.Command {
	return &cli.Command{
		Name:  "ci",
		Usage: "run one command as many CI jobs sharing a state bucket",
		Description: "ci start plans the run into waves and shards; each ci run job runs one\n" +
			"wave's shard; ci finish writes the report of the whole run.",
		Subcommands: []*cli.Command{ciStartCommand(), ciRunCommand(), ciFinishCommand(), ciCheckCommand(), ciUnlockCommand(), ciCommentCommand(), ciCommandCommand(), ciEmitCommand()},
	}
}

func stateFlag() cli.Flag {
	return &cli.StringFlag{Name: "state", Usage: "the state bucket `URL`: s3://bucket (?region=…, ?endpoint=…), gs://bucket, azblob://container, file:///dir or mem://", EnvVars: []string{"STRATA_STATE_URL"}}
}

// stateTimeoutFlag bounds each request to the state bucket
// (docs/ci.md#a-bucket-that-does-not-answer).
func stateTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "state-timeout", Usage: "give up on a request to the state bucket that has not answered in `DURATION` (tried 3 times; default 15s, or the URL's ?timeout=)", EnvVars: []string{"STRATA_STATE_TIMEOUT"}}
}

func runIDFlag() cli.Flag {
	return &cli.StringFlag{Name: "run", Usage: "the run `ID` ci start printed", EnvVars: []string{"STRATA_RUN"}}
}

// flagSpellings are how a missing flag is named to the user.
var flagSpellings = map[string]string{
	"run": "--run ID (or STRATA_RUN)", "wave": "--wave W", "shard": "--shard N",
}

// needFlags is the Before of a command that cannot go on without these
// flags: one line naming the missing ones, not the command's help.
func needFlags(names ...string) cli.BeforeFunc {
	return func(c *cli.Context) error {
		var missing []string
		for _, n := range names {
			if !c.IsSet(n) {
				missing = append(missing, flagSpellings[n])
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return cli.Exit(fmt.Sprintf("%s needs %s, as ci start printed them", strings.TrimPrefix(c.Command.HelpName, c.App.Name+" "), strings.Join(missing, ", ")), 1)
	}
}

// openState opens the state bucket of --state.
func openState(c *cli.Context) (*objstore.Store, error) {
	st, err := openBucket(c, c.String("state"))
	if err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	return st, nil
}

// withState runs a ci command's action with the bucket of --state open.
func withState(action func(*cli.Context, *objstore.Store) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		st, err := openState(c)
		if err != nil {
			return err
		}
		defer st.Close()
		return action(c, st)
	}
}

var ciCommands = []string{cmdpolicy.Init, cmdpolicy.Plan, cmdpolicy.Apply, cmdpolicy.Destroy, cmdpolicy.Drift, cmdpolicy.Validate}

func ciStartCommand() *cli.Command {
	return &cli.Command{
		Name:      "start",
		Usage:     "plan a run once: its units, waves and shards, written to the bucket",
		ArgsUsage: "COMMAND [selection flags] [-- engine args]",
		Flags: append(selectionFlags(),
			stateFlag(), stateTimeoutFlag(),
			runIDFlag(),
			&cli.IntFlag{Name: "shards", Value: 1, Usage: "spread each wave over at most `M` jobs (1 to 256)", EnvVars: []string{"STRATA_SHARDS"}},
			&cli.IntFlag{Name: "pr", Usage: "lock every dirspace of the run for pull request `N`", EnvVars: []string{"STRATA_PR"}},
			&cli.StringFlag{Name: "link", Usage: "`URL` of the CI run, shown to whoever finds a lock (default: from the CI service)"},
			&cli.BoolFlag{Name: "auto-approve", Usage: "apply and destroy: apply without asking (required: nobody is asked in CI)"},
			&cli.BoolFlag{Name: "no-auto-apply", Usage: "plan: do not apply auto_apply stacks"},
			requireReviewedPlanFlag(),
			&cli.BoolFlag{Name: "detailed-exitcode", Usage: "plan: ci finish exits 2 when some unit has changes (written -detailed-exitcode)"},
			parallelismFlag("each job runs"),
			&cli.BoolFlag{Name: "json", Usage: "print the run and its waves as JSON"},
			&cli.IntFlag{Name: "max-waves", Usage: "fail, before locking or writing anything, if the run needs more than `K` waves (the wave jobs of the workflow ci emit github wrote)"},
			&cli.BoolFlag{Name: "github-output", Usage: "set the GitHub Actions step outputs run, waves, has_work_i and shards_i (i < --max-waves: false and [] past the run's waves)"},
		),
		Action: ciStart,
	}
}

// ciStart plans a run once and writes it to the bucket: its units, waves
// and shards (docs/ci.md).
func ciStart(c *cli.Context) error {
	command, pol, err := ciStartCommandOf(c)
	if err != nil {
		return err
	}
	cc, err := startedByComment(c, command)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	s, err := openProject(c)
	if err != nil {
		return err
	}
	ea, err := runner.ParseEngineArgs(command, engineArgsOf(c), s.project.Root)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	s.destroying = runner.Settings{Command: command, EngineArgs: ea}.Destroying()
	if err := refuseWithDependencies(c); err != nil {
		return err
	}
	run, gates, err := selectRunAndGates(c, s, cc.query())
	if err != nil {
		return err
	}
	if disabled(c, s) {
		// The run is started with no unit, so the CI's jobs find
		// nothing to do and finish.
		run, gates = &stacks.Run{}, nil
	}
	if err := warnStillDeployed(c, s); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	set, err := settingsOf(c, command, ea)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	st, err := openState(c)
	if err != nil {
		return err
	}
	defer st.Close()
	rep := report.CIFromEnv(os.Environ())
	link := c.String("link")
	if rep != nil && link == "" {
		link = rep.RunURL
	}
	commit := checkoutCommit(c.Context, s.project.Root, rep)
	// Only apply reads it, so the variable may be set for every job.
	set.RequireReviewedPlan = pol.ReusesPlans && set.RequireReviewedPlan
	op := controls.Op(pol.Controlled)
	if cc != nil {
		if commit, err = cc.atHead(c, s); err != nil {
			return cli.Exit(err.Error(), 1)
		}
		op = cc.Op()
		set.RequireReviewedPlan = set.RequireReviewedPlan || cc.ReviewedOnly()
	}
	after := onForgeOf(s.project.Config)
	m, err := ci.Start(c.Context, st, s.project, run, ci.StartOptions{
		Run: c.String("run"), Shards: c.Int("shards"), MaxWaves: c.Int("max-waves"),
		Destroy: set.Destroying(),
		Options: set,
		Gates:   gates, PR: c.Int("pr"), Link: link, Commit: commit, Environ: os.Environ(),
		Controls:        controlsOf(c.Context, c, s, op),
		ApplyStatus:     after.status,
		Automerge:       after.merge,
		DriftIssues:     after.driftIssues,
		CommentStrategy: string(commentStrategy(s.project, run.List())),
	})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if c.Bool("github-output") {
		if err := githubOutputs(m, c.Int("max-waves")); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	}
	return printStarted(c, m)
}

// ciStartCommandOf decides the command ci start runs, from its one
// argument, and refuses one that applies without --auto-approve, and a
// --max-waves below 1.
func ciStartCommandOf(c *cli.Context) (string, *cmdpolicy.Policy, error) {
	if c.NArg() != 1 {
		return "", nil, cli.Exit("strata ci start takes one command: "+fmt.Sprint(ciCommands), 1)
	}
	command := c.Args().First()
	if !slices.Contains(ciCommands, command) {
		return "", nil, cli.Exit(fmt.Sprintf("strata ci start %s: expected one of %v", command, ciCommands), 1)
	}
	if k := c.Int("max-waves"); c.IsSet("max-waves") && k < 1 {
		return "", nil, cli.Exit(fmt.Sprintf("--max-waves %d: expected at least 1", k), 1)
	}
	pol := cmdpolicy.Must(command)
	if pol.Applies && !c.Bool("auto-approve") {
		return "", nil, cli.Exit(fmt.Sprintf("strata ci start %s needs --auto-approve: nobody can be asked in CI (review the plan of a pull request instead)", command), 1)
	}
	return command, pol, nil
}

// printStarted prints the run ci start wrote: as JSON with --json, else
// its units, waves and shards.
func printStarted(c *cli.Context, m *ci.Manifest) error {
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		return enc.Encode(struct {
			Run   string    `json:"run"`
			Waves []ci.Wave `json:"waves"`
		}{m.Run, m.Waves})
	}
	readers := 0
	for _, u := range m.Units {
		if u.Reader {
			readers++
		}
	}
	units := report.CountOf(len(m.Units)-readers, "unit")
	if readers > 0 {
		units += fmt.Sprintf(" (and %s, which join when an apply changes what they read)", report.CountOf(readers, "reader"))
	}
	fmt.Fprintf(c.App.Writer, "run %s: %s, %d waves, at most %d shards\n", m.Run, units, len(m.Waves), m.Shards)
	for _, w := range m.Waves {
		fmt.Fprintf(c.App.Writer, "  wave %d: shards %v\n", w.Wave, w.Shards)
	}
	return nil
}

// githubOutputs sets the step outputs the emitted workflow reads: run,
// waves, and for each of its k waves has_work_i and shards_i (a JSON list
// for the matrix, [] for a wave with nothing to do).
func githubOutputs(m *ci.Manifest, k int) error {
	if ciplatform.From(os.Getenv).GitHub.Output == "" {
		return errors.New("--github-output: GITHUB_OUTPUT is not set (not in GitHub Actions)")
	}
	a := githubactions.New()
	a.SetOutput("run", m.Run)
	a.SetOutput("waves", strconv.Itoa(len(m.Waves)))
	for i := 0; i < max(k, len(m.Waves)); i++ {
		shards := []int{}
		if i < len(m.Waves) {
			shards = m.Waves[i].Shards
		}
		b, _ := json.Marshal(shards)
		a.SetOutput(fmt.Sprintf("shards_%d", i), string(b))
		a.SetOutput(fmt.Sprintf("has_work_%d", i), strconv.FormatBool(len(shards) > 0))
	}
	return nil
}

func ciRunCommand() *cli.Command {
	return &cli.Command{
		Name:   "run",
		Before: needFlags("run", "wave", "shard"),
		Usage:  "run one wave's shard of a run; exits 0 unless strata itself fails (unit failures are in the run)",
		Flags: []cli.Flag{
			stateFlag(), stateTimeoutFlag(), runIDFlag(),
			&cli.IntFlag{Name: "wave", Usage: "the `W`ave to run"},
			&cli.IntFlag{Name: "shard", Usage: "the shard `N` of the wave"},
			&cli.PathFlag{Name: "state-dir", Usage: "the job's local state `DIR` (default .strata/ci/RUN/W-N at the root)"},
			&cli.DurationFlag{Name: "kill-after", Usage: "SIGKILL an interrupted engine after `D` (default: never)", EnvVars: []string{"STRATA_KILL_AFTER"}},
			&cli.BoolFlag{Name: "no-plugin-cache", Usage: "do not use strata's provider plugin cache", EnvVars: []string{"STRATA_NO_PLUGIN_CACHE"}},
		},
		Action: func(c *cli.Context) error {
			loc, err := locateProject(c)
			if err != nil {
				return err
			}
			st, err := openState(c)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx, kill, signalled := interruptible(c.Context, c.App.ErrWriter)
			o := ci.SliceOptions{
				Run: c.String("run"), Wave: c.Int("wave"), Shard: c.Int("shard"),
				Console: c.App.Writer, ErrConsole: c.App.ErrWriter, Environ: os.Environ(),
				Kill: kill, KillAfter: c.Duration("kill-after"), NoPluginCache: c.Bool("no-plugin-cache"),
				StateDir: c.Path("state-dir"), Job: ci.JobName(os.Getenv),
				Commit:            checkoutCommit(ctx, loc.root, report.CIFromEnv(os.Environ())),
				Gates:             gatesOf(ctx, c),
				MergedPullRequest: mergedPullRequestOf(ctx, c.App.ErrWriter, os.Environ()),
			}
			// The job's part of the run is read from the bucket while the
			// config is read; the project is built from the run's tree.
			fetch := ci.Fetch(ctx, st, o)
			s, err := loc.load(c, fetch.Tree)
			job, fetchErr := fetch.Wait()
			if fetchErr != nil && errors.Is(err, fetchErr) {
				// The config is fine (a config in error is reported as
				// it is, the tree never asked for): the fetch failed.
				return cli.Exit(fetchErr.Error(), 1)
			}
			if err != nil {
				return err
			}
			res, err := job.Run(ctx, st, s.project, o)
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			if sig := signalled(); sig != 0 {
				return &exitError{code: sig}
			}
			if res.Report != nil {
				fmt.Fprintln(c.App.Writer)
				res.Report.WriteTable(c.App.Writer)
			}
			if res.Done > 0 {
				fmt.Fprintf(c.App.Writer, "%s of this shard already recorded by an earlier attempt\n", report.CountOf(res.Done, "unit"))
			}
			if len(res.Held) > 0 {
				// Not this job's outcome to record: the holder's stands,
				// or a retry of this job completes what is missing.
				return cli.Exit(fmt.Sprintf("%s held by another process (the engine's state lock; a duplicate job of this shard?): this job recorded nothing for %s; the holder's outcome stands, and a retry completes what is still missing",
					report.CountOf(len(res.Held), "unit"), strings.Join(res.Held, ", ")), 1)
			}
			return nil
		},
	}
}

func ciFinishCommand() *cli.Command {
	return &cli.Command{
		Name:   "finish",
		Before: needFlags("run"),
		Usage:  "write the report and summary of a whole run; exit as a run on one machine would",
		Flags:  append([]cli.Flag{stateFlag(), stateTimeoutFlag(), runIDFlag()}, reportFlags()...),
		Action: func(c *cli.Context) error {
			started := time.Now()
			// A bucket that cannot be read still gets a report and a
			// summary, saying why, as a run on one machine that stops
			// before any unit does.
			failed := func(err error) error {
				rep := report.FailedReport("", started, time.Now(), fmt.Sprintf("run %s: %v", c.String("run"), err))
				rep.CI = report.CIFromEnv(os.Environ())
				writeReport(c, rep)
				writeSummary(c, rep)
				return cli.Exit(err.Error(), 1)
			}
			st, err := openBucket(c, c.String("state"))
			if err != nil {
				return failed(err)
			}
			defer st.Close()
			rep, m, err := ci.BuildReport(c.Context, st, c.String("run"))
			if err != nil {
				return failed(err)
			}
			rep.CI = report.CIFromEnv(os.Environ())
			pol, _ := cmdpolicy.Of(m.Command)
			onForge{status: m.ApplyStatus, merge: m.Automerge, driftIssues: m.DriftIssues}.after(c.Context, c, pol, rep)
			writeReport(c, rep)
			writeSummary(c, rep)
			rep.WriteTable(c.App.Writer)
			// The run destroyed: its engine arguments, as its jobs read them.
			ea, err := runner.ParseEngineArgs(m.Command, m.Options.EngineArgs.Given, ".")
			destroy := err == nil && runner.Settings{Command: m.Command, EngineArgs: ea}.Destroying()
			recordCIHistory(c, st, rep, m.Run, m.Commit, destroy)
			if rep.ExitCode != 0 {
				return &exitError{code: rep.ExitCode}
			}
			return nil
		},
	}
}

func ciUnlockCommand() *cli.Command {
	return &cli.Command{
		Name:  "unlock",
		Usage: "release every dirspace a pull request locked (on merge or close)",
		Flags: []cli.Flag{
			stateFlag(), stateTimeoutFlag(),
			&cli.IntFlag{Name: "pr", Usage: "the pull request `N`", Required: true, EnvVars: []string{"STRATA_PR"}},
		},
		Action: withState(func(c *cli.Context, st *objstore.Store) error {
			freed, err := ci.Unlock(c.Context, st, c.Int("pr"))
			for _, l := range freed {
				fmt.Fprintf(c.App.Writer, "unlocked %s\n", l.Unit)
			}
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			fmt.Fprintf(c.App.Writer, "PR #%d: %s unlocked\n", c.Int("pr"), report.CountOf(len(freed), "dirspace"))
			return nil
		}),
	}
}

func ciCheckCommand() *cli.Command {
	return &cli.Command{
		Name:   "check",
		Before: needFlags("run"),
		Usage:  "verify a finished run: order, one apply each, skips, applied digests",
		Flags:  []cli.Flag{stateFlag(), stateTimeoutFlag(), runIDFlag()},
		Action: withState(func(c *cli.Context, st *objstore.Store) error {
			bad, err := ci.Check(c.Context, st, c.String("run"))
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			for _, b := range bad {
				fmt.Fprintln(c.App.Writer, b)
			}
			if len(bad) > 0 {
				return cli.Exit(fmt.Sprintf("run %s: %d violations", c.String("run"), len(bad)), 1)
			}
			fmt.Fprintf(c.App.Writer, "run %s: every invariant holds\n", c.String("run"))
			return nil
		}),
	}
}

// checkoutCommit is the commit a job works on: the checkout's HEAD, else
// the CI's own (the commit the pipeline runs for, from rep); "" when
// neither says. The checkout decides: a job may check out another commit
// than its event's (a comment command's pull request head, the head
// under checkout-strategy checkout).
func checkoutCommit(ctx context.Context, root string, rep *report.CIReport) string {
	if commit, err := git.Head(ctx, root); err == nil && commit != "" {
		return commit
	}
	if rep != nil {
		return rep.Commit
	}
	return ""
}
