package engineargs

import (
	cmdpolicy "github.com/strata-iac/strata/command"

	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// engineFlag is one engine flag strata accepts. A boolean flag stands alone
// (`-upgrade`) or takes `=true`/`=false`; any other flag takes a value,
// written `-flag=value` or `-flag value`.
type engineFlag struct {
	name string
	// setBool records a boolean flag; nil for a flag that takes a value.
	setBool func(a *EngineArgs, v bool) error
	// setValue records a flag that takes a value and returns the value in
	// canonical form (a path made absolute against cwd).
	setValue func(a *EngineArgs, v, cwd string) (string, error)
}

// planFlags are the plan flags terraform-exec can express, plus -no-color
// and -input=false, which it always passes and which Terrateam configs
// often carry in extra_args.
var planFlags = []engineFlag{
	// terraform-exec cannot pass -compact-warnings; a plan that has it
	// runs as terraform-exec would run it, without it.
	{name: "compact-warnings", setBool: extraBool("compact-warnings", func(a *EngineArgs) *[]string { return &a.Plan.Extra })},
	{name: "destroy", setBool: func(a *EngineArgs, v bool) error { a.Plan.Destroy = v; return nil }},
	{name: "input", setBool: inputFalse},
	{name: "lock", setBool: func(a *EngineArgs, v bool) error { a.Plan.Lock = &v; return nil }},
	{name: "lock-timeout", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		if d, err := time.ParseDuration(v); err != nil || d < 0 {
			return "", fmt.Errorf("expected a duration such as 10s or 5m")
		}
		a.Plan.LockTimeout = v
		return v, nil
	}},
	{name: "no-color", setBool: noColor},
	{name: "parallelism", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", fmt.Errorf("expected a positive whole number")
		}
		a.Plan.Parallelism = n
		return strconv.Itoa(n), nil
	}},
	{name: "refresh", setBool: func(a *EngineArgs, v bool) error { a.Plan.Refresh = &v; return nil }},
	{name: "refresh-only", setBool: func(a *EngineArgs, v bool) error { a.Plan.RefreshOnly = v; return nil }},
	{name: "replace", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		a.Plan.Replace = append(a.Plan.Replace, v)
		return v, nil
	}},
	{name: "target", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		a.Plan.Targets = append(a.Plan.Targets, v)
		return v, nil
	}},
	{name: "var", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		if name, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(name) == "" {
			return "", fmt.Errorf("expected NAME=VALUE")
		}
		a.Plan.Vars = append(a.Plan.Vars, v)
		return v, nil
	}},
	{name: "var-file", setValue: func(a *EngineArgs, v, cwd string) (string, error) {
		p, err := absPath(cwd, v)
		a.Plan.VarFiles = append(a.Plan.VarFiles, p)
		return p, err
	}},
}

// initFlags are the init flags terraform-exec can express, plus -no-color
// and -input=false as for plan.
var initFlags = []engineFlag{
	{name: "backend", setBool: func(a *EngineArgs, v bool) error { a.Init.Backend = &v; return nil }},
	{name: "backend-config", setValue: func(a *EngineArgs, v, cwd string) (string, error) {
		// Terraform reads a value with `=` as KEY=VALUE and any other
		// value as a file.
		if !strings.Contains(v, "=") {
			var err error
			if v, err = absPath(cwd, v); err != nil {
				return "", err
			}
		}
		a.Init.BackendConfig = append(a.Init.BackendConfig, v)
		return v, nil
	}},
	{name: "force-copy", setBool: func(a *EngineArgs, v bool) error { a.Init.ForceCopy = v; return nil }},
	{name: "get", setBool: func(a *EngineArgs, v bool) error { a.Init.Get = &v; return nil }},
	{name: "input", setBool: inputFalse},
	{name: "no-color", setBool: noColor},
	{name: "plugin-dir", setValue: func(a *EngineArgs, v, cwd string) (string, error) {
		p, err := absPath(cwd, v)
		a.Init.PluginDir = append(a.Init.PluginDir, p)
		return p, err
	}},
	{name: "reconfigure", setBool: func(a *EngineArgs, v bool) error { a.Init.Reconfigure = v; return nil }},
	{name: "upgrade", setBool: func(a *EngineArgs, v bool) error { a.Init.Upgrade = v; return nil }},
	// The rest terraform-exec cannot pass to init; an init that has any
	// runs as terraform-exec would run it, without it.
	{name: "var-file", setValue: func(a *EngineArgs, v, cwd string) (string, error) {
		p, err := absPath(cwd, v)
		a.Init.Extra = append(a.Init.Extra, "-var-file="+p)
		return p, err
	}},
	{name: "var", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		if name, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(name) == "" {
			return "", fmt.Errorf("expected NAME=VALUE")
		}
		a.Init.Extra = append(a.Init.Extra, "-var="+v)
		return v, nil
	}},
	{name: "lockfile", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		if v != "readonly" {
			return "", fmt.Errorf("expected readonly, the one mode the engine has")
		}
		a.Init.Extra = append(a.Init.Extra, "-lockfile="+v)
		return v, nil
	}},
	{name: "lock", setBool: extraBool("lock", initExtra)},
	{name: "lock-timeout", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		if d, err := time.ParseDuration(v); err != nil || d < 0 {
			return "", fmt.Errorf("expected a duration such as 10s or 5m")
		}
		a.Init.Extra = append(a.Init.Extra, "-lock-timeout="+v)
		return v, nil
	}},
	{name: "migrate-state", setBool: extraBool("migrate-state", initExtra)},
	{name: "ignore-remote-version", setBool: extraBool("ignore-remote-version", initExtra)},
}

