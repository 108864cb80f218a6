package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/controls"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// runFlags are the flags of every orchestrating command (docs/behaviour.md#commands).
func runFlags() []cli.Flag {
	return append(append(selectionFlags(), reportFlags()...),
		parallelismFlag("run", "STRATA_PARALLELISM"),
		&cli.BoolFlag{Name: "fail-fast", Usage: "start nothing new after the first failure", EnvVars: []string{"STRATA_FAIL_FAST"}},
		&cli.BoolFlag{Name: "no-hooks", Usage: "run none of the config's pre and post hooks (one that needs what only CI has); workflow steps still run", EnvVars: []string{"STRATA_NO_HOOKS"}},
		&cli.StringFlag{Name: "output", Value: "auto", Usage: "how the engine's output is shown: `auto` (at a terminal, each unit's output whole when its job ends, below a live status of the run, a successful init folded to one line and a plan to its change list; elsewhere each step's output as one block), full (auto with every line of init and plan) or stream (every line as it comes, its unit before it)", EnvVars: []string{"STRATA_OUTPUT"}},
		&cli.BoolFlag{Name: "no-color", Usage: "no colour at a terminal, in strata's output or the engine's, as NO_COLOR does", EnvVars: []string{"STRATA_NO_COLOR"}},
		&cli.BoolFlag{Name: "auto-approve", Usage: "apply without asking (written -auto-approve, as terraform does)"},
		&cli.BoolFlag{Name: "detailed-exitcode", Usage: "plan: exit 2 when some unit has changes (written -detailed-exitcode)"},
		&cli.PathFlag{Name: "state-dir", Usage: "run state `DIR` (default .strata at the root)", EnvVars: []string{"STRATA_STATE_DIR"}},
		&cli.StringFlag{Name: "state", Usage: "keep run state and saved plans in the bucket at `URL` too (s3://…, gs://…, azblob://…, file:///dir), shared with other machines", EnvVars: []string{"STRATA_STATE_URL"}},
		stateTimeoutFlag(),
		&cli.DurationFlag{Name: "lock-timeout", Usage: "wait up to `D` for the repository apply lock", EnvVars: []string{"STRATA_LOCK_TIMEOUT"}},
		&cli.PathFlag{Name: "resume", Usage: "re-run the units `REPORT` left failed, skipped, blocked or cancelled"},
		&cli.DurationFlag{Name: "kill-after", Usage: "SIGKILL an interrupted engine after `D` (default: never)", EnvVars: []string{"STRATA_KILL_AFTER"}},
		&cli.BoolFlag{Name: "no-plugin-cache", Usage: "do not use strata's provider plugin cache", EnvVars: []string{"STRATA_NO_PLUGIN_CACHE"}},
		&cli.BoolFlag{Name: "no-auto-apply", Usage: "plan: do not apply auto_apply stacks", EnvVars: []string{"STRATA_NO_AUTO_APPLY"}},
		&cli.PathFlag{Name: "plan-json", Usage: "plan, apply, drift: write show -json of every saved plan under `DIR`", EnvVars: []string{"STRATA_PLAN_JSON"}},
		&cli.BoolFlag{Name: "comment", Usage: "in GitHub Actions or GitLab CI, post the run's summary as strata's one comment on the pull request it runs for, updated in place", EnvVars: []string{"STRATA_COMMENT"}},
	)
}

// requireReviewedPlanFlag is apply's --require-reviewed-plan (and ci
// start's): apply no changes but those of a reviewed saved plan
// (docs/behaviour.md#saved-plans).
func requireReviewedPlanFlag() cli.Flag {
	return &cli.BoolFlag{Name: "require-reviewed-plan", Usage: "apply: apply only the changes of a saved plan made by plan; a unit whose new plan differs, or that has none, fails and applies nothing", EnvVars: []string{"STRATA_REQUIRE_REVIEWED_PLAN"}}
}

// reportFlags write a command's report and summary (writeReport,
// writeSummary).
func reportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "report", Usage: "write the JSON report to `FILE`", EnvVars: []string{"STRATA_REPORT"}},
		&cli.PathFlag{Name: "summary", Usage: "write the Markdown summary to `FILE` (also to $GITHUB_STEP_SUMMARY when set)", EnvVars: []string{"STRATA_SUMMARY"}},
	}
}

