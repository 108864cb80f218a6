// Command strata runs Terraform and OpenTofu across the root modules of a
// repository, grouped into stacks, in dependency order.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/internal/spell"
	"github.com/strata-iac/strata/internal/tracing"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A strata command is short-lived, and most of what it allocates
		// (the config, the units, the graph) lives until it ends, so the
		// collector's default pace reclaims little for its work. At 200,
		// a ci run job on a 2,000-unit repository spends about a fifth
		// less CPU before its first unit, for about a fifth more memory
		// (docs/architecture.md, What a command costs).
		debug.SetGCPercent(200)
	}
	// Off unless an exporter is set (docs/behaviour.md#traces).
	ctx, traces := tracing.Start(context.Background(), strataVersion(), os.Stderr)
	code := runContext(ctx, os.Args, os.Stdout, os.Stderr)
	traces.Shutdown()
	os.Exit(code)
}

// engineArgsKey is where the engine arguments split off the command line
// wait in the app's metadata.
const engineArgsKey = "engineArgs"

// exitError carries an exit code without printing anything more.
type exitError struct {
	code int
	// configErrors and configWarnings count a config's diagnostics, already
	// printed, when the config stopped the command.
	configErrors, configWarnings int
	// why is what the report says when the command stopped early.
	why string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run is main without the process: tests call it in-process.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext runs a command as the span of the command
// (docs/behaviour.md#traces).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	ctx, span := tracing.Span(ctx, commandSpanName(args))
	defer func() { endCommandSpan(span, code) }()
	return runApp(ctx, args, stdout, stderr)
}

func runApp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	args, engineArgs, err := splitArgv(args)
	if err != nil {
		fmt.Fprintln(stderr, "strata:", err)
		return 1
	}
	app.Metadata = map[string]any{engineArgsKey: engineArgs, argvKey: args}
	completing := len(args) > 0 && args[len(args)-1] == "--generate-bash-completion"
	if i := commandIndex(args); i > 0 && !completing && !strataCommands[args[i]] && !engineCommands[args[i]] {
		if near := nearestCommand(args[i]); near != "" {
			fmt.Fprintf(stderr, "strata: unknown command %q; did you mean %s?\n", args[i], near)
			return 1
		}
	}
	if i := commandIndex(args); i > 0 && !ownCommand(args[i:]) {
		// Any other command is the engine's: it runs through the hidden
		// passthrough command.
		app.Metadata[passthroughKey] = args[i]
		args = append(append(append([]string(nil), args[:i]...), passthroughCommand), args[i+1:]...)
	}
	unknown := false
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown = true
		if c.Command == nil || len(c.Command.Subcommands) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "strata: unknown command %q; see strata --help\n", name)
			return
		}
		// Under a command group: suggest one of its subcommands.
		group := strings.TrimPrefix(c.Command.HelpName, c.App.Name+" ")
		full := group + " " + name
		var names []string
		for _, sc := range c.Command.Subcommands {
			names = append(names, sc.Name)
		}
		if near := spell.Nearest(name, names, 3); near != "" {
			fmt.Fprintf(c.App.ErrWriter, "strata: unknown command %q; did you mean %q?\n", full, group+" "+near)
			return
		}
		fmt.Fprintf(c.App.ErrWriter, "strata: unknown command %q; expected one of: %s\n", full, strings.Join(names, ", "))
	}
	err = app.RunContext(ctx, args)
	if err == nil {
		if unknown {
			return 1
		}
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ce cli.ExitCoder
	if errors.As(err, &ce) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(stderr, "strata:", msg)
		}
		return ce.ExitCode()
	}
	fmt.Fprintln(stderr, "strata:", err)
	return 1
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "strata",
		Usage: "run Terraform and OpenTofu across stacks of root modules, in order",
		UsageText: "strata [global options] <command> [options] [-- engine args]\n\n" +
			"   In a module dir, strata plan is terraform plan with the stack's engine,\n" +
			"   variables and workspace. At the repository root it runs every unit.",
		Version:                strataVersion(),
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideVersion:            false,
		Suggest:                true,
		EnableBashCompletion:   true,
		UseShortOptionHandling: false,
		ExitErrHandler:         func(*cli.Context, error) {},
		Flags: []cli.Flag{
			&cli.PathFlag{Name: "config", Usage: "config `FILE` (default: strata.yml or .terrateam/config.yml, found walking up)", EnvVars: []string{"STRATA_CONFIG"}},
			&cli.PathFlag{Name: "chdir", Aliases: []string{"C"}, Usage: "run as if started in `DIR`"},
			&cli.StringFlag{Name: "dest-branch", Usage: "the branch a change goes to, for dest_branch: tags (default: from the CI's pull request)", EnvVars: []string{"STRATA_DEST_BRANCH"}},
			&cli.StringFlag{Name: "source-branch", Usage: "the branch a change comes from, for source_branch: tags (default: from the CI's pull request)", EnvVars: []string{"STRATA_SOURCE_BRANCH"}},
		},
		Commands: []*cli.Command{
			checkCommand(),
			stacksCommand(),
			lsCommand(),
			graphCommand(),
			historyCommand(),
			enginesCommand(),
			versionCommand(),
			ciCommand(),
		},
	}
	app.Commands = append(app.Commands, runCommands()...)
	app.Commands = append(app.Commands, providersCommand())
	app.Commands = append(app.Commands, passthroughCmd())
	app.Commands = append(app.Commands, completionCommand())
	app.CustomAppHelpTemplate = cli.AppHelpTemplate + otherCommandsHelp()
	app.OnUsageError = usageError
	setUsageErrors(app.Commands)
	setCompletions(app.Commands)
	nameCommandSpans(app.Commands)
	return app
}