func initExtra(a *EngineArgs) *[]string { return &a.Init.Extra }

// lockFlags are the flags of providers lock.
var lockFlags = []engineFlag{
	{name: "platform", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		if !ValidPlatform(v) {
			return "", fmt.Errorf("expected a platform OS_ARCH, such as linux_amd64")
		}
		a.Lock.Platforms = append(a.Lock.Platforms, v)
		return v, nil
	}},
	{name: "fs-mirror", setValue: func(a *EngineArgs, v, cwd string) (string, error) {
		p, err := absPath(cwd, v)
		a.Lock.FSMirror = p
		return p, err
	}},
	{name: "net-mirror", setValue: func(a *EngineArgs, v, _ string) (string, error) {
		if !strings.HasPrefix(v, "https://") {
			return "", fmt.Errorf("expected an https:// URL")
		}
		a.Lock.NetMirror = v
		return v, nil
	}},
	{name: "no-color", setBool: noColor},
}

// platformPattern is a platform as the engines name them: OS_ARCH.
var platformPattern = regexp.MustCompile(`^[a-z0-9]+_[a-z0-9]+$`)

// ValidPlatform says whether s names a platform as the engines do:
// OS_ARCH, such as linux_amd64.
func ValidPlatform(s string) bool { return platformPattern.MatchString(s) }

// providerPattern is a provider address: [HOST/]NAMESPACE/TYPE or TYPE.
var providerPattern = regexp.MustCompile(`^([A-Za-z0-9.-]+(:[0-9]+)?/)?([A-Za-z0-9_-]+/)?[A-Za-z0-9_-]+$`)

// extraBool records a boolean flag terraform-exec cannot express in the
// given list, as the engine reads it.
func extraBool(name string, list func(*EngineArgs) *[]string) func(*EngineArgs, bool) error {
	return func(a *EngineArgs, v bool) error {
		l := list(a)
		if v {
			*l = append(*l, "-"+name)
		} else {
			*l = append(*l, "-"+name+"=false")
		}
		return nil
	}
}

func inputFalse(_ *EngineArgs, v bool) error {
	if v {
		return fmt.Errorf("strata never lets the engine prompt; only -input=false is accepted")
	}
	return nil
}

func noColor(a *EngineArgs, v bool) error {
	if !v {
		return fmt.Errorf("the engine's output is coloured only at a terminal, and -no-color or strata's --no-color turns that off; -no-color=false is not accepted")
	}
	a.NoColor = true
	return nil
}

// otherValueFlags are engine flags strata does not accept but knows take a
// value, so that `-out plan.tfplan` is split as one flag and reported as
// such rather than leaving plan.tfplan behind as a positional argument.
var otherValueFlags = []string{
	"backup", "chdir", "config", "exclude", "filter", "from-module",
	"generate-config-out", "json-into", "out", "state",
	"state-out", "test-directory",
}