// runCommand builds one engine command: init, plan, apply, destroy,
// drift, validate, output.
func runCommand(name, usage string, extra ...cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "[-- engine args]",
		Flags:     append(runFlags(), extra...),
		Action: func(c *cli.Context) error {
			return runEngineCommand(c, name)
		},
	}
}

func runCommands() []*cli.Command {
	return []*cli.Command{
		runCommand(cmdpolicy.Init, "init every unit in the run"),
		runCommand(cmdpolicy.Plan, "plan every unit whose plan gates are open; apply auto_apply stacks", destroyDeletedFlag()),
		runCommand(cmdpolicy.Apply, "plan, approve and apply every unit, in order, to the end of the DAG", destroyDeletedFlag(), requireReviewedPlanFlag()),
		runCommand(cmdpolicy.Destroy, "plan -destroy and apply, in destroy order"),
		runCommand(cmdpolicy.Drift, "plan every unit at once, ignoring gates; exit 2 when anything drifted"),
		runCommand(cmdpolicy.Validate, "validate every unit"),
		runCommand(cmdpolicy.Output, "print every unit's outputs (-json: one JSON object by unit)",
			&cli.BoolFlag{Name: "show-sensitive", Usage: "print sensitive output values"}),
	}
}

// runEngineCommand runs one engine command. When it stops before any
// unit ran (a config error, the apply lock held, an engine that cannot be
// had), --report and --summary still get written, saying why.
func runEngineCommand(c *cli.Context, command string) (err error) {
	started := time.Now()
	reported := false
	defer func() {
		if err == nil || reported {
			return
		}
		why := err.Error()
		var ee *exitError
		if errors.As(err, &ee) && ee.why != "" {
			why = ee.why
		}
		rep := report.FailedReport(command, started, time.Now(), why)
		writeReport(c, rep)
		writeSummary(c, rep)
	}()
	return runEngine(c, command, &reported)
}

// runEngine runs one engine command, step by step: the command line, the
// run, the runner's options, the run with the bucket attached, and what
// it reports.
func runEngine(c *cli.Context, command string, reported *bool) error {
	s, err := openProject(c)
	if err != nil {
		return err
	}
	if err := noConfiguration(s); err != nil {
		return err
	}
	if disabled(c, s) {
		*reported = true
		return nil
	}
	pol := cmdpolicy.Must(command)
	cl, err := readCommandLine(c, command, pol)
	if err != nil {
		return err
	}
	s.destroying = runner.Settings{Command: command, EngineArgs: cl.ea}.Destroying()
	sel, err := selectEngineRun(c, s, pol)
	if err != nil {
		return err
	}
	if len(sel.run.Units) == 0 && len(sel.gone) == 0 {
		if err := moduleDir(s); err != nil {
			return err
		}
		fmt.Fprintln(c.App.Writer, "no units selected")
		return nil
	}
	if pol.PrintsOutputs && sel.dropIn() {
		// In a unit's dir, output is terraform's own: -raw, -json and a
		// name print exactly what terraform output prints.
		*reported = true
		return dropInOutput(c, s, sel.run.Units[0].Unit, cl.rawEngine)
	}
	if err := cl.checkDropIn(sel); err != nil {
		return err
	}
	if pol.Recorded {
		// The history names the commit the run ran on: git is asked while
		// the engines run, not after them (gitRepo keeps the answer).
		go s.gitRepo(c)
	}
	ctx, kill, signalled := interruptible(c.Context, c.App.ErrWriter)
	opt, err := engineOptions(c, command, cl, sel, kill)
	if err != nil {
		return err
	}
	// What the run's applies deployed and the history after it name one
	// commit, from one look at the work tree.
	opt.Repo = func() (*git.Repo, error) { return s.gitRepo(c) }
	opt.Controls = controlsOf(ctx, c, s, controls.Op(pol.Controlled))
	opt.Gates = gatesOf(ctx, c)
	res, werr, err := executeEngine(ctx, c, s, sel, &opt)
	if err != nil {
		return err
	}
	if !opt.DropIn {
		onForgeOf(s.project.Config).after(ctx, c, pol, res.Report)
	}
	if c.Bool("comment") && !opt.DropIn {
		commentOn(ctx, c, res.Report, commentStrategy(s.project, sel.run.List()))
	}
	*reported = true
	if pol.Plans {
		recordLastRun(c, s, res.Report)
	}
	err = finishEngine(c, pol, res, werr, signalled, cl.ea, opt.DropIn)
	// After finishEngine, which settles the exit code.
	recordHistory(c, s, res.Report)
	return err
}

