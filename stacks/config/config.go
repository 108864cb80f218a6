// Package config is the repository config as written, apart from the
// model built from it (docs/architecture.md#stacksconfig): the types of
// `strata.yml` and `.terrateam/config.yml` with the position of every
// value, their decoding from YAML, finding, reading and parsing the file,
// the diagnostics every finding is reported as, the JSON Schema and the
// README's reference generated from the types, and each section's checks
// that need nothing but the config. It never imports package stacks, which
// resolves a Config into the model, and knows nothing of what that model
// holds: no dirs that exist, no units, no Project.
package config

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the repository config as written: `strata.yml` or Terrateam's
// `.terrateam/config.yml`, one schema. It is Terrateam's version-1 schema
// plus strata's extensions; keys strata does not act on are accepted and
// ignored with a warning.
type Config struct {
	Version                  String               `yaml:"version" enum:"1" doc:"config version; only \"1\""`
	Engine                   *Engine              `yaml:"engine" doc:"the engine of every unit that names none (docs/behaviour.md#engines)"`
	DefaultTFVersion         String               `yaml:"default_tf_version" doc:"terraform version when no engine is given"`
	ParallelRuns             Int                  `yaml:"parallel_runs" doc:"default parallelism (strata's default: 4); 0 runs every ready unit at once (docs/behaviour.md#ordering-and-gates)"`
	LockPlatforms            *[]String            `yaml:"lock_platforms" cfg:"ext" doc:"the platforms (OS_ARCH, such as linux_amd64 and darwin_arm64) whose provider hashes every unit's lock file holds: a lock file an init writes gets them, and strata providers lock adds them (docs/behaviour.md#lock-files)"`
	CreateAndSelectWorkspace Bool                 `yaml:"create_and_select_workspace" doc:"false: strata runs no workspace command"`
	WhenModified             *WhenModified        `yaml:"when_modified" doc:"global defaults for when a dirspace counts as modified"`
	Dirs                     *Map[Dir]            `yaml:"dirs" doc:"dir or glob -> tags, workspaces, when_modified (docs/behaviour.md#root-modules-and-tags)"`
	Stacks                   *Stacks              `yaml:"stacks" doc:"stack definitions (docs/behaviour.md#stacks-and-membership)"`
	Workflows                []Workflow           `yaml:"workflows" doc:"per-tag-query steps, environment and engine; first match wins (docs/behaviour.md#workflows-and-steps)"`
	AccessControl            *AccessControl       `yaml:"access_control" doc:"who may plan, apply and unlock which units (docs/controls.md#who-may-do-what)"`
	ApplyRequirements        *ApplyRequirements   `yaml:"apply_requirements" doc:"what an apply needs of its pull request (docs/controls.md#what-an-apply-requires)"`
	DefaultBranchOverrides   *[]String            `yaml:"default_branch_overrides" doc:"sections read from the default branch's config, not the pull request's: access_control, apply_requirements, destination_branches (default: all three)"`
	Automerge                *Automerge           `yaml:"automerge" doc:"merge a pull request once an apply in CI left nothing to apply (docs/controls.md#automerge)"`
	BatchRuns                Ignored              `yaml:"batch_runs" cfg:"ignored" doc:"Terrateam server batching; strata splits a run over jobs itself (ci start --shards, docs/ci.md#waves-and-shards)"`
	CheckoutStrategy         String               `yaml:"checkout_strategy" enum:"merge,checkout" doc:"what the workflow ci emit github writes checks out for a pull request: merge, its merge with the base (default), or checkout, its own last commit"`
	ConfigBuilder            Ignored              `yaml:"config_builder" cfg:"ignored" doc:"Terrateam server config script; generate strata.yml in a CI step before strata runs"`
	CostEstimation           *CostEstimation      `yaml:"cost_estimation" doc:"each plan's monthly cost from infracost, in the summary and pull request comment (docs/behaviour.md#cost-estimation)"`
	DestinationBranches      *[]DestinationBranch `yaml:"destination_branches" doc:"the pull requests strata runs for in CI, by the branch they go into (and come from); default any"`
	Drift                    *Drift               `yaml:"drift" doc:"scheduled drift checks, as ci emit github writes them (docs/ci.md#drift-schedules)"`
	Enabled                  Bool                 `yaml:"enabled" doc:"false: strata runs nothing in CI for this repository (docs/behaviour.md#the-config-file); elsewhere it runs, saying so"`
	History                  *History             `yaml:"history" cfg:"ext" doc:"the runs strata keeps in the state dir and bucket (docs/behaviour.md#history)"`
	Hooks                    *Hooks               `yaml:"hooks" doc:"steps run once before and after a command's units: run, env, oidc (docs/behaviour.md#hooks)"`
	Indexer                  Ignored              `yaml:"indexer" cfg:"ignored" doc:"Terrateam server indexer; strata reads module calls itself, every run"`
	Integrations             Ignored              `yaml:"integrations" cfg:"ignored" doc:"Terrateam integrations"`
	Notifications            *Notifications       `yaml:"notifications" doc:"what becomes of strata's earlier pull request comment (docs/ci.md#the-pull-request-comment)"`
	Storage                  Ignored              `yaml:"storage" cfg:"ignored" doc:"Terrateam plan storage; strata keeps plans in the state bucket (--state, docs/ci.md#the-state-bucket)"`
	Tags                     Ignored              `yaml:"tags" cfg:"ignored" doc:"Terrateam branch tag patterns"`
	TreeBuilder              Ignored              `yaml:"tree_builder" cfg:"ignored" doc:"Terrateam server tree script; strata walks the repository itself"`
}

