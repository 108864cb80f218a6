package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// argvCases are command lines and how splitArgv splits them, or the
// error it returns.
var argvCases = []struct {
	name    string
	args    []string
	strata  []string
	engine  []string
	wantErr string
}{
	{
		name:   "engine flags typed directly and after --",
		args:   []string{"strata", "-C", "dir", "plan", "-var", "x=1", "--parallelism", "2", "--", "-refresh=false"},
		strata: []string{"strata", "-C", "dir", "plan", "--parallelism", "2"},
		engine: []string{"-var", "x=1", "-refresh=false"},
	},
	{
		name:   "providers lock is strata's, its flags and addresses the engine's",
		args:   []string{"strata", "providers", "lock", "-platform", "linux_amd64", "hashicorp/time", "--all"},
		strata: []string{"strata", "providers", "lock", "--all"},
		engine: []string{"-platform", "linux_amd64", "hashicorp/time"},
	},
	{
		name:   "other providers commands are the engine's",
		args:   []string{"strata", "providers", "schema", "-json"},
		strata: []string{"strata", "providers"},
		engine: []string{"schema", "-json"},
	},
	{
		name:   "short worker count",
		args:   []string{"strata", "plan", "-j", "2"},
		strata: []string{"strata", "plan", "-j", "2"},
	},
	{
		name:   "short worker count attached",
		args:   []string{"strata", "apply", "-j2", "-j=3"},
		strata: []string{"strata", "apply", "-j=2", "-j=3"},
	},
	{
		name:   "long flag with equals",
		args:   []string{"strata", "plan", "--parallelism=2", "--report=r.json", "-parallelism=5"},
		strata: []string{"strata", "plan", "--parallelism=2", "--report=r.json"},
		engine: []string{"-parallelism=5"},
	},
	{
		name:   "repeated strata flag",
		args:   []string{"strata", "plan", "--stack", "a", "--stack", "b"},
		strata: []string{"strata", "plan", "--stack", "a", "--stack", "b"},
	},
	{
		name:   "engine flag in both forms",
		args:   []string{"strata", "plan", "-target=a", "-target", "b"},
		strata: []string{"strata", "plan"},
		engine: []string{"-target=a", "-target", "b"},
	},
	{
		name:   "bare engine boolean leaves the next argument",
		args:   []string{"strata", "plan", "-refresh", "--all"},
		strata: []string{"strata", "plan", "--all"},
		engine: []string{"-refresh"},
	},
	{
		name:   "ls query",
		args:   []string{"strata", "ls", "dir:x"},
		strata: []string{"strata", "ls", "dir:x"},
	},
	{
		name:   "positional arguments go after flags",
		args:   []string{"strata", "ls", "dir:x", "and", "prod", "--json"},
		strata: []string{"strata", "ls", "--json", "dir:x", "and", "prod"},
	},
	{
		name:   "apply a saved plan",
		args:   []string{"strata", "apply", "plan.tfplan", "-auto-approve"},
		strata: []string{"strata", "apply", "-auto-approve", "plan.tfplan"},
	},
	{
		name:   "terraform's -help is strata's help of its own command",
		args:   []string{"strata", "plan", "-help"},
		strata: []string{"strata", "plan", "--help"},
	},
	{
		name:   "--help of a passthrough command is the engine's",
		args:   []string{"strata", "state", "--help"},
		strata: []string{"strata", "state"},
		engine: []string{"-help"},
	},
	{
		name:   "strata's single-dash flags",
		args:   []string{"strata", "plan", "-detailed-exitcode", "-no-color", "-h"},
		strata: []string{"strata", "plan", "-detailed-exitcode", "-no-color", "-h"},
	},
	{
		name:   "global chdir and a var file",
		args:   []string{"strata", "-C", "dir", "plan", "-var-file=x.tfvars"},
		strata: []string{"strata", "-C", "dir", "plan"},
		engine: []string{"-var-file=x.tfvars"},
	},
	{
		name:   "global flags in any spelling",
		args:   []string{"strata", "-chdir=dir", "--config", "c.yml", "-Cother", "init", "-upgrade"},
		strata: []string{"strata", "-chdir=dir", "--config", "c.yml", "-C=other", "init"},
		engine: []string{"-upgrade"},
	},
	{
		name:   "version",
		args:   []string{"strata", "version"},
		strata: []string{"strata", "version"},
	},
	{
		name:   "no command",
		args:   []string{"strata", "--help"},
		strata: []string{"strata", "--help"},
	},
	{
		name:   "flags after -- are the engine's",
		args:   []string{"strata", "plan", "--all", "--", "--parallelism", "3", "-j", "x", "--"},
		strata: []string{"strata", "plan", "--all"},
		engine: []string{"--parallelism", "3", "-j", "x", "--"},
	},
	{
		name:   "-- alone",
		args:   []string{"strata", "plan", "--"},
		strata: []string{"strata", "plan"},
	},
	{
		name:   "a strata flag's value is never split off",
		args:   []string{"strata", "plan", "--report", "-x.json", "--workspace", "--"},
		strata: []string{"strata", "plan", "--report", "-x.json", "--workspace", "--"},
	},
	{
		name:   "missing value at the end is left for urfave",
		args:   []string{"strata", "plan", "-var", "x=1", "--parallelism"},
		strata: []string{"strata", "plan", "--parallelism"},
		engine: []string{"-var", "x=1"},
	},
	{
		name:    "missing value before positional arguments",
		args:    []string{"strata", "ls", "dir:x", "--query"},
		wantErr: "flag needs an argument: --query",
	},
	{
		name:    "engine flag with two dashes",
		args:    []string{"strata", "plan", "--target", "a"},
		wantErr: "--target is not a strata flag: write the engine flag as -target, or after --",
	},
	{
		name:   "unknown long flag is left for urfave",
		args:   []string{"strata", "plan", "--bogus"},
		strata: []string{"strata", "plan", "--bogus"},
	},
	{
		name:   "engine flags of output with its positional argument",
		args:   []string{"strata", "output", "-raw", "vpc_id", "--workspace", "dev"},
		strata: []string{"strata", "output", "--workspace", "dev"},
		engine: []string{"-raw", "vpc_id"},
	},
	{
		name:   "passthrough keeps the engine's order",
		args:   []string{"strata", "state", "rm", "-dry-run", "aws_instance.a", "--stack", "s", "--force"},
		strata: []string{"strata", "state", "--stack", "s"},
		engine: []string{"rm", "-dry-run", "aws_instance.a", "--force"},
	},
	{
		name:   "subcommand",
		args:   []string{"strata", "engines", "install", "--json"},
		strata: []string{"strata", "engines", "install", "--json"},
	},
	{
		name:   "lower-case engine flag starting like an alias",
		args:   []string{"strata", "validate", "-json"},
		strata: []string{"strata", "validate"},
		engine: []string{"-json"},
	},
	{
		name:   "dash alone is an argument",
		args:   []string{"strata", "ls", "-"},
		strata: []string{"strata", "ls", "-"},
	},
	{
		name:   "unaccepted engine flag keeps its value",
		args:   []string{"strata", "plan", "-out", "p.tfplan"},
		strata: []string{"strata", "plan"},
		engine: []string{"-out", "p.tfplan"},
	},
}

