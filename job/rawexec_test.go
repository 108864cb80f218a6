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
		{initCall{Args: engineargs.InitArgs{Extra: []string{"-var-file=/r/a.tfvars"}}}.rawArgs(),
			"init -no-color -input=false -backend=true -get=true -upgrade=false -var-file=/r/a.tfvars"},
		{initCall{Args: engineargs.InitArgs{Backend: &f, Upgrade: true, Reconfigure: true, BackendConfig: []string{"key=x"}, Extra: []string{"-lockfile=readonly"}}}.rawArgs(),
			"init -no-color -input=false -backend=false -get=true -upgrade=true -reconfigure -backend-config=key=x -lockfile=readonly"},
		{planCall{Out: "/s/p", VarFile: "/s/v.json", Args: engineargs.PlanArgs{Targets: []string{"a.b"}, Extra: []string{"-compact-warnings"}}}.rawArgs(),
			"plan -no-color -input=false -detailed-exitcode -out=/s/p -var-file=/s/v.json -target=a.b -compact-warnings"},
	}
	for _, tc := range tests {
		if got := strings.Join(tc.argv, " "); got != tc.want {
			t.Errorf("raw argv = %q, want %q", got, tc.want)
		}
	}
}