// History is `history`: how many runs strata keeps.
type History struct {
	Pos  Pos
	Keep Int `yaml:"keep" doc:"the runs kept, the oldest removed first (default 100, at most 10000)"`
}

// Dir is the config of one `dirs` key: an exact dir or a glob.
type Dir struct {
	Pos                      Pos
	Tags                     []String        `yaml:"tags" doc:"tags of the dir's dirspaces"`
	WhenModified             *WhenModified   `yaml:"when_modified" doc:"overrides the global when_modified, field by field"`
	Workspaces               *Map[Workspace] `yaml:"workspaces" doc:"named workspaces; replaces the default workspace"`
	CreateAndSelectWorkspace Bool            `yaml:"create_and_select_workspace" doc:"false: strata runs no workspace command in this dir"`
	SharedState              Bool            `yaml:"shared_state" cfg:"ext" doc:"units of several stacks in this dir share one state on purpose (docs/behaviour.md#stacks-and-membership)"`
	Stacks                   Ignored         `yaml:"stacks" cfg:"ignored" doc:"Terrateam CDKTF stacks"`
}

// Workspace is the config of one named workspace of a dir.
type Workspace struct {
	Pos          Pos
	Tags         []String      `yaml:"tags" doc:"tags of this dirspace"`
	WhenModified *WhenModified `yaml:"when_modified" doc:"overrides the dir's when_modified, field by field"`
}

// WhenModified says when a dirspace counts as modified and what follows.
type WhenModified struct {
	Pos             Pos
	FilePatterns    *[]String  `yaml:"file_patterns" doc:"files that modify the dirspace; ${DIR}, ${WORKSPACE}, ! negates"`
	DependsOn       *DependsOn `yaml:"depends_on" doc:"tag query of the units this one runs after (same stack)"`
	Autoapply       Bool       `yaml:"autoapply" doc:"apply the dirspace's units as auto_apply does"`
	Autoplan        Bool       `yaml:"autoplan" doc:"false: not in the modified set of --changed"`
	AutoplanDraftPR Bool       `yaml:"autoplan_draft_pr" doc:"false: on a draft pull request, not in the modified set of --changed (default true)"`
}

// DependsOn is `depends_on`: a tag query, or a map with the query and
// `prune_on_no_change`.
type DependsOn struct {
	Pos             Pos
	TagQuery        String `yaml:"tag_query" cfg:"required" doc:"the units this one runs after"`
	PruneOnNoChange Bool   `yaml:"prune_on_no_change" doc:"keep the order without running it when only propagation added it"`
}

func (o *DependsOn) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind == yaml.ScalarNode {
		*o = DependsOn{Pos: posOf(n), TagQuery: String{Value: n.Value, Pos: posOf(n), Set: true}}
		return
	}
	d.decodeStruct(n, reflectValue(o), key, nil)
}

