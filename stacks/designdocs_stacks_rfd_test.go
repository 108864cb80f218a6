package stacks

// stacksRFDCases are the examples of the stacks design document
// (stacks-rfd.adoc), checked by TestDesignDocExamples.
var stacksRFDCases = []docCase{
	{
		name: "rfd1/default stack implicit for unmatched dirs",
		cfg: `stacks:
  names:
    foo:
      tag_query: 'dir:DirA'
`,
		dirs:    []string{"DirA", "DirB"},
		members: map[string][]string{"foo": {"DirA@default"}, "default": {"DirB@default"}},
	},
	{
		name: "rfd1/user-defined default leaves dirs in no stack",
		cfg: `stacks:
  names:
    foo:
      tag_query: 'dir:DirA'
    default:
      tag_query: 'tag_that_never_exists'
`,
		dirs:     []string{"DirA", "DirB"},
		members:  map[string][]string{"foo": {"DirA@default"}, "default": nil},
		unassign: []string{"DirB@default"},
		warnings: []string{"match no stack and will not run", "DirB@default"},
	},
	{
		name: "rfd1/no stacks key: one default stack with query ''",
		cfg:  "",
		dirs: []string{"DirA", "DirB"},
		members: map[string][]string{
			"default": {"DirA@default", "DirB@default"},
		},
	},
	{
		name: "rfd1/tags vs stacks as written: tags is not a list",
		cfg: `dirs:
  project1/dev:
    tags: [project1, dev]
  project1/prod:
    tags: project1, prod]
    when_modified:
      depends_on: dev
`,
		dirs:   []string{"project1/dev", "project1/prod"},
		errors: []string{`strata.yml:5:11: dirs.project1/prod.tags: expected a list, found "project1, prod]"`},
	},
	{
		name: "rfd1/tags vs stacks without stacks: depends_on crosses projects",
		cfg: `dirs:
  project1/dev:
    tags: [project1, dev]
  project1/prod:
    tags: [project1, prod]
    when_modified:
      depends_on: dev
  project2/dev:
    tags: [project2, dev]
  project2/prod:
    tags: [project2, prod]
    when_modified:
      depends_on: dev
`,
		dirs: []string{"project1/dev", "project1/prod", "project2/dev", "project2/prod"},
		runs: []propagationCase{{
			modified: []string{"project1/dev"},
			want: []string{
				"project1/dev@default: modified: project1/dev/main.tf",
				"project1/prod@default: depends_on: project1/dev@default",
				"project2/prod@default: depends_on: project1/dev@default",
			},
		}},
	},
	{
		name: "rfd1/tags vs stacks with stacks: a stack encapsulates depends_on",
		cfg: `dirs:
  project1/dev:
    tags: [project1, dev]
  project1/prod:
    tags: [project1, prod]
    when_modified:
      depends_on: dev
  project2/dev:
    tags: [project2, dev]
  project2/prod:
    tags: [project2, prod]
    when_modified:
      depends_on: dev

stacks:
  names:
    project1:
      tag_query: project1
    project2:
      tag_query: project2
`,
		dirs: []string{"project1/dev", "project1/prod", "project2/dev", "project2/prod"},
		runs: []propagationCase{{
			modified: []string{"project1/dev"},
			want: []string{
				"project1/dev@default: modified: project1/dev/main.tf",
				"project1/prod@default: depends_on: project1/dev@default",
			},
		}},
		edges: []string{
			"project1/dev@default -> project1/prod@default (plan)",
			"project2/dev@default -> project2/prod@default (plan)",
		},
	},
	{
		name: "rfd1/stacks configuration defaults",
		cfg: `stacks:
  allow_workspace_in_multiple_stacks: false
  names: {}
`,
		dirs:    []string{"a"},
		members: map[string][]string{"default": {"a@default"}},
	},
	{
		name: "rfd1/per stack configuration names undefined stacks",
		cfg: `stacks:
  names:
    example:
      tag_query: ''
      variables:
        var1: value
        var2: value
      on_change:
        can_apply_after:
          - other_stack1
          - other_stack2
        run_strategy: one-for-one
`,
		dirs:   []string{"a"},
		errors: []string{`unknown stack "other_stack1"`, `unknown stack "other_stack2"`},
	},
	{
		name: "rfd1/define dev and prod",
		cfg: envDirsCfg + `stacks:
  names:
    prod:
      tag_query: production
    dev:
      tag_query: development
`,
		dirs:    envDirs,
		members: map[string][]string{"prod": {"production@default"}, "dev": {"development@default"}},
		edges:   nil,
	},
	{
		name: "rfd1/require promotion of dev",
		cfg: envDirsCfg + `stacks:
  names:
    prod:
      tag_query: production
      on_change:
        can_apply_after:
          - dev
    dev:
      tag_query: development
`,
		dirs:     envDirs,
		rules:    map[string]string{"prod": "plan_after= apply_after=dev modified_by=", "dev": "plan_after= apply_after= modified_by="},
		edges:    []string{"development@default -> production@default (apply)"},
		warnings: []string{"deprecated: on_change"},
		runs: []propagationCase{{
			// can_apply_after gates only; it pulls nothing into the run.
			modified: []string{"development"},
			want:     []string{"development@default: modified: development/main.tf"},
		}},
	},
	{
		name: "rfd1/specify an environment variable",
		cfg: envDirsCfg + `stacks:
  names:
    prod:
      tag_query: production
      variables:
        stack_specific: in-prod-stack
      on_change:
        can_apply_after:
          - dev
    dev:
      tag_query: development
      variables:
        stack_specific: in-dev-stack

workflows:
  - tag_query: ''
    plan:
      - type: run
        cmd: ['echo', '${STACK_VAR_STACK_SPECIFIC}']
      - type: init
      - type: plan
`,
		dirs: envDirs,
		variables: map[string]map[string]string{
			"prod": {"stack_specific": "in-prod-stack"},
			"dev":  {"stack_specific": "in-dev-stack"},
		},
		edges: []string{"development@default -> production@default (apply)"},
	},
	{
		name: "rfd1/specify run environment in the stack",
		cfg: envDirsCfg + `stacks:
  names:
    prod:
      tag_query: production
      variables:
        environment: prod
      on_change:
        can_apply_after:
          - dev
    dev:
      tag_query: development
      variables:
        environment: dev

workflows:
  - tag_query: ''
    environment: '${STACK_VAR_ENVIRONMENT}'
`,
		dirs: envDirs,
		variables: map[string]map[string]string{
			"prod": {"environment": "prod"},
			"dev":  {"environment": "dev"},
		},
	},
	{
		name: "rfd1/specify an engine for a stack",
		cfg: envDirsCfg + `stacks:
  names:
    prod:
      tag_query: production
      variables:
        environment: prod
      on_change:
        apply_after:
          - dev
      engine:
        name: terraform
        tf_version: 1.5.7
    dev:
      tag_query: development
      variables:
        environment: dev
      engine:
        name: tofu
        tf_version: 1.6.1

workflows:
  - tag_query: ''
    environment: '${STACK_VAR_ENVIRONMENT}'
`,
		dirs: envDirs,
		engines: map[string]EngineChoice{
			"production":  {Name: "terraform", Version: "1.5.7"},
			"development": {Name: "tofu", Version: "1.6.1"},
		},
		edges:    []string{"development@default -> production@default (apply)"},
		warnings: []string{"deprecated: write version instead of tf_version"},
	},
	{
		name:    "rfd1/different controls by stack name",
		cfg:     envDirsCfg + designDoc("controls-by-stack-name.yml"),
		dirs:    envDirs,
		members: map[string][]string{"prod": {"production@default"}, "dev": {"development@default"}},
		// The controls are enforced, so nothing is said of them; what
		// they allow is tested in package controls, and in a run with
		// real terraform by cmd/strata's TestControlsByStackName.
		quiet: true,
	},
	{
		name: "rfd1/workspace in multiple stacks shares a state: rejected",
		cfg: `dirs:
  network:
    tags: ['network']
  production:
    tags: ['prod']
  development:
    tags: ['dev']

stacks:
  allow_workspace_in_multiple_stacks: true
  names:
    prod:
      tag_query: 'network or prod'
      variables:
        network_name: prod
    dev:
      tag_query: 'network or dev'
      variables:
        network_name: dev
`,
		dirs:   []string{"network", "production", "development"},
		errors: []string{"dirspace network@default is in stacks prod, dev, whose units would share one state"},
	},
	{
		name: "rfd1/workspace in multiple stacks with shared_state",
		cfg: `dirs:
  network:
    tags: ['network']
    shared_state: true
  production:
    tags: ['prod']
  development:
    tags: ['dev']

stacks:
  allow_workspace_in_multiple_stacks: true
  names:
    prod:
      tag_query: 'network or prod'
      variables:
        network_name: prod
    dev:
      tag_query: 'network or dev'
      variables:
        network_name: dev
`,
		dirs: []string{"network", "production", "development"},
		members: map[string][]string{
			"prod": {"network@default", "production@default"},
			"dev":  {"development@default", "network@default"},
		},
		variables: map[string]map[string]string{
			"prod": {"network_name": "prod"},
			"dev":  {"network_name": "dev"},
		},
	},
	{
		name: "rfd1/workspace in multiple stacks with a per-stack backend",
		cfg: `dirs:
  network:
    tags: ['network']
  production:
    tags: ['prod']
  development:
    tags: ['dev']

stacks:
  allow_workspace_in_multiple_stacks: true
  names:
    prod:
      tag_query: 'network or prod'
    dev:
      tag_query: 'network or dev'

workflows:
  - tag_query: ''
    plan:
      - type: init
        extra_args: ['-backend-config=path=${STRATA_STACK}.tfstate']
      - type: plan
`,
		dirs: []string{"network", "production", "development"},
		members: map[string][]string{
			"prod": {"network@default", "production@default"},
			"dev":  {"development@default", "network@default"},
		},
	},
}