// commandLine is what an engine command's command line asks beyond
// strata's flags.
type commandLine struct {
	rawEngine          []string // the engine arguments, plan's -out taken off
	ea                 runner.EngineArgs
	planOut, applyFile string
}

// readCommandLine decides the engine arguments, plan's -out FILE and
// apply's FILE, and refuses an argument the command does not take and
// flags that cannot go together.
func readCommandLine(c *cli.Context, command string, pol *cmdpolicy.Policy) (*commandLine, error) {
	start, _ := os.Getwd()
	if d := c.Path("chdir"); d != "" {
		start, _ = filepath.Abs(d)
	}
	cl := &commandLine{rawEngine: engineArgsOf(c)}
	if pol.SavesPlanFile {
		cl.rawEngine, cl.planOut = extractOut(cl.rawEngine, start)
	}
	args := c.Args().Slice()
	switch {
	case pol.AppliesPlanFile && len(args) == 1:
		cl.applyFile = args[0]
	case len(args) > 0:
		return nil, cli.Exit(fmt.Sprintf("strata %s takes no argument %q; engine arguments go after --", command, args[0]), 1)
	}
	ea, err := runner.ParseEngineArgs(command, cl.rawEngine, start)
	if err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	cl.ea = ea
	if err := refuseWithDependencies(c); err != nil {
		return nil, err
	}
	if c.Bool("require-reviewed-plan") && c.Bool("destroy-deleted") {
		// A destroy always plans again: nothing it destroys was reviewed.
		return nil, cli.Exit("--require-reviewed-plan cannot go with --destroy-deleted: a destroy plans again, so nobody reviewed what it destroys", 1)
	}
	return cl, nil
}

// checkDropIn refuses plan -out FILE and apply FILE anywhere but in one
// unit's dir.
func (cl *commandLine) checkDropIn(sel *selectedRun) error {
	if (cl.planOut == "" && cl.applyFile == "") || sel.dropIn() {
		return nil
	}
	what := "plan -out"
	if cl.applyFile != "" {
		what = "apply FILE"
	}
	return cli.Exit(fmt.Sprintf("%s works in one unit's dir (drop-in); this run has %s", what, report.CountOf(len(sel.run.Units), "unit")), 1)
}

// selectedRun is the units an engine command runs.
type selectedRun struct {
	run      *stacks.Run
	external []*stacks.Unit
	// gone are the deleted units that may still hold resources.
	gone []deletedUnit
}

// dropIn reports whether the run is the one unit of the dir strata was
// started in.
func (sel *selectedRun) dropIn() bool { return sel.run.DropIn && len(sel.run.Units) == 1 }

// selectEngineRun decides which units run: those --resume's report left
// undone, else the selection; and, when the command looks at them, the
// deleted units whose run state says they may still hold resources.
func selectEngineRun(c *cli.Context, s *session, pol *cmdpolicy.Policy) (*selectedRun, error) {
	sel := &selectedRun{}
	var err error
	if f := c.Path("resume"); f != "" {
		sel.run, sel.external, err = resumeRun(c, s, f)
	} else {
		sel.run, sel.external, err = selectRunAndGates(c, s, "")
	}
	if err != nil {
		return nil, err
	}
	if pol.HandlesDeleted && len(s.deleted) > 0 {
		if sel.gone, err = stillDeployed(c, s, s.deleted); err != nil {
			return nil, cli.Exit(err.Error(), 1)
		}
	}
	if pol.HandlesDeleted && !sel.dropIn() && c.Path("resume") == "" {
		removed, err := removedInstances(c, s, sel.run)
		if err == nil {
			removed, err = keepDeployed(c, s, removed)
		}
		if err != nil {
			return nil, cli.Exit(err.Error(), 1)
		}
		sel.gone = append(sel.gone, removed...)
	}
	return sel, nil
}

