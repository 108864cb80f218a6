package job

import (
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/engineargs"
)

func TestRawArgs(t *testing.T) {
	f := false
	tests := []struct {
		argv []string
		want string
	}{
		{(&initCall{Args: engineargs.InitArgs{Extra: []string{"-var-file=/r/a.tfvars"}}}).rawArgs(false),
			"init -no-color -input=false -backend=true -get=true -upgrade=false -var-file=/r/a.tfvars"},
		{(&initCall{Args: engineargs.InitArgs{Backend: &f, Upgrade: true, Reconfigure: true, BackendConfig: []string{"key=x"}, Extra: []string{"-lockfile=readonly"}}}).rawArgs(false),
			"init -no-color -input=false -backend=false -get=true -upgrade=true -reconfigure -backend-config=key=x -lockfile=readonly"},
		{(&planCall{Out: "/s/p", VarFile: "/s/v.json", Args: engineargs.PlanArgs{Targets: []string{"a.b"}, Extra: []string{"-compact-warnings"}}}).rawArgs(false),
			"plan -no-color -input=false -detailed-exitcode -out=/s/p -var-file=/s/v.json -target=a.b -compact-warnings"},
		// In colour (docs/behaviour.md#colour): terraform-exec's argv
		// without -no-color.
		{(&initCall{Args: engineargs.InitArgs{BackendConfig: []string{"key=x"}}}).rawArgs(true),
			"init -input=false -backend=true -get=true -upgrade=false -backend-config=key=x"},
		{(&planCall{Out: "/s/p", VarFile: "/s/v.json", Args: engineargs.PlanArgs{Targets: []string{"a.b"}}}).rawArgs(true),
			"plan -input=false -detailed-exitcode -out=/s/p -var-file=/s/v.json -target=a.b"},
		{(&applyPlanCall{File: "/s/p"}).rawArgs(),
			"apply -input=false -auto-approve /s/p"},
		// apply takes plan's flags, but not those terraform-exec cannot
		// express, as its options do not.
		{(&applyNowCall{VarFile: "/s/v.json", Args: engineargs.PlanArgs{Vars: []string{"a=1"}, Replace: []string{"x.y"}, Extra: []string{"-compact-warnings"}}}).rawArgs(),
			"apply -input=false -auto-approve -var-file=/s/v.json -var=a=1 -replace=x.y"},
	}
	for _, tc := range tests {
		if got := strings.Join(tc.argv, " "); got != tc.want {
			t.Errorf("raw argv = %q, want %q", got, tc.want)
		}
	}
}
