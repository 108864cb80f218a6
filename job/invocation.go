package job

import (
	"fmt"
	"sort"
	"strings"
)

// invocation is one engine call, built apart from running it: the engine,
// the dir, the environment and the call (InitCall, PlanCall, …). Tests
// inspect it; the executor runs it through terraform-exec.
type invocation struct {
	Step   string
	Engine string // path of the engine binary
	Dir    string // absolute working dir
	Env    map[string]string
	Call   engineCall
}

// Args renders the argv terraform-exec runs for the invocation (without the
// flags it always adds: -no-color, -input=false, …), for logs and tests.
func (inv invocation) Args() []string {
	if inv.Call == nil {
		return nil
	}
	return inv.Call.Argv()
}

// String renders the invocation as a command line for logs.
func (inv invocation) String() string {
	return "terraform " + strings.Join(inv.Args(), " ")
}

// envList renders an environment map as sorted KEY=VALUE pairs.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, fmt.Sprintf("%s=%s", k, v))
	}
	sort.Strings(out)
	return out
}