// Stacks is the `stacks` section.
type Stacks struct {
	Pos                            Pos
	AllowWorkspaceInMultipleStacks Bool           `yaml:"allow_workspace_in_multiple_stacks" doc:"a dirspace in N leaf stacks is N units (docs/behaviour.md#stacks-and-membership)"`
	Names                          *Map[StackDef] `yaml:"names" doc:"stack name -> definition"`
}

// StackDef is one stack as written.
type StackDef struct {
	Pos        Pos
	TagQuery   *String        `yaml:"tag_query" doc:"leaf stack: the dirspaces it holds (exactly one of tag_query, stacks)"`
	Stacks     *[]String      `yaml:"stacks" doc:"nested stack: the stacks it holds"`
	Variables  *Map[Scalar]   `yaml:"variables" doc:"environment variables of every step of its units"`
	Sensitive  []String       `yaml:"sensitive" cfg:"ext" doc:"variables never printed"`
	Engine     *Engine        `yaml:"engine" doc:"engine of its units"`
	Targets    []String       `yaml:"targets" cfg:"ext" doc:"-target addresses for its units' plans (docs/behaviour.md#targets)"`
	Inputs     *Map[InputRef] `yaml:"inputs" cfg:"ext" doc:"input variables fed from other stacks' outputs (docs/behaviour.md#inputs-between-stacks)"`
	AutoInputs Bool           `yaml:"auto_inputs" cfg:"ext" doc:"wire declared variables from outputs of the same name of upstream stacks, else of sibling stacks"`
	Rules      *Rules         `yaml:"rules" doc:"ordering and propagation (docs/behaviour.md#rules)"`
	AutoApply  AutoApply      `yaml:"auto_apply" doc:"same as rules.auto_apply"`
	OnChange   *OnChange      `yaml:"on_change" cfg:"deprecated" doc:"first stacks design; use rules"`
	ForEach    *ForEach       `yaml:"for_each" cfg:"ext" doc:"instances: a list of keys, or a map of keys to what each adds (docs/behaviour.md#stack-instances)"`
}

// Rules are a stack's ordering and propagation rules.
type Rules struct {
	Pos           Pos
	PlanAfter     *[]String      `yaml:"plan_after" doc:"stacks that must be applied before this one plans"`
	ApplyAfter    *[]String      `yaml:"apply_after" doc:"stacks that must be applied before this one applies"`
	ModifiedBy    *[]String      `yaml:"modified_by" doc:"stacks whose being in the run puts this one in the run"`
	AutoApply     AutoApply      `yaml:"auto_apply" doc:"apply planned changes in plan, once apply gates open; a map adds conditions on the plan"`
	Prerequisites []Prerequisite `yaml:"prerequisites" cfg:"ext" doc:"stacks that must have applied recently (docs/behaviour.md#prerequisites)"`
}

// Prerequisite is a stack that must have applied within a duration.
type Prerequisite struct {
	Pos             Pos
	Stack           String `yaml:"stack" cfg:"required" doc:"the stack"`
	SucceededWithin String `yaml:"succeeded_within" cfg:"required" doc:"Go duration plus d: 90m, 1h30m, 2d"`
}

// OnChange is the first stacks design's rule block.
type OnChange struct {
	Pos           Pos
	CanApplyAfter *[]String `yaml:"can_apply_after" doc:"= rules.apply_after"`
	ApplyAfter    *[]String `yaml:"apply_after" doc:"= rules.apply_after"`
	RunStrategy   String    `yaml:"run_strategy" enum:"one-for-one,all-for-one" doc:"all-for-one: one modified unit modifies all"`
}

// InputRef is one `inputs` entry: `<stack>.<output>` or a map naming one
// unit.
type InputRef struct {
	Pos       Pos
	Stack     String `yaml:"stack" doc:"producer stack"`
	Dir       String `yaml:"dir" doc:"producer dir"`
	Workspace String `yaml:"workspace" doc:"producer workspace"`
	Output    String `yaml:"output" cfg:"required" doc:"output name"`
}