// strataOwnFlags are flags strata reads in their single-dash spelling; they
// are never engine arguments.
var strataOwnFlags = map[string]bool{"auto-approve": true, "detailed-exitcode": true}

// FlagTakesValue reports whether name, an engine flag without its
// dashes, takes a value (`-var x=1`) and whether strata knows it at all.
// Command lines are split with it before they are parsed, so that a flag's
// value travels with the flag.
func FlagTakesValue(name string) (takesValue, known bool) {
	for _, set := range [][]engineFlag{planFlags, initFlags, lockFlags} {
		for _, f := range set {
			if f.name == name {
				return f.setBool == nil, true
			}
		}
	}
	for _, n := range otherValueFlags {
		if n == name {
			return true, true
		}
	}
	return false, false
}

// Parse parses the engine arguments of strata command `command`:
// Terraform flags typed on strata's command line, those after `--`, or a
// step's extra_args. For plan, apply, destroy and drift they are plan flags;
// for init, init flags; both are checked against what strata accepts
// (docs/behaviour.md#commands) and each flag is read as `-flag=value`, `-flag value` or with two
// dashes. For validate, output and passthrough commands they go verbatim
// into Command. strata's commands that run no engine (stacks, ls, graph,
// check, engines) take none.
//
// Relative paths (-var-file, -plugin-dir, and -backend-config when it names
// a file) are made absolute against cwd: the directory strata was started
// in for a command line, the unit's dir for a step's extra_args.
//
// The saved plan of `apply FILE` is not an engine argument: the caller
// takes it off before calling, and any positional argument left for a
// plan-like command or init is an error.
func Parse(command string, args []string, cwd string) (EngineArgs, error) {
	if len(args) == 0 {
		return EngineArgs{}, nil
	}
	ea := EngineArgs{Given: append([]string(nil), args...)}
	var flags []engineFlag
	pol, run := cmdpolicy.Of(command)
	switch {
	case run && pol.Plans:
		flags = planFlags
	case run && pol.Job == cmdpolicy.JobInit:
		flags = initFlags
	case run && pol.Job == cmdpolicy.JobProvidersLock:
		flags = lockFlags
	case runsNoEngine[command]:
		return ea, fmt.Errorf("strata %s runs no engine and takes no engine arguments, found %q", command, args[0])
	default:
		ea.Command = append([]string(nil), args...)
		ea.Text = append([]string(nil), args...)
		return ea, nil
	}
	p := engineArgsParser{command: command, flags: flags, cwd: cwd, args: &ea}
	for i := 0; i < len(args); i++ {
		consumed, err := p.arg(args[i], args[i+1:])
		if err != nil {
			return EngineArgs{}, &ArgError{Index: i, Err: err}
		}
		i += consumed
	}
	if err := p.check(); err != nil {
		return EngineArgs{}, err
	}
	return ea, nil
}

// ArgError is an argument Parse refuses, with its index, so a config check
// can point at the argument in its file.
type ArgError struct {
	Index int
	Err   error
}

func (e *ArgError) Error() string { return e.Err.Error() }
func (e *ArgError) Unwrap() error { return e.Err }

// engineArgsParser reads plan or init flags one argument at a time.
type engineArgsParser struct {
	command string
	flags   []engineFlag
	cwd     string
	args    *EngineArgs
	// bareBool is the last argument when it was a boolean flag without a
	// value, to explain a following `false`.
	bareBool string
}

