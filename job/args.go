package job

import "github.com/strata-iac/strata/internal/engineargs"

// The engine arguments of a command and its steps' extra_args; read and
// rendered by package engineargs.
type (
	EngineArgs = engineargs.EngineArgs
	PlanArgs   = engineargs.PlanArgs
	InitArgs   = engineargs.InitArgs
)