func (r *InputRef) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind == yaml.ScalarNode {
		stack, output, ok := strings.Cut(n.Value, ".")
		if !ok || stack == "" || output == "" {
			d.Errorf(posOf(n), key, "found %q; expected <stack>.<output> or {dir, workspace, output}", n.Value)
			return
		}
		p := posOf(n)
		*r = InputRef{Pos: p, Stack: String{Value: stack, Pos: p, Set: true}, Output: String{Value: output, Pos: p, Set: true}}
		return
	}
	d.decodeStruct(n, reflectValue(r), key, nil)
}

// Engine names an engine: `{name, version}`. Terrateam's other
// engines load, and units that reach them fail as unsupported.
type Engine struct {
	Pos           Pos
	Name          String  `yaml:"name" cfg:"required" enum:"terraform,tofu,terragrunt,cdktf,pulumi,custom,fly" doc:"terraform or tofu (others are not supported)"`
	Version       String  `yaml:"version" doc:"exact, a constraint (~> 1.6) or latest"`
	TFVersion     String  `yaml:"tf_version" cfg:"deprecated" doc:"first stacks design: = version"`
	TFCmd         Ignored `yaml:"tf_cmd" cfg:"ignored" doc:"Terrateam terragrunt/cdktf"`
	OverrideTFCmd Ignored `yaml:"override_tf_cmd" cfg:"ignored" doc:"Terrateam"`
	Init          Ignored `yaml:"init" cfg:"ignored" doc:"Terrateam custom engine"`
	Plan          Ignored `yaml:"plan" cfg:"ignored" doc:"Terrateam custom engine"`
	Diff          Ignored `yaml:"diff" cfg:"ignored" doc:"Terrateam custom engine"`
	Apply         Ignored `yaml:"apply" cfg:"ignored" doc:"Terrateam custom engine"`
	UnsafeApply   Ignored `yaml:"unsafe_apply" cfg:"ignored" doc:"Terrateam custom engine"`
	Outputs       Ignored `yaml:"outputs" cfg:"ignored" doc:"Terrateam custom engine"`
	ConfigFile    Ignored `yaml:"config_file" cfg:"ignored" doc:"Terrateam fly engine"`
}

// engineKeys are the keys each engine name takes, as in Terrateam's schema
// (tf_version is also strata's alias of version for terraform and tofu).
var engineKeys = map[string][]string{
	"terraform":  {"name", "version", "tf_version", "override_tf_cmd"},
	"tofu":       {"name", "version", "tf_version", "override_tf_cmd"},
	"terragrunt": {"name", "version", "tf_version", "tf_cmd", "override_tf_cmd"},
	"cdktf":      {"name", "tf_version", "tf_cmd", "override_tf_cmd"},
	"pulumi":     {"name"},
	"custom":     {"name", "init", "plan", "diff", "apply", "unsafe_apply", "outputs"},
	"fly":        {"name", "config_file"},
}

func (e *Engine) decodeNode(d *decoder, n *yaml.Node, key string) {
	allowed := allowedBy(n, "name", engineKeys)
	if name := keyValue(n, "name"); name != "terraform" && name != "tofu" && allowed != nil {
		// An engine strata does not run is validated no further than its
		// name: its keys change with Terrateam's releases.
		allowed = map[string]bool{"name": true}
		n = onlyKeys(n, allowed)
	}
	d.decodeStruct(n, reflectValue(e), key, allowed)
}

// onlyKeys returns a copy of a mapping node holding only the given keys.
func onlyKeys(n *yaml.Node, keys map[string]bool) *yaml.Node {
	out := *n
	out.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		if keys[n.Content[i].Value] {
			out.Content = append(out.Content, n.Content[i], n.Content[i+1])
		}
	}
	return &out
}

// Supported reports whether strata can run this engine.
func (e *Engine) Supported() bool {
	return e.Name.Value == "terraform" || e.Name.Value == "tofu"
}

