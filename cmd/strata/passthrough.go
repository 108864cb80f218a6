package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// passthroughCommand is the hidden command any engine command strata does
// not know becomes: `strata state list` runs `terraform state list` in the
// current unit's dir with its engine, environment and workspace (docs/behaviour.md#commands).
const passthroughCommand = "engine-passthrough"

// passthroughKey is where the engine command's name waits in the app's
// metadata.
const passthroughKey = "passthrough"

func passthroughCmd() *cli.Command {
	return &cli.Command{
		Name:   passthroughCommand,
		Hidden: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "workspace", Usage: "the unit of workspace `W`"},
			&cli.StringSliceFlag{Name: "stack", Usage: "the unit of stack `NAME`"},
			&cli.PathFlag{Name: "state-dir", EnvVars: []string{"STRATA_STATE_DIR"}},
			&cli.BoolFlag{Name: "no-color"},
		},
		Action: func(c *cli.Context) error {
			command, _ := c.App.Metadata[passthroughKey].(string)
			if s := outsideSession(c, command); s != nil {
				return passthroughIn(c, s, command, c.App.Writer)
			}
			s, err := openProject(c)
			if err != nil {
				return err
			}
			return passthroughIn(c, s, command, c.App.Writer)
		},
	}
}

// outsideSession is the session of a command that may run outside any
// unit (fmt, version, providers) started in a dir with no module file,
// which no unit's dir is: the config alone, for its top-level engine, and
// nothing of the repository read. nil anywhere else, and when the config
// does not load cleanly (the whole load then says why).
func outsideSession(c *cli.Context, command string) *session {
	if !runner.PassthroughAllowedOutside(command) {
		return nil
	}
	loc, err := locateProject(c)
	if err != nil || stacks.HoldsTerraform(loc.start) {
		return nil
	}
	cfg, diags, err := config.Load(loc.cfgPath, filepath.Base(loc.cfgPath))
	if err != nil || len(diags.Errors()) > 0 {
		return nil
	}
	return &session{project: &stacks.Project{Root: loc.root, Config: cfg}, cfgPath: loc.cfgPath, cwd: filepath.ToSlash(loc.rel())}
}

// engineCommandGroups are the engine commands whose first argument names a
// command of the group, which takes the group's flags.
var engineCommandGroups = map[string]bool{"state": true, "workspace": true, "providers": true, "metadata": true}

// withoutColour adds -no-color to a passthrough's arguments, after the
// command of a group (`state list -no-color`): the group itself takes no
// flag (docs/behaviour.md#colour).
func withoutColour(command string, args []string) []string {
	if slices.Contains(args, "-no-color") {
		return args
	}
	at := 0
	if engineCommandGroups[command] && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		at = 1
	}
	return slices.Insert(slices.Clone(args), at, "-no-color")
}

// passthroughIn runs an engine command in the unit of the current dir
// (passthroughUnit), its output on stdout, and exits with the engine's
// code.
func passthroughIn(c *cli.Context, s *session, command string, stdout io.Writer) error {
	unit, err := passthroughUnit(s, c.String("workspace"), c.StringSlice("stack"), command)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	args := engineArgsOf(c)
	if !colourFor(c, stdout) {
		args = withoutColour(command, args)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	dir := s.project.Root
	if s.cwd != "." {
		dir += "/" + s.cwd
	}
	code, err := runner.Passthrough(c.Context, s.project, unit, dir, command, args, runner.PassthroughOptions{
		Stdin: os.Stdin, Stdout: stdout, Stderr: c.App.ErrWriter,
		StateDir: c.Path("state-dir"), Signals: sigs,
	})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// passthroughUnit picks the unit of the current dir: --workspace (or
// $TF_WORKSPACE, or the workspace terraform has selected there) and
// --stack choose among several; outside any unit's dir only fmt, version
// and providers run, with the top-level engine.
func passthroughUnit(s *session, workspace string, stackNames []string, command string) (*stacks.Unit, error) {
	if workspace == "" {
		workspace = cmp.Or(os.Getenv("TF_WORKSPACE"), s.selectedWorkspace)
	}
	var cands []*stacks.Unit
	for _, u := range s.project.UnitsIn(s.cwd) {
		if workspace != "" && u.Workspace != workspace {
			continue
		}
		if len(stackNames) > 0 && !contains(stackNames, u.Stack.Name) {
			continue
		}
		cands = append(cands, u)
	}
	switch {
	case len(cands) == 1:
		return cands[0], nil
	case len(cands) > 1:
		names := make([]string, len(cands))
		for i, u := range cands {
			names[i] = u.Name()
		}
		return nil, fmt.Errorf("strata %s runs in one unit and %s holds %d: %s; pick one with --workspace or --stack", command, s.cwd, len(cands), strings.Join(names, ", "))
	case len(s.project.UnitsIn(s.cwd)) > 0:
		return nil, fmt.Errorf("strata %s: no unit of %s matches --workspace/--stack", command, s.cwd)
	case runner.PassthroughAllowedOutside(command):
		return nil, nil
	}
	return nil, fmt.Errorf("strata %s runs the engine in a unit's dir, and %s holds none; cd into a root module (strata ls lists them)", command, s.cwd)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