// arg reads arg, the value from rest when arg is a flag that takes one
// written apart, and returns how many of rest it used.
func (p *engineArgsParser) arg(arg string, rest []string) (int, error) {
	bareBool := p.bareBool
	p.bareBool = ""
	name, ok := flagName(arg)
	if !ok {
		return 0, p.positional(arg, bareBool)
	}
	name, value, hasValue := strings.Cut(name, "=")
	if name == "" || strings.HasPrefix(name, "-") {
		return 0, fmt.Errorf("engine argument %q: bad flag syntax", arg)
	}
	if strataOwnFlags[name] {
		return 0, fmt.Errorf("-%s is a strata flag, not an engine argument (it goes before --)", name)
	}
	f, ok := p.lookup(name)
	if !ok {
		return 0, fmt.Errorf("engine flag -%s is not accepted by strata %s; accepted: %s", name, p.command, p.accepted())
	}
	consumed := 0
	if f.setBool != nil {
		b := true
		if hasValue {
			switch value {
			case "true":
			case "false":
				b = false
			default:
				return 0, fmt.Errorf("engine flag -%s=%s: expected true or false", name, value)
			}
		} else {
			p.bareBool = name
		}
		if err := f.setBool(p.args, b); err != nil {
			return 0, fmt.Errorf("engine flag -%s=%t: %w", name, b, err)
		}
		value = strconv.FormatBool(b)
	} else {
		if !hasValue {
			if len(rest) == 0 {
				return 0, fmt.Errorf("engine flag -%s needs a value", name)
			}
			value, consumed = rest[0], 1
		}
		if value == "" {
			return 0, fmt.Errorf("engine flag -%s needs a value", name)
		}
		canon, err := f.setValue(p.args, value, p.cwd)
		if err != nil {
			return 0, fmt.Errorf("engine flag -%s=%s: %w", name, value, err)
		}
		value = canon
	}
	p.args.Text = append(p.args.Text, "-"+name+"="+value)
	return consumed, nil
}

func (p *engineArgsParser) positional(arg, bareBool string) error {
	if cmdpolicy.Must(p.command).Job == cmdpolicy.JobProvidersLock && bareBool == "" {
		if !providerPattern.MatchString(arg) {
			return fmt.Errorf("strata %s: %q is not a provider address; expected NAMESPACE/TYPE or HOST/NAMESPACE/TYPE", p.command, arg)
		}
		p.args.Lock.Providers = append(p.args.Lock.Providers, arg)
		p.args.Text = append(p.args.Text, arg)
		return nil
	}
	hint := ""
	switch {
	case bareBool != "" && (arg == "true" || arg == "false"):
		hint = fmt.Sprintf("; write -%s=%s", bareBool, arg)
	case cmdpolicy.Must(p.command).AppliesPlanFile:
		hint = "; a saved plan is applied with strata apply FILE"
	}
	return fmt.Errorf("strata %s takes no positional engine argument, found %q%s", p.command, arg, hint)
}

// runsNoEngine are strata's own commands that run no engine.
var runsNoEngine = map[string]bool{"stacks": true, "ls": true, "graph": true, "check": true, "engines": true}

// check rejects combinations the engine would reject, before anything runs.
func (p *engineArgsParser) check() error {
	pl, in := p.args.Plan, p.args.Init
	switch {
	case pl.RefreshOnly && pl.Refresh != nil && !*pl.Refresh:
		return fmt.Errorf("engine flags -refresh-only and -refresh=false cannot be combined")
	case pl.RefreshOnly && (pl.Destroy || cmdpolicy.Must(p.command).Destroys):
		return fmt.Errorf("engine flag -refresh-only cannot be combined with a destroy plan")
	case in.Reconfigure && in.ForceCopy:
		return fmt.Errorf("engine flags -reconfigure and -force-copy cannot be combined: -force-copy is for migrating state")
	case p.args.Lock.FSMirror != "" && p.args.Lock.NetMirror != "":
		return fmt.Errorf("engine flags -fs-mirror and -net-mirror cannot be combined: the engine's lock reads one source")
	}
	return nil
}

func (p *engineArgsParser) lookup(name string) (engineFlag, bool) {
	for _, f := range p.flags {
		if f.name == name {
			return f, true
		}
	}
	return engineFlag{}, false
}

// accepted lists the flags of the command, as the error for any other
// names them.
func (p *engineArgsParser) accepted() string {
	names := make([]string, len(p.flags))
	for i, f := range p.flags {
		names[i] = "-" + f.name
		if f.name == "input" {
			names[i] += "=false"
		}
	}
	return strings.Join(names, ", ")
}

// flagName strips the one or two dashes of a flag; ok is false for an
// argument that is not a flag (including `-` alone).
func flagName(arg string) (name string, ok bool) {
	if len(arg) < 2 || arg[0] != '-' {
		return "", false
	}
	name = arg[1:]
	if name[0] == '-' {
		name = name[1:]
	}
	return name, true
}

// absPath resolves p against cwd.
func absPath(cwd, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", p, err)
	}
	return abs, nil
}