// Workflow is one `workflows` entry.
type Workflow struct {
	Pos              Pos
	TagQuery         String  `yaml:"tag_query" cfg:"required" doc:"the units it applies to"`
	Engine           *Engine `yaml:"engine" doc:"engine of its units"`
	TerraformVersion String  `yaml:"terraform_version" doc:"Terrateam: terraform version of its units"`
	Environment      String  `yaml:"environment" doc:"environment name, ${var} substituted"`
	Plan             *[]Step `yaml:"plan" doc:"plan steps (default: init, plan)"`
	Apply            *[]Step `yaml:"apply" doc:"apply steps (default: init, apply)"`
	Cdktf            Bool    `yaml:"cdktf" doc:"Terrateam CDKTF (not supported)"`
	Terragrunt       Bool    `yaml:"terragrunt" doc:"Terrateam Terragrunt (not supported)"`
	Integrations     Ignored `yaml:"integrations" cfg:"ignored" doc:"Terrateam integrations"`
	LockPolicy       String  `yaml:"lock_policy" enum:"strict,apply,merge,none" doc:"none: a pull request's run takes no lock on the workflow's units (docs/ci.md#pull-requests); the others lock them from the plan on"`
	RunsOn           Ignored `yaml:"runs_on" cfg:"ignored" doc:"Terrateam runner selection"`
}

// Step is one workflow step; which keys it takes depends on its type.
type Step struct {
	Pos                  Pos
	Type                 String       `yaml:"type" cfg:"required" enum:"init,plan,apply,run,env,oidc,slack,checkov,conftest,opa,gate,gates,drift_create_issue" doc:"step type"`
	ExtraArgs            []String     `yaml:"extra_args" doc:"arguments for this engine call"`
	Env                  *Map[String] `yaml:"env" doc:"environment of this step"`
	Retry                *Retry       `yaml:"retry" doc:"apply retries (off by default)"`
	Mode                 String       `yaml:"mode" enum:"strict,fast-and-loose" doc:"Terrateam plan mode"`
	Cmd                  []String     `yaml:"cmd" doc:"argv of a run or env step"`
	CaptureOutput        Bool         `yaml:"capture_output" doc:"put the output in the report and summary"`
	RunOn                String       `yaml:"run_on" enum:"success,failure,always" doc:"when a run step runs"`
	IgnoreErrors         Bool         `yaml:"ignore_errors" doc:"a failure does not fail the unit"`
	VisibleOn            Ignored      `yaml:"visible_on" cfg:"ignored" doc:"Terrateam comment visibility"`
	OnError              Ignored      `yaml:"on_error" cfg:"ignored" doc:"Terrateam"`
	Method               String       `yaml:"method" enum:"exec,source" doc:"env step: exec sets name from cmd's output, source reads KEY=VALUE lines"`
	Name                 String       `yaml:"name" doc:"env step: the variable"`
	TrimTrailingNewlines Bool         `yaml:"trim_trailing_newlines" doc:"env step: trim the output (default true)"`
	Sensitive            Bool         `yaml:"sensitive" doc:"env step: never print the value"`
	Gate                 *StepGate    `yaml:"gate" doc:"run, checkov, conftest and opa steps: a failure holds the unit's apply until approved (docs/controls.md#gates)"`
	Msg                  Ignored      `yaml:"msg" cfg:"ignored" doc:"Terrateam slack"`
	Provider             String       `yaml:"provider" enum:"aws,gcp" doc:"oidc step: the cloud (docs/behaviour.md#oidc)"`
	RoleArn              String       `yaml:"role_arn" doc:"oidc aws: the role assumed with the CI's OIDC token"`
	AssumeRoleArn        String       `yaml:"assume_role_arn" doc:"oidc aws: a role then assumed with the first role's credentials"`
	AssumeRoleEnabled    Bool         `yaml:"assume_role_enabled" doc:"oidc aws: false skips assume_role_arn (default true)"`
	Audience             String       `yaml:"audience" doc:"oidc: the OIDC token's audience (aws: sts.amazonaws.com; gcp: the workload identity provider's)"`
	Duration             Int          `yaml:"duration" doc:"oidc aws: seconds the credentials last (default 3600)"`
	Region               String       `yaml:"region" doc:"oidc aws: STS region, and AWS_REGION of the units (default us-east-1)"`
	SessionName          String       `yaml:"session_name" doc:"oidc aws: the role session's name (default terrateam)"`
	ServiceAccount       String       `yaml:"service_account" doc:"oidc gcp: the service account impersonated"`
	WorkloadIdentity     String       `yaml:"workload_identity_provider" doc:"oidc gcp: projects/N/locations/global/workloadIdentityPools/P/providers/R"`
	ProjectID            String       `yaml:"project_id" doc:"oidc gcp: GOOGLE_PROJECT of the units"`
	AccessTokenLifetime  Int          `yaml:"access_token_lifetime" doc:"oidc gcp: seconds the access token lasts (default 3600)"`
	AccessTokenSubject   Ignored      `yaml:"access_token_subject" cfg:"ignored" doc:"Terrateam OIDC"`
}

