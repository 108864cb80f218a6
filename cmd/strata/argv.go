package main

import (
	"fmt"
	"strings"

	"github.com/strata-iac/strata/runner"
)

// strata's command line mixes its own flags with the engine's:
//
//	strata -C dir plan -var x=1 --parallelism 2 -- -refresh=false
//
// Go's flag package, under urfave/cli, reads -x and --x alike, so the
// command line is split before it is parsed: strata's flags are spelled
// with two dashes, except the few listed in strataSingleDashFlags, and any
// other single-dash flag belongs to the engine (docs/behaviour.md#commands).

// strataValueFlags are strata's flags that take a value, by name without
// dashes, long names and one-letter aliases alike.
var strataValueFlags = map[string]bool{
	"strata-version": true,
	"config":         true, "chdir": true, "C": true,
	"parallelism": true, "j": true,
	"report": true, "summary": true, "state-dir": true, "lock-timeout": true,
	"resume": true, "kill-after": true,
	"stack": true, "query": true, "dir": true, "workspace": true,
	"format": true, "plan-json": true, "base": true, "status": true,
	"dest-branch": true, "source-branch": true,
	"state": true, "state-timeout": true, "run": true, "shards": true, "wave": true, "shard": true,
	"pr": true, "link": true, "max-waves": true, "waves": true, "image": true,
	"output": true, "o": true,
}

// strataBoolFlags are strata's flags that take no value.
var strataBoolFlags = map[string]bool{
	"all": true, "changed": true, "fail-fast": true, "no-color": true,
	"json": true, "propagate": true, "no-propagate": true, "with-dependencies": true, "no-plugin-cache": true,
	"no-auto-apply": true, "show-sensitive": true, "destroy": true,
	"auto-approve": true, "detailed-exitcode": true, "transitive": true,
	"help": true, "h": true, "generate-bash-completion": true,
	"github-output": true, "destroy-deleted": true, "require-reviewed-plan": true,
	"comment": true, "post": true, "expand": true, "no-hooks": true,
}

// strataSingleDashFlags are strata's flags in their single-dash spelling:
// Terraform's spellings strata handles itself, and strata's one-letter
// aliases (Terraform has no one-letter flags). After the command, any other
// single-dash flag is an engine argument.
var strataSingleDashFlags = map[string]bool{
	"auto-approve": true, "detailed-exitcode": true, "no-color": true,
	"C": true, "j": true, "h": true, "o": true,
}

// strataCommands are strata's own commands; any other command is a
// passthrough to the engine, and its arguments, positional or not, are the
// engine's apart from strata's flags.
var strataCommands = map[string]bool{
	"init": true, "plan": true, "apply": true, "destroy": true, "drift": true,
	"output": true, "validate": true,
	"stacks": true, "ls": true, "graph": true, "history": true, "check": true, "engines": true,
	"version": true, "help": true, "h": true, "completion": true,
	"ci": true,
}

// enginePositionalCommands are strata commands whose positional arguments
// are the engine's (`strata output vpc_id`, `strata providers lock
// hashicorp/aws`).
var enginePositionalCommands = map[string]bool{"output": true, "validate": true, "providers": true}

// commandGroups are commands whose first positional argument names a
// subcommand (`strata engines install`); a subcommand may be a group in
// turn (`strata ci emit github`).
var commandGroups = map[string]bool{"engines": true, "ci": true, "ci emit": true, "providers": true}

// ownSubcommands are the subcommands strata runs itself of a command that
// is otherwise the engine's: `strata providers lock` is strata's,
// `strata providers schema` the engine's.
var ownSubcommands = map[string]string{"providers": "lock"}

// splitArgv splits os.Args-style args into strata's command line, for
// urfave/cli to parse, and the engine arguments, for runner.ParseEngineArgs.
//
// strata's part keeps the program name, the global flags, the command (and
// subcommand) and strata's flags with their values; the command's
// positional arguments are moved after its flags, because urfave/cli stops
// reading flags at the first positional argument (`apply FILE
// -auto-approve`). The engine's part is, in order, every single-dash flag
// that is not strata's with its value, the positional arguments of output,
// validate and passthrough commands, and everything after a standalone `--`.
// Everything before the command stays with strata, so `-chdir=dir` there
// is strata's --chdir.
func splitArgv(args []string) (strata, engine []string, err error) {
	if len(args) == 0 {
		return nil, nil, nil
	}
	strata = []string{args[0]}
	i := 1
	for ; i < len(args) && isFlag(args[i]); i++ {
		if args[i] == "--" {
			return strata, append(engine, args[i+1:]...), nil
		}
		f, takesNext := globalFlag(args[i])
		strata = append(strata, f)
		if takesNext && i+1 < len(args) {
			i++
			strata = append(strata, args[i])
		}
	}
	if i == len(args) {
		return strata, nil, nil
	}
	command := args[i]
	s := &argvSplit{args: args, strata: append(strata, command), own: ownCommand(args[i:])}
	group := commandGroups[command] && s.own
	groupPath := command
	for i++; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			s.engine = append(s.engine, args[i+1:]...)
			i = len(args)
		case !isFlag(a):
			switch {
			case group:
				s.strata = append(s.strata, a)
				groupPath += " " + a
				group = commandGroups[groupPath]
			case !s.own || enginePositionalCommands[command]:
				s.engine = append(s.engine, a)
			default:
				s.positionals = append(s.positionals, a)
			}
		case strings.HasPrefix(a, "--"):
			if i, err = s.longFlag(i); err != nil {
				return nil, nil, err
			}
		default:
			i = s.shortFlag(i)
		}
	}
	// A flag missing its value is reported by urfave/cli when it ends the
	// line; moving the positional arguments after it would give it one.
	if s.dangling != "" && len(s.positionals) > 0 {
		return nil, nil, fmt.Errorf("flag needs an argument: %s", s.dangling)
	}
	return append(s.strata, s.positionals...), s.engine, nil
}

