package runner

import "github.com/strata-iac/strata/internal/engineargs"

// The engine arguments of a command and its steps' extra_args; read and
// rendered by package engineargs.
type (
	EngineArgs = engineargs.EngineArgs
	PlanArgs   = engineargs.PlanArgs
	InitArgs   = engineargs.InitArgs
)

// ParseEngineArgs reads a command's engine arguments (engineargs.Parse).
func ParseEngineArgs(command string, args []string, cwd string) (EngineArgs, error) {
	return engineargs.Parse(command, args, cwd)
}

// EngineFlagTakesValue reports whether an engine flag takes a value and
// whether strata knows it (engineargs.FlagTakesValue).
func EngineFlagTakesValue(name string) (takesValue, known bool) {
	return engineargs.FlagTakesValue(name)
}