// usageError prints a bad flag as one line and the command's usage line,
// not the whole help.
func usageError(c *cli.Context, err error, _ bool) error {
	usage := "strata [global options] <command> [options] [-- engine args]"
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	if len(names) > 0 {
		usage = "strata " + strings.Join(names, " ") + " [options] " + c.Command.ArgsUsage
	}
	fmt.Fprintf(c.App.ErrWriter, "strata: %v%s\nusage: %s\n", err, flagMeant(c, err), strings.TrimSpace(usage))
	return &exitError{code: 1}
}

// flagMeant proposes the command's flag nearest to one it does not
// define: "; did you mean --parallelism?".
func flagMeant(c *cli.Context, err error) string {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	i := strings.Index(msg, undefined)
	if i < 0 {
		return ""
	}
	given := strings.TrimLeft(msg[i+len(undefined):], "-")
	var flags []cli.Flag
	if c.Command != nil && c.Command.Name != "" {
		flags = c.Command.Flags
	} else {
		flags = c.App.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	near := spell.Typo(given, names)
	if near == "" {
		return ""
	}
	dashes := "--"
	if len(near) == 1 {
		dashes = "-"
	}
	return "; did you mean " + dashes + near + "?"
}

func setUsageErrors(cmds []*cli.Command) {
	for _, cmd := range cmds {
		cmd.OnUsageError = usageError
		setUsageErrors(cmd.Subcommands)
	}
}

// engineCommands are terraform's and tofu's own commands: strata passes
// them through as they are.
var engineCommands = map[string]bool{
	"console": true, "fmt": true, "force-unlock": true, "get": true, "graph": true, "import": true,
	"login": true, "logout": true, "metadata": true, "modules": true, "providers": true, "refresh": true,
	"show": true, "state": true, "taint": true, "test": true, "untaint": true, "workspace": true,
}

// otherCommandsHelp lists, below strata's commands in its help, the
// engine's commands strata passes through, as terraform's help lists "All
// other commands" (docs/behaviour.md#passthrough).
func otherCommandsHelp() string {
	var names []string
	for name := range engineCommands {
		if !strataCommands[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return "\nALL OTHER COMMANDS (the engine's own, run in the current unit's dir with its engine, environment and workspace):\n   " +
		strings.Join(names, ", ") + "\n"
}

// nearestCommand is the strata or engine command a mistyped one is
// closest to, when it is one or two edits away.
func nearestCommand(name string) string {
	names := make([]string, 0, len(strataCommands)+len(engineCommands))
	for _, set := range []map[string]bool{strataCommands, engineCommands} {
		for n := range set {
			if len(n) >= 3 { // not the aliases h, C, …
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return spell.Nearest(name, names, 3)
}
