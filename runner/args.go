package runner

// EngineArgs are the engine arguments of one command: those after `--`,
// Terraform flags typed directly on strata's command line, and a step's
// extra_args. They go to one engine call only (SPEC §1): Plan to the plan of
// plan, apply, destroy and drift; Init to init; Command to the command
// itself for validate, output and passthrough.
type EngineArgs struct {
	Plan PlanArgs
	Init InitArgs
	// Command holds the arguments of validate, output and passthrough
	// commands, verbatim.
	Command []string
	// Text is every engine argument in the order given, for the content
	// digest: plan and init flags in canonical form (-flag=value, paths
	// absolute), other arguments verbatim.
	Text []string
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
}
