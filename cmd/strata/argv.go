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
	"config": true, "chdir": true, "C": true,
	"parallelism": true, "j": true,
	"report": true, "summary": true, "state-dir": true, "lock-timeout": true,
	"resume": true, "kill-after": true,
	"stack": true, "query": true, "dir": true, "workspace": true,
	"format": true, "plan-json": true, "base": true,
	"dest-branch": true, "source-branch": true,
	"state": true, "state-timeout": true, "run": true, "shards": true, "wave": true, "shard": true,
	"pr": true, "link": true, "max-waves": true, "waves": true, "image": true,
}

// strataBoolFlags are strata's flags that take no value.
var strataBoolFlags = map[string]bool{
	"all": true, "changed": true, "fail-fast": true, "no-color": true,
	"json": true, "propagate": true, "no-propagate": true, "no-plugin-cache": true,
	"no-auto-apply": true, "show-sensitive": true, "destroy": true,
	"auto-approve": true, "detailed-exitcode": true, "transitive": true,
	"help": true, "h": true, "generate-bash-completion": true,
	"github-output": true, "destroy-deleted": true, "require-reviewed-plan": true,
}

// strataSingleDashFlags are strata's flags in their single-dash spelling:
// Terraform's spellings strata handles itself, and strata's one-letter
// aliases (Terraform has no one-letter flags). After the command, any other
// single-dash flag is an engine argument.
var strataSingleDashFlags = map[string]bool{
	"auto-approve": true, "detailed-exitcode": true, "no-color": true,
	"C": true, "j": true, "h": true,
}

// strataCommands are strata's own commands; any other command is a
// passthrough to the engine, and its arguments, positional or not, are the
// engine's apart from strata's flags.
var strataCommands = map[string]bool{
	"init": true, "plan": true, "apply": true, "destroy": true, "drift": true,
	"output": true, "validate": true,
	"stacks": true, "ls": true, "graph": true, "check": true, "engines": true,
	"version": true, "help": true, "h": true, "completion": true,
	"ci": true,
}

// enginePositionalCommands are strata commands whose positional arguments
// are the engine's (`strata output vpc_id`).
var enginePositionalCommands = map[string]bool{"output": true, "validate": true}

// commandGroups are commands whose first positional argument names a
// subcommand (`strata engines install`); a subcommand may be a group in
// turn (`strata ci emit github`).
var commandGroups = map[string]bool{"engines": true, "ci": true, "ci emit": true}

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
	strata = append(strata, command)
	own := strataCommands[command]
	group := commandGroups[command]
	groupPath := command
	var positionals []string
	dangling := ""
	for i++; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			engine = append(engine, args[i+1:]...)
			i = len(args)
		case !isFlag(a):
			switch {
			case group:
				strata = append(strata, a)
				groupPath += " " + a
				group = commandGroups[groupPath]
			case !own || enginePositionalCommands[command]:
				engine = append(engine, a)
			default:
				positionals = append(positionals, a)
			}
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			if !strataValueFlags[name] && !strataBoolFlags[name] {
				if !own {
					engine = append(engine, a)
					continue
				}
				if _, known := runner.EngineFlagTakesValue(name); known {
					return nil, nil, fmt.Errorf("%s is not a strata flag: write the engine flag as -%s, or after --", "--"+name, name)
				}
			}
			strata = append(strata, a)
			if strataValueFlags[name] && !hasValue {
				if i+1 == len(args) {
					dangling = a
					continue
				}
				i++
				strata = append(strata, args[i])
			}
		default:
			if f, takesNext, ok := singleDashFlag(a); ok {
				strata = append(strata, f)
				if takesNext {
					if i+1 == len(args) {
						dangling = a
						continue
					}
					i++
					strata = append(strata, args[i])
				}
				continue
			}
			engine = append(engine, a)
			name, _, hasValue := strings.Cut(a[1:], "=")
			if takesValue, _ := runner.EngineFlagTakesValue(name); takesValue && !hasValue && i+1 < len(args) {
				i++
				engine = append(engine, args[i])
			}
		}
	}
	// A flag missing its value is reported by urfave/cli when it ends the
	// line; moving the positional arguments after it would give it one.
	if dangling != "" && len(positionals) > 0 {
		return nil, nil, fmt.Errorf("flag needs an argument: %s", dangling)
	}
	return append(strata, positionals...), engine, nil
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