// engineOptions decides the runner's options from the flags, the command
// line and the run: the defaults strata fills in, whether a terminal is
// there to ask for approval, and --plan-json's dir.
func engineOptions(c *cli.Context, command string, cl *commandLine, sel *selectedRun, kill <-chan struct{}) (runner.Options, error) {
	terminal := isTerminal(os.Stdout) && isTerminal(os.Stdin)
	set, err := settingsOf(c, command, cl.ea)
	if err != nil {
		return runner.Options{}, err
	}
	set.PlanOut, set.ApplyFile = cl.planOut, cl.applyFile
	console := c.App.Writer
	if cmdpolicy.Must(command).PrintsOutputs && !sel.dropIn() {
		// stdout holds the outputs alone (docs/behaviour.md#commands).
		console = c.App.ErrWriter
	}
	mode := c.String("output")
	if mode != "auto" && mode != "stream" && mode != "full" {
		return runner.Options{}, fmt.Errorf("--output %q: expected auto, full or stream", mode)
	}
	opt := runner.Options{
		Settings: set,
		Output: runner.Output{
			Console:    console,
			ErrConsole: c.App.ErrWriter,
			Terminal:   terminal && console == os.Stdout,
			Colour:     colourFor(c, console) && !cl.ea.NoColor,
			DropIn:     sel.dropIn(),
			Stream:     mode == "stream",
			Full:       mode == "full",
		},
		Hooks: runner.Hooks{
			Kill:              kill,
			MergedPullRequest: mergedPullRequestOf(c.Context, c.App.ErrWriter, os.Environ()),
		},
		Extra: runner.Extra{
			External: sel.external,
		},
	}
	if d := c.Path("plan-json"); d != "" {
		var err error
		if opt.PlanJSON, err = filepath.Abs(d); err != nil {
			return opt, fmt.Errorf("--plan-json %s: %w", d, err)
		}
	}
	switch {
	case opt.Terminal && opt.DropIn:
		opt.Approve = dropInApprover(c.App.Writer, os.Stdin, opt.Settings.Destroying())
	case opt.Terminal:
		opt.Approve = terminalApprover(c.App.Writer, os.Stdin)
	}
	return opt, nil
}

// executeEngine runs the selected units, then the deleted ones, with the
// --state bucket attached when there is one; werr says what the bucket
// missed of the run's state.
func executeEngine(ctx context.Context, c *cli.Context, s *session, sel *selectedRun, opt *runner.Options) (res *runner.Result, werr, err error) {
	stateWritten := func() error { return nil }
	var st *objstore.Store
	if url := c.String("state"); url != "" {
		if st, err = openBucket(c, url); err != nil {
			return nil, nil, cli.Exit(err.Error(), 1)
		}
		defer st.Close()
		if stateWritten, err = attachState(ctx, st, stateDirOf(c, s), mirroredUnits(s, sel, *opt), opt); err != nil {
			return nil, nil, cli.Exit(err.Error(), 1)
		}
	}
	if len(sel.run.Units) > 0 {
		res, err = runner.Execute(ctx, s.project, sel.run, *opt)
	} else {
		// Only deleted units to look at.
		res = &runner.Result{Report: report.NewReport(opt.Command, time.Now(), time.Now(), nil, false)}
	}
	werr = stateWritten()
	if err != nil {
		return nil, nil, cli.Exit(err.Error(), 1)
	}
	if len(sel.gone) > 0 && ctx.Err() == nil {
		d, err := runDeleted(ctx, c, s, st, sel.gone, *opt)
		if err != nil {
			return nil, nil, cli.Exit(err.Error(), 1)
		}
		res = joinDeleted(res, d, opt.Command, opt.DetailedExitCode)
	}
	return res, werr, nil
}

// mirroredUnits are the units whose state the bucket mirrors: the run's,
// the external units it reads, and the consumers it may pull in.
func mirroredUnits(s *session, sel *selectedRun, opt runner.Options) []*stacks.Unit {
	units := append([]*stacks.Unit(nil), sel.external...)
	for _, ru := range sel.run.Units {
		units = append(units, ru.Unit)
	}
	// A consumer the run may pull in has its state mirrored too.
	return append(units, runner.Readers(s.project, sel.run, opt)...)
}