func TestArgvSplit(t *testing.T) {
	t.Parallel()
	for _, tt := range argvCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			strata, engine, err := splitArgv(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(strata, tt.strata) {
				t.Errorf("strata = %q, want %q", strata, tt.strata)
			}
			if len(engine) != 0 || len(tt.engine) != 0 {
				if !reflect.DeepEqual(engine, tt.engine) {
					t.Errorf("engine = %q, want %q", engine, tt.engine)
				}
			}
		})
	}
}

// TestArgvTablesCoverCLIFlags keeps the split in step with the CLI: every
// flag a command declares must be in the table of its kind, or its value
// would be taken for a positional argument.
func TestArgvTablesCoverCLIFlags(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	check := func(where string, flags []cli.Flag) {
		for _, f := range flags {
			takesValue := true
			if d, ok := f.(cli.DocGenerationFlag); ok {
				takesValue = d.TakesValue()
			}
			for _, name := range f.Names() {
				if takesValue && !strataValueFlags[name] {
					t.Errorf("%s: --%s takes a value but is not in strataValueFlags", where, name)
				}
				if !takesValue && !strataBoolFlags[name] {
					t.Errorf("%s: --%s takes no value but is not in strataBoolFlags", where, name)
				}
				if len(name) == 1 && !strataSingleDashFlags[name] {
					t.Errorf("%s: -%s is not in strataSingleDashFlags", where, name)
				}
			}
		}
	}
	check("strata", app.Flags)
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			check(prefix+c.Name, c.Flags)
			walk(prefix+c.Name+" ", c.Subcommands)
		}
	}
	walk("strata ", app.Commands)
}
