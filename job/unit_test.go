package job

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks"
)

func boolp(b bool) *bool { return &b }

func TestInvocationArgs(t *testing.T) {
	tests := []struct {
		inv  invocation
		want string
	}{
		{invocation{Call: &initCall{}}, "init"},
		{invocation{Call: &initCall{Args: engineargs.InitArgs{Upgrade: true, Backend: boolp(false), BackendConfig: []string{"key=a/b"}, PluginDir: []string{"/p"}}}},
			"init -upgrade -backend=false -backend-config=key=a/b -plugin-dir=/p"},
		{invocation{Call: &planCall{Out: "/s/p.tfplan"}}, "plan -out=/s/p.tfplan"},
		{invocation{Call: &planCall{Out: "/s/p.tfplan", VarFile: "/s/v.json", Args: engineargs.PlanArgs{
			VarFiles: []string{"/u.tfvars"}, Vars: []string{"x=1"}, Targets: []string{"a.b"}, Refresh: boolp(false),
			Destroy: true, LockTimeout: "5s", Parallelism: 3}}},
			"plan -out=/s/p.tfplan -var-file=/s/v.json -var-file=/u.tfvars -var=x=1 -target=a.b -refresh=false -destroy -lock-timeout=5s -parallelism=3"},
		{invocation{Call: &applyPlanCall{File: "/s/p.tfplan"}}, "apply /s/p.tfplan"},
		{invocation{Call: &applyNowCall{VarFile: "/s/v.json", Args: engineargs.PlanArgs{Targets: []string{"a.b"}}}}, "apply -auto-approve -var-file=/s/v.json -target=a.b"},
		{invocation{Call: &workspaceCall{Name: "prod"}}, "workspace select prod"},
		{invocation{Call: &workspaceCall{Name: "prod", New: true}}, "workspace new prod"},
		{invocation{Call: &validateCall{}}, "validate"},
		{invocation{Call: &outputCall{}}, "output -json"},
		{invocation{Call: &showCall{File: "/s/p.tfplan"}}, "show -json /s/p.tfplan"},
		{invocation{Call: &showCall{File: "/s/p.tfplan", Text: true}}, "show /s/p.tfplan"},
	}
	for _, tc := range tests {
		if got := strings.Join(tc.inv.Args(), " "); got != tc.want {
			t.Errorf("Args() = %q, want %q", got, tc.want)
		}
	}
	// The user's var files come after strata's, so they win (docs/behaviour.md#input-variables).
	args := invocation{Call: &planCall{Out: "o", VarFile: "strata.json", Args: engineargs.PlanArgs{VarFiles: []string{"mine.tfvars"}}}}.Args()
	if !(slices.Index(args, "-var-file=strata.json") < slices.Index(args, "-var-file=mine.tfvars")) {
		t.Errorf("var file order: %v", args)
	}
}