// finishEngine decides the exit code (a bucket that missed some state,
// or an interrupt, fails the run) and writes the report, the summary, the
// outputs and the final table.
func finishEngine(c *cli.Context, pol *cmdpolicy.Policy, res *runner.Result, werr error, signalled func() int, ea runner.EngineArgs, dropIn bool) error {
	rep := res.Report
	code := res.ExitCode
	if werr != nil {
		// The bucket missed some of the run's state: never silently.
		fmt.Fprintf(c.App.ErrWriter, "strata: %v\n", werr)
		code = 1
		rep.ExitCode, rep.OK = code, false
	}
	if sig := signalled(); sig != 0 {
		code = sig
		rep.ExitCode, rep.OK = code, false
	}
	writeReport(c, rep)
	writeSummary(c, rep)
	table := c.App.Writer
	var outErr error
	if pol.PrintsOutputs {
		table = c.App.ErrWriter
		outErr = printOutputs(c.App.Writer, rep, ea.Command, dropIn)
	}
	if !dropIn {
		fmt.Fprintln(table)
		if colourFor(c, table) {
			rep.WriteColourTable(table)
		} else {
			rep.WriteTable(table)
		}
		console.WriteWarningsClose(table, res.Warnings, warningsPrinted(c))
	}
	if outErr != nil && code == 0 {
		// Said last, where it is seen.
		fmt.Fprintf(c.App.ErrWriter, "strata: %v\n", outErr)
		code = 1
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// interruptible cancels ctx on the first SIGINT or SIGTERM (running engines
// get one SIGINT and are waited for) and closes kill on the second. The
// returned function gives the exit code the first signal calls for.
func interruptible(parent context.Context, w io.Writer) (context.Context, <-chan struct{}, func() int) {
	ctx, cancel := context.WithCancel(parent)
	kill := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var code int
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := <-sigs
		if s == syscall.SIGTERM {
			code = 143
		} else {
			code = 130
		}
		fmt.Fprintln(w, "strata: interrupted; waiting for running engines to stop (interrupt again to kill them)")
		cancel()
		<-sigs
		close(kill)
	}()
	return ctx, kill, func() int {
		select {
		case <-ctx.Done():
			if parent.Err() == nil {
				return code
			}
		default:
		}
		return 0
	}
}

// isTerminal reports whether f is a terminal. A character device is not
// enough: /dev/null is one, and nobody answers there.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// terminalApprover asks `Apply N units? [yes/all/no]` about a wave of plans.
func terminalApprover(w io.Writer, in io.Reader) func([]*report.UnitReport) (runner.Answer, error) {
	r := bufio.NewReader(in)
	return func(units []*report.UnitReport) (runner.Answer, error) {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, u := range units {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", u.Name(), strings.Join(u.StackPath, "/"), u.Changes)
		}
		tw.Flush()
		for {
			fmt.Fprintf(w, "Apply %s? [yes/all/no] ", report.CountOf(len(units), "unit"))
			line, err := r.ReadString('\n')
			switch strings.TrimSpace(strings.ToLower(line)) {
			case "yes", "y":
				return runner.AnswerYes, nil
			case "all", "a":
				return runner.AnswerAll, nil
			case "no", "n":
				return runner.AnswerNo, nil
			}
			if err != nil {
				return runner.AnswerNo, err
			}
		}
	}
}

// dropInApprover asks about the one unit of a drop-in apply or destroy as
// terraform asks: its question, only "yes" approving, and its words when
// anything else is answered; the command then exits 1, as terraform's
// does (docs/behaviour.md#scope).
func dropInApprover(w io.Writer, in io.Reader, destroying bool) func([]*report.UnitReport) (runner.Answer, error) {
	r := bufio.NewReader(in)
	return func(units []*report.UnitReport) (runner.Answer, error) {
		engine := "Terraform"
		if len(units) > 0 && units[0].Engine.Name == "tofu" {
			engine = "OpenTofu"
		}
		question := "Do you want to perform these actions?\n  " + engine + " will perform the actions described above.\n  Only 'yes' will be accepted to approve."
		cancelled := "Apply cancelled."
		if destroying {
			question = "Do you really want to destroy all resources?\n  " + engine + " will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm."
			cancelled = "Destroy cancelled."
		}
		fmt.Fprintf(w, "\n%s\n\n  Enter a value: ", question)
		line, err := r.ReadString('\n')
		if strings.TrimSpace(line) == "yes" {
			fmt.Fprintln(w)
			return runner.AnswerYes, nil
		}
		fmt.Fprintf(w, "\n%s\n", cancelled)
		if err == io.EOF {
			err = nil
		}
		return runner.AnswerNo, err
	}
}

// recordLastRun keeps the run's units as their last run in the state dir,
// for `graph --format html` (docs/behaviour.md#run-state); a failure to
// write it is printed, and the run's exit code stands: the record only
// feeds the page.
func recordLastRun(c *cli.Context, s *session, rep *report.Report) {
	sd, err := runstate.OpenStateDir(stateDirOf(c, s))
	if err == nil {
		sd.Warn = func(msg string) { fmt.Fprintf(c.App.ErrWriter, "strata: %s\n", msg) }
		err = sd.RecordLastRun(rep)
	}
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "strata: %v\n", err)
	}
}