var (
	runKeys    = []string{"type", "cmd", "env", "capture_output", "run_on", "ignore_errors", "visible_on", "on_error", "gate"}
	policyKeys = []string{"type", "env", "extra_args", "gate", "ignore_errors", "run_on", "visible_on"}
	oidcKeys   = []string{"type", "provider", "role_arn", "assume_role_arn", "assume_role_enabled", "audience", "duration", "region", "session_name", "service_account", "workload_identity_provider", "project_id", "access_token_lifetime", "access_token_subject"}
	// stepKeys are the keys each step type takes, as in Terrateam's schema.
	stepKeys = map[string][]string{
		"init":               {"type", "extra_args", "env"},
		"plan":               {"type", "extra_args", "env", "mode"},
		"apply":              {"type", "extra_args", "env", "retry"},
		"run":                runKeys,
		"env":                {"type", "method", "name", "cmd", "trim_trailing_newlines", "sensitive"},
		"oidc":               oidcKeys,
		"slack":              {"type", "msg", "run_on"},
		"checkov":            policyKeys,
		"conftest":           policyKeys,
		"opa":                policyKeys,
		"gate":               {"type", "gate", "env", "extra_args", "ignore_errors", "run_on"},
		"gates":              {"type", "gate", "env", "extra_args", "ignore_errors", "run_on"},
		"drift_create_issue": {"type"},
	}
)

func (s *Step) decodeNode(d *decoder, n *yaml.Node, key string) {
	d.decodeStruct(n, reflectValue(s), key, allowedBy(n, "type", stepKeys))
	if !s.Type.Set {
		return
	}
	switch s.Type.Value {
	case "run":
		if len(s.Cmd) == 0 {
			d.Errorf(s.Pos, key, "a run step needs cmd, a list of arguments")
		}
	case "oidc":
		checkOIDCStep(d, s, key)
	case "env":
		if !s.Method.Set {
			// Terrateam's default method.
			s.Method = String{Value: "exec", Pos: s.Pos, Set: true}
		}
		switch s.Method.Value {
		case "exec":
			if !s.Name.Set || len(s.Cmd) == 0 {
				d.Errorf(s.Pos, key, "an env step with method exec needs name and cmd")
			}
		case "source":
			if len(s.Cmd) == 0 {
				d.Errorf(s.Pos, key, "an env step with method source needs cmd")
			}
		}
	}
}

// Retry is an apply step's retry policy (Terrateam's shape).
type Retry struct {
	Pos          Pos
	Enabled      Bool  `yaml:"enabled" doc:"retry a failed apply"`
	Tries        Int   `yaml:"tries" doc:"attempts in all (default 3)"`
	InitialSleep Int   `yaml:"initial_sleep" doc:"seconds before the first retry (default 5)"`
	Backoff      Float `yaml:"backoff" doc:"factor between sleeps (default 1.5)"`
}

// keyValue returns the scalar value of one key of a mapping node.
func keyValue(n *yaml.Node, key string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolve(n.Content[i+1]).Value
		}
	}
	return ""
}

// allowedBy picks the keys of a tagged union's variant from the value of
// its discriminating key; an unknown or missing discriminator leaves every
// key allowed, and the enum check reports it.
func allowedBy(n *yaml.Node, discriminator string, variants map[string][]string) map[string]bool {
	keys, ok := variants[keyValue(n, discriminator)]
	if !ok {
		return nil
	}
	allowed := make(map[string]bool, len(keys))
	for _, k := range keys {
		allowed[k] = true
	}
	return allowed
}
