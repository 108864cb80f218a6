package engineargs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var yes, no = true, false

// parseCases are engine arguments as a command gives them, and what Parse
// makes of them from the dir /start.
var parseCases = []struct {
	name    string
	command string
	args    []string
	want    EngineArgs
	wantErr string
}{
	{name: "none", command: "plan"},
	{
		name:    "providers lock",
		command: "providers lock",
		args:    []string{"-platform", "linux_amd64", "-platform=darwin_arm64", "-fs-mirror", "mirror", "hashicorp/time"},
		want: EngineArgs{
			Lock: LockArgs{Platforms: []string{"linux_amd64", "darwin_arm64"}, FSMirror: "/start/mirror", Providers: []string{"hashicorp/time"}},
			Text: []string{"-platform=linux_amd64", "-platform=darwin_arm64", "-fs-mirror=/start/mirror", "hashicorp/time"},
		},
	},
	{name: "providers lock: a bad platform", command: "providers lock", args: []string{"-platform=macos"}, wantErr: "expected a platform OS_ARCH"},
	{name: "providers lock: two mirrors", command: "providers lock", args: []string{"-fs-mirror=/m", "-net-mirror=https://m/"}, wantErr: "cannot be combined"},
	{name: "providers lock: a plain http mirror", command: "providers lock", args: []string{"-net-mirror=http://m/"}, wantErr: "expected an https:// URL"},
	{name: "providers lock: not an address", command: "providers lock", args: []string{"hashicorp/time/x/y"}, wantErr: "not a provider address"},
	{name: "providers lock: a plan flag", command: "providers lock", args: []string{"-target=x"}, wantErr: "not accepted by strata providers lock"},
	{
		name:    "plan flags in both forms",
		command: "plan",
		args:    []string{"-var", "x=1", "-target=terraform_data.a", "-target", "terraform_data.b", "-refresh=false", "--parallelism", "2"},
		want: EngineArgs{
			Plan: PlanArgs{Vars: []string{"x=1"}, Targets: []string{"terraform_data.a", "terraform_data.b"}, Refresh: &no, Parallelism: 2},
			Text: []string{"-var=x=1", "-target=terraform_data.a", "-target=terraform_data.b", "-refresh=false", "-parallelism=2"},
		},
	},
	{
		name:    "every plan flag",
		command: "apply",
		args: []string{"-replace=aws_instance.a", "-var-file=env/dev.tfvars", "-var-file", "/abs/x.tfvars",
			"-refresh", "-lock=false", "-lock-timeout", "5m", "-parallelism=05", "-no-color", "-input=false"},
		want: EngineArgs{
			Plan: PlanArgs{
				Replace: []string{"aws_instance.a"}, VarFiles: []string{"/start/env/dev.tfvars", "/abs/x.tfvars"},
				Refresh: &yes, Lock: &no, LockTimeout: "5m", Parallelism: 5,
			},
			NoColor: true,
			Text: []string{"-replace=aws_instance.a", "-var-file=/start/env/dev.tfvars", "-var-file=/abs/x.tfvars",
				"-refresh=true", "-lock=false", "-lock-timeout=5m", "-parallelism=5", "-no-color=true", "-input=false"},
		},
	},
	{
		name:    "var file above the start dir",
		command: "drift",
		args:    []string{"-var-file=../shared/../common.tfvars"},
		want: EngineArgs{
			Plan: PlanArgs{VarFiles: []string{"/common.tfvars"}},
			Text: []string{"-var-file=/common.tfvars"},
		},
	},
	{
		name:    "var value keeps its equals signs and paths",
		command: "plan",
		args:    []string{"-var=tags={a=\"b\"}", "-var", "file=./x"},
		want: EngineArgs{
			Plan: PlanArgs{Vars: []string{"tags={a=\"b\"}", "file=./x"}},
			Text: []string{"-var=tags={a=\"b\"}", "-var=file=./x"},
		},
	},
	{
		name:    "destroy plan",
		command: "plan",
		args:    []string{"-destroy", "-refresh-only=false"},
		want: EngineArgs{
			Plan: PlanArgs{Destroy: true},
			Text: []string{"-destroy=true", "-refresh-only=false"},
		},
	},
	{
		name:    "refresh only",
		command: "plan",
		args:    []string{"--refresh-only"},
		want:    EngineArgs{Plan: PlanArgs{RefreshOnly: true}, Text: []string{"-refresh-only=true"}},
	},
	{
		name:    "last value wins for a single flag",
		command: "plan",
		args:    []string{"-parallelism=3", "-parallelism", "7"},
		want:    EngineArgs{Plan: PlanArgs{Parallelism: 7}, Text: []string{"-parallelism=3", "-parallelism=7"}},
	},
	{
		name:    "init flags",
		command: "init",
		args: []string{"-upgrade", "-backend=false", "-get=false", "-backend-config=key=a/b.tfstate",
			"-backend-config", "backends/dev.hcl", "-plugin-dir=plugins", "-reconfigure=true", "-input=false"},
		want: EngineArgs{
			Init: InitArgs{
				Upgrade: true, Reconfigure: true, Backend: &no, Get: &no,
				BackendConfig: []string{"key=a/b.tfstate", "/start/backends/dev.hcl"},
				PluginDir:     []string{"/start/plugins"},
			},
			Text: []string{"-upgrade=true", "-backend=false", "-get=false", "-backend-config=key=a/b.tfstate",
				"-backend-config=/start/backends/dev.hcl", "-plugin-dir=/start/plugins", "-reconfigure=true", "-input=false"},
		},
	},
	{
		name:    "force copy",
		command: "init",
		args:    []string{"-force-copy", "-upgrade=false"},
		want:    EngineArgs{Init: InitArgs{ForceCopy: true}, Text: []string{"-force-copy=true", "-upgrade=false"}},
	},
	{
		name:    "validate is verbatim",
		command: "validate",
		args:    []string{"-json", "-no-tests"},
		want:    EngineArgs{Command: []string{"-json", "-no-tests"}, Text: []string{"-json", "-no-tests"}},
	},
	{
		name:    "output is verbatim",
		command: "output",
		args:    []string{"-raw", "vpc_id"},
		want:    EngineArgs{Command: []string{"-raw", "vpc_id"}, Text: []string{"-raw", "vpc_id"}},
	},
	{
		name:    "passthrough is verbatim",
		command: "state",
		args:    []string{"rm", "-dry-run", "aws_instance.a"},
		want: EngineArgs{
			Command: []string{"rm", "-dry-run", "aws_instance.a"},
			Text:    []string{"rm", "-dry-run", "aws_instance.a"},
		},
	},
	{
		name:    "flag another command accepts",
		command: "plan",
		args:    []string{"-upgrade"},
		wantErr: "engine flag -upgrade is not accepted by strata plan; accepted: -compact-warnings, -destroy, -input=false, -lock, -lock-timeout, -no-color, -parallelism, -refresh, -refresh-only, -replace, -target, -var, -var-file",
	},
	{
		name:    "flag strata does not run",
		command: "plan",
		args:    []string{"-generate-config-out=x.tf"},
		wantErr: "engine flag -generate-config-out is not accepted by strata plan; accepted: -compact-warnings, -destroy,",
	},
	{
		name:    "out is not accepted",
		command: "plan",
		args:    []string{"-out=x.tfplan"},
		wantErr: "engine flag -out is not accepted by strata plan",
	},
	{
		name:    "init list",
		command: "init",
		args:    []string{"-from-module=x"},
		wantErr: "engine flag -from-module is not accepted by strata init; accepted: -backend, -backend-config, -force-copy, -get, -input=false, -no-color, -plugin-dir, -reconfigure, -upgrade, -var-file, -var, -lockfile, -lock, -lock-timeout, -migrate-state, -ignore-remote-version",
	},
	{
		name:    "flags terraform-exec cannot express",
		command: "init",
		args:    []string{"-var-file=vars/a.tfvars", "-var", "region=eu", "-lockfile=readonly", "-lock=false", "-migrate-state"},
		want: EngineArgs{
			Init: InitArgs{Extra: []string{"-var-file=/start/vars/a.tfvars", "-var=region=eu", "-lockfile=readonly", "-lock=false", "-migrate-state"}},
			Text: []string{"-var-file=/start/vars/a.tfvars", "-var=region=eu", "-lockfile=readonly", "-lock=false", "-migrate-state=true"},
		},
	},
	{
		name:    "compact warnings",
		command: "plan",
		args:    []string{"-compact-warnings"},
		want:    EngineArgs{Plan: PlanArgs{Extra: []string{"-compact-warnings"}}, Text: []string{"-compact-warnings=true"}},
	},
	{
		name:    "positional",
		command: "plan",
		args:    []string{"foo"},
		wantErr: `strata plan takes no positional engine argument, found "foo"`,
	},
	{
		name:    "positional after apply",
		command: "apply",
		args:    []string{"plan.tfplan"},
		wantErr: `strata apply takes no positional engine argument, found "plan.tfplan"; a saved plan is applied with strata apply FILE`,
	},
	{
		name:    "bare boolean does not take the next argument",
		command: "plan",
		args:    []string{"-refresh", "false"},
		wantErr: `found "false"; write -refresh=false`,
	},
	{
		name:    "boolean value",
		command: "plan",
		args:    []string{"-lock=no"},
		wantErr: "engine flag -lock=no: expected true or false",
	},
	{
		name:    "parallelism zero",
		command: "plan",
		args:    []string{"-parallelism=0"},
		wantErr: "engine flag -parallelism=0: expected a positive whole number",
	},
	{
		name:    "parallelism word",
		command: "plan",
		args:    []string{"-parallelism", "many"},
		wantErr: "engine flag -parallelism=many: expected a positive whole number",
	},
	{
		name:    "lock timeout",
		command: "plan",
		args:    []string{"-lock-timeout=ten"},
		wantErr: "engine flag -lock-timeout=ten: expected a duration such as 10s or 5m",
	},
	{
		name:    "var without a name",
		command: "plan",
		args:    []string{"-var", "x"},
		wantErr: "engine flag -var=x: expected NAME=VALUE",
	},
	{
		name:    "missing value",
		command: "plan",
		args:    []string{"-target"},
		wantErr: "engine flag -target needs a value",
	},
	{
		name:    "empty value",
		command: "init",
		args:    []string{"-plugin-dir="},
		wantErr: "engine flag -plugin-dir needs a value",
	},
	{
		name:    "strata's own flag",
		command: "plan",
		args:    []string{"-detailed-exitcode"},
		wantErr: "-detailed-exitcode is a strata flag, not an engine argument",
	},
	{
		name:    "color cannot be turned on",
		command: "plan",
		args:    []string{"-no-color=false"},
		wantErr: "engine flag -no-color=false: the engine's output is coloured only at a terminal",
	},
	{
		name:    "input cannot be turned on",
		command: "init",
		args:    []string{"-input"},
		wantErr: "engine flag -input=true: strata never lets the engine prompt",
	},
	{
		name:    "bad syntax",
		command: "plan",
		args:    []string{"---target=a"},
		wantErr: `engine argument "---target=a": bad flag syntax`,
	},
	{
		name:    "refresh only without refresh",
		command: "plan",
		args:    []string{"-refresh-only", "-refresh=false"},
		wantErr: "engine flags -refresh-only and -refresh=false cannot be combined",
	},
	{
		name:    "refresh only destroy",
		command: "destroy",
		args:    []string{"-refresh-only"},
		wantErr: "engine flag -refresh-only cannot be combined with a destroy plan",
	},
	{
		name:    "reconfigure and force copy",
		command: "init",
		args:    []string{"-reconfigure", "-force-copy"},
		wantErr: "engine flags -reconfigure and -force-copy cannot be combined",
	},
	{
		name:    "command without an engine",
		command: "ls",
		args:    []string{"-json"},
		wantErr: `strata ls runs no engine and takes no engine arguments, found "-json"`,
	},
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range parseCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.command, tt.args, "/start")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Every parse keeps the arguments as given, for a manifest.
			want := tt.want
			if len(tt.args) > 0 {
				want.Given = tt.args
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse(%q, %q)\n got %#v\nwant %#v", tt.command, tt.args, got, want)
			}
		})
	}
}

func TestEngineArgsFlagTakesValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		takesValue, known bool
	}{
		{"var", true, true},
		{"var-file", true, true},
		{"backend-config", true, true},
		{"out", true, true},
		{"refresh", false, true},
		{"upgrade", false, true},
		{"compact-warnings", false, true},
		{"lockfile", true, true},
		{"json", false, false},
	}
	for _, tt := range tests {
		takesValue, known := FlagTakesValue(tt.name)
		if takesValue != tt.takesValue || known != tt.known {
			t.Errorf("FlagTakesValue(%q) = %t, %t; want %t, %t", tt.name, takesValue, known, tt.takesValue, tt.known)
		}
	}
}

// TestEngineArgsJSON: arguments travel as given, relative paths and all,
// and are read back as given only, for Parse to read against another
// checkout.
func TestEngineArgsJSON(t *testing.T) {
	t.Parallel()
	given := []string{"-var-file=env/dev.tfvars", "-target=terraform_data.x"}
	ea, err := Parse("plan", given, "/start")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ea)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["-var-file=env/dev.tfvars","-target=terraform_data.x"]`; string(b) != want {
		t.Fatalf("json %s, want %s", b, want)
	}
	var back EngineArgs
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, EngineArgs{Given: given}) {
		t.Errorf("read back %#v, want the arguments as given only", back)
	}
	again, err := Parse("plan", back.Given, "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if want := "/elsewhere/env/dev.tfvars"; len(again.Plan.VarFiles) != 1 || again.Plan.VarFiles[0] != want {
		t.Errorf("var files %q, want [%s]", again.Plan.VarFiles, want)
	}
}