func TestProcessEnv(t *testing.T) {
	env, err := ProcessEnvOf([]string{"PATH=/bin", "AWS_PROFILE=x", "TF_VAR_region=eu", "TF_LOG=debug", "TF_WORKSPACE=w", "TF_PLUGIN_CACHE_DIR=/c", "BROKEN"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"PATH": "/bin", "AWS_PROFILE": "x", "TF_PLUGIN_CACHE_DIR": "/c"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("ProcessEnv = %v, want %v", env, want)
	}
	if _, err := ProcessEnvOf([]string{"TF_CLI_ARGS_plan=-lock=false"}); err == nil || !strings.Contains(err.Error(), "TF_CLI_ARGS_plan is set") {
		t.Errorf("TF_CLI_ARGS_*: %v", err)
	}
	if got := TFVarsFromEnv([]string{"TF_VAR_a=1", "TF_VAR_=x", "OTHER=2"}); !reflect.DeepEqual(got, map[string]string{"a": "1"}) {
		t.Errorf("TFVarsFromEnv = %v", got)
	}
}

func TestUnitEnv(t *testing.T) {
	root := t.TempDir()
	testenv.WriteFile(t, root+"/strata.yml", `dirs:
  net: {tags: [net]}
stacks:
  names:
    prod:
      stacks: [prod-net]
      variables: {environment: prod}
    prod-net:
      tag_query: net
      variables: {region: eu-west-1}
`)
	testenv.WriteFile(t, root+"/net/main.tf", "")
	p, err := stacks.Load(root, root+"/strata.yml")
	if err != nil {
		t.Fatal(err)
	}
	u := p.UnitsIn("net")[0]
	env := UnitEnv(UnitEnvInput{Base: map[string]string{"PATH": "/bin"}, Unit: u, Vars: VarsOf(u.Stack), Root: root, Engine: "tofu", Version: "1.8.8",
		EnginePath: "/e/tofu", PlanFile: "/s/p.tfplan", TmpDir: "/s/tmp", PluginCache: "/cache/plugins"})
	want := map[string]string{
		"PATH": "/bin", "environment": "prod", "region": "eu-west-1", "STACK_VAR_ENVIRONMENT": "prod", "STACK_VAR_REGION": "eu-west-1",
		"STRATA_STACK": "prod-net", "STRATA_STACK_INSTANCE": "", "STRATA_STACK_PATH": "prod/prod-net", "STRATA_DIR": "net", "STRATA_WORKSPACE": "default",
		"STRATA_ROOT": root, "STRATA_ENGINE": "tofu", "STRATA_ENGINE_VERSION": "1.8.8", "STRATA_PLAN_FILE": "/s/p.tfplan",
		"STRATA_TMPDIR": "/s/tmp", "TERRATEAM_DIR": "net", "TERRATEAM_WORKSPACE": "default", "TERRATEAM_ROOT": root,
		"TERRATEAM_PLAN_FILE": "/s/p.tfplan", "TERRATEAM_TMPDIR": "/s/tmp", "TERRATEAM_STACK": "prod-net",
		"TERRATEAM_ENGINE_NAME": "tofu", "TERRATEAM_TF_CMD": "/e/tofu", "TF_PLUGIN_CACHE_DIR": "/cache/plugins",
		"CHECKPOINT_DISABLE": "1",
	}
	if !reflect.DeepEqual(env, want) {
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s = %q, want %q", k, env[k], v)
			}
		}
		for k := range env {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s", k)
			}
		}
	}
}

// An instance's steps see the stack as written and the key apart, and
// the instance's workspace (docs/behaviour.md#stack-instances).
func TestUnitEnvInstance(t *testing.T) {
	root := t.TempDir()
	testenv.WriteFile(t, root+"/strata.yml", `stacks:
  names:
    net:
      tag_query: dir:net
      variables: {region: none, size: small}
      for_each:
        us: {variables: {region: us-east-1}}
        eu: {variables: {region: eu-west-1}}
`)
	testenv.WriteFile(t, root+"/net/main.tf", "")
	p, err := stacks.Load(root, root+"/strata.yml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, u := range p.UnitsIn("net") {
		env := UnitEnv(UnitEnvInput{Base: map[string]string{}, Unit: u, Vars: VarsOf(u.Stack), Root: root, Engine: "terraform", Version: "1.11.4"})
		got[u.Stack.Name] = map[string]string{}
		for _, k := range []string{"STRATA_STACK", "STRATA_STACK_INSTANCE", "STRATA_WORKSPACE", "TERRATEAM_STACK", "region", "size"} {
			got[u.Stack.Name][k] = env[k]
		}
	}
	want := map[string]map[string]string{
		"net[us]": {"STRATA_STACK": "net", "STRATA_STACK_INSTANCE": "us", "STRATA_WORKSPACE": "us", "TERRATEAM_STACK": "net", "region": "us-east-1", "size": "small"},
		"net[eu]": {"STRATA_STACK": "net", "STRATA_STACK_INSTANCE": "eu", "STRATA_WORKSPACE": "eu", "TERRATEAM_STACK": "net", "region": "eu-west-1", "size": "small"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("environments:\n got %v\nwant %v", got, want)
	}
}

func TestErrorClassification(t *testing.T) {
	for _, tc := range []struct {
		msg               string
		transient, doInit bool
	}{
		{"exit status 1\nError: Failed to install provider\n... TLS handshake timeout", true, false},
		{"Error: Failed to query available provider packages: 503 Service Unavailable", true, false},
		{"Error: Error acquiring the state lock\n... i/o timeout", false, false},
		{`Error: Backend initialization required, please run "terraform init"`, false, true},
		{"Error: Module not installed", false, true},
		{"Error: Unsupported argument", false, false},
	} {
		err := errors.New(tc.msg)
		if transient(err) != tc.transient || initRequired(err) != tc.doInit {
			t.Errorf("%q: transient %t init %t", tc.msg, transient(err), initRequired(err))
		}
	}
}