func writeReport(c *cli.Context, rep *report.Report) {
	if f := c.Path("report"); f != "" {
		if err := rep.WriteJSON(f); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "strata: report: %v\n", err)
		}
	}
}

// writeSummary writes the Markdown summary, 0600 like the plans it quotes,
// and appends it to $GITHUB_STEP_SUMMARY when set.
func writeSummary(c *cli.Context, rep *report.Report) {
	md := rep.Markdown()
	if f := c.Path("summary"); f != "" {
		if err := atomicfile.Write(f, []byte(md), 0o600); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "strata: summary: %v\n", err)
		}
	}
	if f := ciplatform.From(os.Getenv).GitHub.StepSummary; f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = fh.WriteString(md)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "strata: step summary: %v\n", err)
		}
	}
}

// dropInOutput runs terraform's output in a unit's dir with the unit's
// engine, environment and workspace.
func dropInOutput(c *cli.Context, s *session, u *stacks.Unit, args []string) error {
	code, err := runner.Passthrough(c.Context, s.project, u, filepath.Join(s.project.Root, filepath.FromSlash(u.Dir)), cmdpolicy.Output, args, runner.PassthroughOptions{
		Stdin: os.Stdin, Stdout: c.App.Writer, Stderr: c.App.ErrWriter, StateDir: c.Path("state-dir"),
	})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// engineArgsOf returns the engine arguments split off the command line
// before flag parsing.
func engineArgsOf(c *cli.Context) []string {
	if a, ok := c.App.Metadata[engineArgsKey].([]string); ok {
		return a
	}
	return nil
}

// extractOut takes plan's -out=FILE (or -out FILE) off the engine
// arguments: in drop-in, strata also writes its saved plan there (docs/behaviour.md#commands).
func extractOut(args []string, cwd string) (rest []string, out string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-out="):
			out = strings.TrimPrefix(a, "-out=")
		case a == "-out" && i+1 < len(args):
			i++
			out = args[i]
		default:
			rest = append(rest, a)
			continue
		}
	}
	if out != "" && !filepath.IsAbs(out) {
		out = filepath.Join(cwd, out)
	}
	return rest, out
}

// resumeRun re-runs what a report left failed, skipped, blocked or
// cancelled (runner.ResumeRun); units the repository no longer has get a
// warning.
func resumeRun(c *cli.Context, s *session, path string) (*stacks.Run, []*stacks.Unit, error) {
	rep, err := report.ReadReport(path)
	if err != nil {
		return nil, nil, cli.Exit(err.Error(), 1)
	}
	run, external, gone := runner.ResumeRun(s.project, rep)
	for _, name := range gone {
		warnf(c, "--resume: %s is no longer a unit of this repository", name)
	}
	return run, external, nil
}

// colourFor says output to w is coloured, strata's own and the engine's:
// w is a terminal, and neither --no-color nor NO_COLOR
// (https://no-color.org) says no (docs/behaviour.md#colour).
func colourFor(c *cli.Context, w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f) && !c.Bool("no-color") && os.Getenv("NO_COLOR") == ""
}
