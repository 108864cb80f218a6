// Package engineargs reads the engine arguments strata passes on: flags
// typed on its command line, those after --, and a step's extra_args. It
// holds the one table of the flags strata accepts for each engine command,
// which the runner renders into engine calls and the config check
// validates against before anything runs.
package engineargs

import (
	"encoding/json"
	"strconv"
)

// EngineArgs are the engine arguments of one command: those after `--`,
// Terraform flags typed directly on strata's command line, and a step's
// extra_args. They go to one engine call only (docs/behaviour.md#commands): Plan to the plan of
// plan, apply, destroy and drift; Init to init; Command to the command
// itself for validate, output and passthrough.
type EngineArgs struct {
	Plan PlanArgs
	Init InitArgs
	// Lock are the arguments of providers lock.
	Lock LockArgs
	// Command holds the arguments of validate, output and passthrough
	// commands, verbatim.
	Command []string
	// NoColor is -no-color: the engine's output is not coloured, as
	// strata's --no-color says (docs/behaviour.md#colour).
	NoColor bool
	// Text is every engine argument in the order given, for the content
	// digest: plan and init flags in canonical form (-flag=value, paths
	// absolute), other arguments verbatim.
	Text []string
	// Given are the arguments as typed, relative paths and all: what a CI
	// manifest carries (MarshalJSON), for each job to Parse again against
	// its own checkout.
	Given []string
}

// MarshalJSON writes the arguments as given.
func (a EngineArgs) MarshalJSON() ([]byte, error) { return json.Marshal(a.Given) }

// UnmarshalJSON reads arguments as given, into Given only: Parse them
// before use.
func (a *EngineArgs) UnmarshalJSON(b []byte) error {
	*a = EngineArgs{}
	return json.Unmarshal(b, &a.Given)
}

// PlanArgs are the plan flags terraform-exec can express.
type PlanArgs struct {
	Targets     []string // -target
	Replace     []string // -replace
	Vars        []string // -var NAME=VALUE
	VarFiles    []string // -var-file, absolute
	Refresh     *bool    // -refresh
	RefreshOnly bool     // -refresh-only
	Destroy     bool     // -destroy
	Lock        *bool    // -lock
	LockTimeout string   // -lock-timeout
	Parallelism int      // -parallelism (the engine's, not strata's)
	// Extra are flags terraform-exec cannot express (-compact-warnings),
	// in canonical form: a plan that has any runs as terraform-exec would
	// run it, without it.
	Extra []string
}

// LockArgs are the arguments of providers lock.
type LockArgs struct {
	Platforms []string // -platform
	FSMirror  string   // -fs-mirror, absolute
	NetMirror string   // -net-mirror
	// Providers are the provider addresses to lock; none is every one.
	Providers []string
}

// Mirror is the -fs-mirror or -net-mirror flag given, if any.
func (l LockArgs) Mirror() []string {
	switch {
	case l.FSMirror != "":
		return []string{"-fs-mirror=" + l.FSMirror}
	case l.NetMirror != "":
		return []string{"-net-mirror=" + l.NetMirror}
	}
	return nil
}

// InitArgs are the init flags terraform-exec can express.
type InitArgs struct {
	Upgrade       bool     // -upgrade
	Reconfigure   bool     // -reconfigure
	Backend       *bool    // -backend
	BackendConfig []string // -backend-config (a path made absolute, or KEY=VALUE)
	ForceCopy     bool     // -force-copy
	Get           *bool    // -get
	PluginDir     []string // -plugin-dir, absolute
	// Extra are flags terraform-exec cannot express for init (-var-file,
	// -var, -lockfile, -lock, -lock-timeout, -migrate-state,
	// -ignore-remote-version), in canonical form, paths absolute.
	Extra []string
}

// Flags renders init's flags as the engine reads them, Extra last.
func (a InitArgs) Flags() []string {
	var f []string
	if a.Upgrade {
		f = append(f, "-upgrade")
	}
	if a.Reconfigure {
		f = append(f, "-reconfigure")
	}
	if a.Backend != nil {
		f = append(f, "-backend="+strconv.FormatBool(*a.Backend))
	}
	for _, b := range a.BackendConfig {
		f = append(f, "-backend-config="+b)
	}
	if a.ForceCopy {
		f = append(f, "-force-copy")
	}
	if a.Get != nil {
		f = append(f, "-get="+strconv.FormatBool(*a.Get))
	}
	for _, p := range a.PluginDir {
		f = append(f, "-plugin-dir="+p)
	}
	return append(f, a.Extra...)
}

// Flags renders plan's flags as the engine reads them, Extra last.
func (p PlanArgs) Flags() []string {
	var a []string
	for _, f := range p.VarFiles {
		a = append(a, "-var-file="+f)
	}
	for _, v := range p.Vars {
		a = append(a, "-var="+v)
	}
	for _, t := range p.Targets {
		a = append(a, "-target="+t)
	}
	for _, r := range p.Replace {
		a = append(a, "-replace="+r)
	}
	if p.Refresh != nil {
		a = append(a, "-refresh="+strconv.FormatBool(*p.Refresh))
	}
	if p.RefreshOnly {
		a = append(a, "-refresh-only")
	}
	if p.Destroy {
		a = append(a, "-destroy")
	}
	if p.Lock != nil {
		a = append(a, "-lock="+strconv.FormatBool(*p.Lock))
	}
	if p.LockTimeout != "" {
		a = append(a, "-lock-timeout="+p.LockTimeout)
	}
	if p.Parallelism > 0 {
		a = append(a, "-parallelism="+strconv.Itoa(p.Parallelism))
	}
	return append(a, p.Extra...)
}

// Merge puts a step's extra_args first and the command line's after them,
// so the command line wins where a flag takes one value.
func Merge(step, cmd EngineArgs) EngineArgs {
	out := step
	p, c := &out.Plan, cmd.Plan
	p.Targets = append(p.Targets, c.Targets...)
	p.Replace = append(p.Replace, c.Replace...)
	p.Vars = append(p.Vars, c.Vars...)
	p.VarFiles = append(p.VarFiles, c.VarFiles...)
	if c.Refresh != nil {
		p.Refresh = c.Refresh
	}
	p.RefreshOnly = p.RefreshOnly || c.RefreshOnly
	p.Destroy = p.Destroy || c.Destroy
	if c.Lock != nil {
		p.Lock = c.Lock
	}
	if c.LockTimeout != "" {
		p.LockTimeout = c.LockTimeout
	}
	if c.Parallelism > 0 {
		p.Parallelism = c.Parallelism
	}
	p.Extra = append(p.Extra, c.Extra...)
	in, ci := &out.Init, cmd.Init
	in.Upgrade = in.Upgrade || ci.Upgrade
	in.Reconfigure = in.Reconfigure || ci.Reconfigure
	if ci.Backend != nil {
		in.Backend = ci.Backend
	}
	in.BackendConfig = append(in.BackendConfig, ci.BackendConfig...)
	in.ForceCopy = in.ForceCopy || ci.ForceCopy
	if ci.Get != nil {
		in.Get = ci.Get
	}
	in.PluginDir = append(in.PluginDir, ci.PluginDir...)
	in.Extra = append(in.Extra, ci.Extra...)
	out.Text = append(out.Text, cmd.Text...)
	out.Command = append(out.Command, cmd.Command...)
	return out
}