// argvSplit is a command line that splitArgv is splitting after its
// command: strata's part so far, the engine's, and the command's
// positional arguments, which go after strata's flags.
type argvSplit struct {
	args        []string
	strata      []string
	engine      []string
	positionals []string
	// own is whether the command is strata's own rather than the engine's.
	own bool
	// dangling is a strata flag that ends the line without its value.
	dangling string
}

// longFlag takes the two-dash flag args[i], with its value when it takes
// the next argument, and returns the index of the last argument it took.
// A two-dash flag is strata's, but for a command that is not strata's own,
// where it is the engine's; an engine flag written with two dashes after
// strata's own command is an error.
func (s *argvSplit) longFlag(i int) (int, error) {
	a := s.args[i]
	name, _, hasValue := strings.Cut(a[2:], "=")
	if !s.own && (name == "help" || name == "h") {
		// `strata state --help` is the engine's help of state, as
		// `terraform state -help` (docs/behaviour.md#passthrough).
		s.engine = append(s.engine, "-help")
		return i, nil
	}
	if !strataValueFlags[name] && !strataBoolFlags[name] {
		if !s.own {
			s.engine = append(s.engine, a)
			return i, nil
		}
		if _, known := runner.EngineFlagTakesValue(name); known {
			return i, fmt.Errorf("%s is not a strata flag: write the engine flag as -%s, or after --", "--"+name, name)
		}
	}
	s.strata = append(s.strata, a)
	if strataValueFlags[name] && !hasValue {
		if i+1 == len(s.args) {
			s.dangling = a
			return i, nil
		}
		i++
		s.strata = append(s.strata, s.args[i])
	}
	return i, nil
}

// shortFlag takes the single-dash flag args[i], strata's when
// singleDashFlag says so and the engine's otherwise, with its value when
// it takes the next argument, and returns the index of the last argument
// it took.
func (s *argvSplit) shortFlag(i int) int {
	a := s.args[i]
	if s.own && a == "-help" {
		// terraform's spelling of help: `strata plan -help` shows
		// strata's help of plan.
		s.strata = append(s.strata, "--help")
		return i
	}
	if f, takesNext, ok := singleDashFlag(a); ok {
		s.strata = append(s.strata, f)
		if takesNext {
			if i+1 == len(s.args) {
				s.dangling = a
				return i
			}
			i++
			s.strata = append(s.strata, s.args[i])
		}
		return i
	}
	s.engine = append(s.engine, a)
	name, _, hasValue := strings.Cut(a[1:], "=")
	if takesValue, _ := runner.EngineFlagTakesValue(name); takesValue && !hasValue && i+1 < len(s.args) {
		i++
		s.engine = append(s.engine, s.args[i])
	}
	return i
}

// ownCommand says whether the command that starts args is strata's own
// rather than the engine's.
func ownCommand(args []string) bool {
	if sub, ok := ownSubcommands[args[0]]; ok {
		return firstPositional(args[1:]) == sub
	}
	return strataCommands[args[0]]
}

// firstPositional is the first argument of args that is not a flag, ""
// when there is none.
func firstPositional(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if !isFlag(a) {
			return a
		}
	}
	return ""
}

// isFlag reports whether a looks like a flag; `-` alone is an argument.
func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-'
}

// globalFlag reads a flag before the command, where every flag is strata's
// whatever its dashes, and reports whether the next argument is its value.
func globalFlag(a string) (flag string, takesNext bool) {
	if f, takesNext, ok := singleDashFlag(a); ok {
		return f, takesNext
	}
	name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
	return a, strataValueFlags[name] && !hasValue
}

// singleDashFlag reports whether a, a single-dash flag, is strata's, and
// returns it as urfave/cli reads it: a one-letter alias with its value
// attached (`-j2`, `-Cdir`) is rewritten `-j=2`. Lower-case aliases take an
// attached value only when it starts with a digit, so that `-json` stays
// the engine's.
func singleDashFlag(a string) (flag string, takesNext, ok bool) {
	if strings.HasPrefix(a, "--") {
		return "", false, false
	}
	name, _, hasValue := strings.Cut(a[1:], "=")
	if strataSingleDashFlags[name] {
		return a, strataValueFlags[name] && !hasValue, true
	}
	letter, rest := a[1:2], a[2:]
	if strataSingleDashFlags[letter] && strataValueFlags[letter] &&
		(strings.ToUpper(letter) == letter || rest[0] >= '0' && rest[0] <= '9') {
		return "-" + letter + "=" + rest, false, true
	}
	return "", false, false
}

// commandIndex returns the index of the command in strata's part of a
// split command line, or 0 when there is none.
func commandIndex(strata []string) int {
	for i := 1; i < len(strata); i++ {
		a := strata[i]
		if !isFlag(a) {
			return i
		}
		if _, takesNext := globalFlag(a); takesNext {
			i++
		}
	}
	return 0
}
