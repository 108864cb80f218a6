package stacks

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Every YAML example of the two stacks design documents
// (shared/design-docs/stacks-rfd.adoc and nested-stacks-rfd.adoc), each as
// a repository of root modules: membership, variables, rules after
// resolution, DAG edges and, for the propagation examples, which units a
// change puts in the run.

type propagationCase struct {
	modified []string // dirs modified
	want     []string // "unit: why"
}

type docCase struct {
	name string
	cfg  string
	dirs []string

	members   map[string][]string          // leaf stack -> dirspaces
	variables map[string]map[string]string // stack -> effective variables
	rules     map[string]string            // stack -> stackRules()
	edges     []string                     // full graph edges
	runs      []propagationCase
	engines   map[string]EngineChoice // dir -> engine (From ignored)
	autoApply map[string]bool
	paths     map[string][]string
	errors    []string // substrings of expected errors (then nothing else is checked)
	warnings  []string
	unassign  []string
}

// Directory layouts reused by several examples.
var (
	envDirs     = []string{"production", "development"}
	envDirsCfg  = "dirs:\n  production:\n    tags: [production]\n  development:\n    tags: [development]\n"
	layerDirs   = []string{"network", "base", "prod", "dev"}
	layerDirCfg = "dirs:\n  network:\n    tags: [network]\n  base:\n    tags: [base]\n  prod:\n    tags: [prod]\n  dev:\n    tags: [dev]\n"
	nestedDirs  = []string{"base", "prod/service", "prod/database", "prod/network", "dev/service", "dev/database", "dev/network"}
	nestedCfg   = `dirs:
  base:
    tags: [base]
  prod/service:
    tags: [prod, compute]
  prod/database:
    tags: [prod, database]
  prod/network:
    tags: [prod, network]
  dev/service:
    tags: [dev, compute]
  dev/database:
    tags: [dev, database]
  dev/network:
    tags: [dev, network]
`
)

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
		name: "rfd1/different controls by stack name",
		cfg: envDirsCfg + `stacks:
  names:
    prod:
      tag_query: production
    dev:
      tag_query: development

access_control:
  policies:
    - tag_query: 'stack_name:prod'
      plan: ['*']
      apply: ['team:sre']
    - tag_query: 'stack_name:dev'
      plan: ['*']
      apply: ['*']


apply_requirements:
  checks:
    - tag_query: 'stack_name:prod'
      approved:
        enabled: true
        any_of: ['team:sre']
        any_of_count: 2
    - tag_query: 'stack_name:dev'
      approved:
        enabled: false
`,
		dirs:     envDirs,
		members:  map[string][]string{"prod": {"production@default"}, "dev": {"development@default"}},
		warnings: []string{`access_control: accepted and ignored`, `apply_requirements: accepted and ignored`},
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

var nestedRFDCases = []docCase{
	{
		name: "rfd2/layered stacks: plan_after orders, does not propagate",
		cfg: "dirs:\n  base:\n    tags: [base]\n  dev:\n    tags: [dev]\n" + `stacks:
  names:
    base:
      tag_query: base
    dev:
      tag_query: dev
      rules:
        plan_after:
          - base
`,
		dirs:  []string{"base", "dev"},
		rules: map[string]string{"dev": "plan_after=base apply_after= modified_by="},
		edges: []string{"base@default -> dev@default (plan)"},
		runs: []propagationCase{{
			modified: []string{"base"},
			want:     []string{"base@default: modified: base/main.tf"},
		}},
	},
	{
		name: "rfd2/layered runs: modified_by and plan_after",
		cfg: "dirs:\n  base:\n    tags: [base]\n  dev:\n    tags: [dev]\n" + `stacks:
  names:
    base:
      tag_query: base
    dev:
      tag_query: dev
      rules:
        modified_by:
          - base
        plan_after:
          - base
`,
		dirs:  []string{"base", "dev"},
		rules: map[string]string{"dev": "plan_after=base apply_after= modified_by=base"},
		edges: []string{"base@default -> dev@default (plan)"},
		runs: []propagationCase{{
			modified: []string{"base"},
			want:     []string{"base@default: modified: base/main.tf", "dev@default: modified_by: base"},
		}},
	},
	{
		name: "rfd2/layered runs concise: implicit plan_after",
		cfg: "dirs:\n  base:\n    tags: [base]\n  dev:\n    tags: [dev]\n" + `stacks:
  names:
    base:
      tag_query: base
    dev:
      tag_query: dev
      rules:
        modified_by:
          - base
`,
		dirs:  []string{"base", "dev"},
		rules: map[string]string{"dev": "plan_after=base apply_after= modified_by=base"},
		edges: []string{"base@default -> dev@default (plan)"},
		runs: []propagationCase{{
			modified: []string{"base"},
			want:     []string{"base@default: modified: base/main.tf", "dev@default: modified_by: base"},
		}},
	},
	{
		name: "rfd2/co-stacks and layered stacks",
		cfg: "dirs:\n  base:\n    tags: [base]\n  prod:\n    tags: [prod]\n  dev:\n    tags: [dev]\n" + `stacks:
  names:
    base:
      tag_query: base
    prod:
      tag_query: prod
      rules:
        modified_by:
          - base
        apply_after:
          - dev
    dev:
      tag_query: dev
      rules:
        modified_by:
          - base
`,
		dirs: []string{"base", "prod", "dev"},
		rules: map[string]string{
			"prod": "plan_after=base apply_after=dev modified_by=base",
			"dev":  "plan_after=base apply_after= modified_by=base",
		},
		edges: []string{
			"base@default -> dev@default (plan)",
			"base@default -> prod@default (plan)",
			"dev@default -> prod@default (apply)",
		},
		runs: []propagationCase{{
			modified: []string{"base"},
			want: []string{
				"base@default: modified: base/main.tf",
				"dev@default: modified_by: base",
				"prod@default: modified_by: base",
			},
		}},
	},
	{
		name: "rfd2/modified_by is transitive (the YAML wins over the prose: dev does not run)",
		cfg:  layerDirCfg + designDoc("modified-by-transitive.yml"),
		dirs: layerDirs,
		rules: map[string]string{
			"base": "plan_after=network apply_after= modified_by=network",
			"prod": "plan_after=base,network apply_after=dev modified_by=base,network",
			"dev":  "plan_after=base,network apply_after= modified_by=",
		},
		edges: []string{
			"base@default -> dev@default (plan)",
			"base@default -> prod@default (plan)",
			"dev@default -> prod@default (apply)",
			"network@default -> base@default (plan)",
		},
		runs: []propagationCase{
			{
				modified: []string{"network"},
				want: []string{
					"base@default: modified_by: network",
					"network@default: modified: network/main.tf",
					"prod@default: modified_by: network",
				},
			},
			{
				modified: []string{"base"},
				want: []string{
					"base@default: modified: base/main.tf",
					"prod@default: modified_by: base",
				},
			},
		},
	},
	{
		name: "rfd2/counter-example: plan_after does not propagate",
		cfg:  layerDirCfg + designDoc("plan-after-does-not-propagate.yml"),
		dirs: layerDirs,
		rules: map[string]string{
			"base": "plan_after=network apply_after= modified_by=",
			"prod": "plan_after=base,network apply_after=dev modified_by=base",
			"dev":  "plan_after=base,network apply_after= modified_by=base",
		},
		runs: []propagationCase{
			{
				modified: []string{"network"},
				want:     []string{"network@default: modified: network/main.tf"},
			},
			{
				modified: []string{"base"},
				want: []string{
					"base@default: modified: base/main.tf",
					"dev@default: modified_by: base",
					"prod@default: modified_by: base",
				},
			},
		},
	},
	{
		name: "rfd2/nested stacks",
		cfg: nestedCfg + `stacks:
  names:
    # The prod stack
    prod:
      stacks:
        - prod-service
        - prod-database
        - prod-network
      rules:
        modified_by:
          - base
        apply_after:
          - dev

    # The dev stack
    dev:
      stacks:
        - dev-service
        - dev-database
        - dev-network
      rules:
        modified_by:
          - base

    # The prod stcks
    prod-service:
      tag_query: prod and compute
    prod-database:
      tag_query: prod and database
    prod-network:
      tag_query: prod and network

    # The dev stacks
    dev-service:
      tag_query: dev and compute
    dev-database:
      tag_query: dev and database
    dev-network:
      tag_query: dev and network

    # Base stack
    base:
      tag_query: base
`,
		dirs: nestedDirs,
		members: map[string][]string{
			"base": {"base@default"}, "prod-service": {"prod/service@default"}, "prod-database": {"prod/database@default"},
			"prod-network": {"prod/network@default"}, "dev-service": {"dev/service@default"},
			"dev-database": {"dev/database@default"}, "dev-network": {"dev/network@default"},
		},
		rules: map[string]string{
			"prod-network": "plan_after=base apply_after=dev-database,dev-network,dev-service modified_by=base",
			"dev-service":  "plan_after=base apply_after= modified_by=base",
			"prod":         "plan_after=base apply_after=dev-database,dev-network,dev-service modified_by=base",
		},
		paths: map[string][]string{"prod-network": {"prod", "prod-network"}, "base": {"base"}},
		runs: []propagationCase{{
			modified: []string{"base"},
			want: []string{
				"base@default: modified: base/main.tf",
				"dev/database@default: modified_by: base",
				"dev/network@default: modified_by: base",
				"dev/service@default: modified_by: base",
				"prod/database@default: modified_by: base",
				"prod/network@default: modified_by: base",
				"prod/service@default: modified_by: base",
			},
		}},
		edges: []string{
			"base@default -> dev/database@default (plan)",
			"base@default -> dev/network@default (plan)",
			"base@default -> dev/service@default (plan)",
			"base@default -> prod/database@default (plan)",
			"base@default -> prod/network@default (plan)",
			"base@default -> prod/service@default (plan)",
			"dev/database@default -> prod/database@default (apply)",
			"dev/database@default -> prod/network@default (apply)",
			"dev/database@default -> prod/service@default (apply)",
			"dev/network@default -> prod/database@default (apply)",
			"dev/network@default -> prod/network@default (apply)",
			"dev/network@default -> prod/service@default (apply)",
			"dev/service@default -> prod/database@default (apply)",
			"dev/service@default -> prod/network@default (apply)",
			"dev/service@default -> prod/service@default (apply)",
		},
	},
	{
		name: "rfd2/nested stacks with layered stacks",
		cfg: nestedCfg + `stacks:
  names:
    # The prod stack
    prod:
      stacks:
        - prod-service
        - prod-database
        - prod-network
      rules:
        modified_by:
          - base
        apply_after:
          - dev

    # The dev stack
    dev:
      stacks:
        - dev-service
        - dev-database
        - dev-network
      rules:
        modified_by:
          - base

    # The prod stcks
    prod-service:
      tag_query: prod and compute
      rules:
        plan_after:
          - prod-database
    prod-database:
      tag_query: prod and database
      rules:
        plan_after:
          - prod-network
    prod-network:
      tag_query: prod and network

    # The dev stacks
    dev-service:
      tag_query: dev and compute
      rules:
        plan_after:
          - dev-database
    dev-database:
      tag_query: dev and database
      rules:
        plan_after:
          - dev-network
    dev-network:
      tag_query: dev and network
      
    base:
      tag_query: base
`,
		dirs: nestedDirs,
		rules: map[string]string{
			"prod-service": "plan_after=base,prod-database,prod-network apply_after=dev-database,dev-network,dev-service modified_by=base",
			"dev-network":  "plan_after=base apply_after= modified_by=base",
		},
		// prod-network plans with dev-network but applies only after
		// dev-service, the top of dev; the rest follows through the
		// layers.
		edges: []string{
			"base@default -> dev/network@default (plan)",
			"base@default -> prod/network@default (plan)",
			"dev/database@default -> dev/service@default (plan)",
			"dev/network@default -> dev/database@default (plan)",
			"dev/service@default -> prod/network@default (apply)",
			"prod/database@default -> prod/service@default (plan)",
			"prod/network@default -> prod/database@default (plan)",
		},
	},
	{
		name: "rfd2/nested nested stacks as written: dev and staging are left to imagine",
		cfg: `stacks:
  names:
    everything:
      stacks:
        - prod
        - dev
        - staging
    prod:
      stacks:
        - prod-compute
        - prod-database
    prod-compute:
      stacks:
        - prod-compute-us-east-1
        - prod-compute-us-west-1
    prod-compute-us-east-1:
      tag_query: prod and compute and us-east-1
    prod-compute-us-west-1:
      tag_query: prod and compute and us-west-1
    prod-database:
      stacks:
        - prod-database-us-east-1
        - prod-database-us-west-1
    prod-database-us-east-1:
      tag_query: prod and database and us-east-1
    prod-database-us-west-1:
      tag_query: prod and database and us-west-1
`,
		dirs:   []string{"a"},
		errors: []string{`strata.yml:6:11: stacks.names.everything.stacks[1]: unknown stack "dev"`, `unknown stack "staging"`},
	},
	{
		name: "rfd2/nested nested stacks",
		cfg: `dirs:
  prod/compute/east:
    tags: [prod, compute, us-east-1]
  prod/compute/west:
    tags: [prod, compute, us-west-1]
  prod/database/east:
    tags: [prod, database, us-east-1]
  prod/database/west:
    tags: [prod, database, us-west-1]
stacks:
  names:
    everything:
      stacks:
        - prod
    prod:
      stacks:
        - prod-compute
        - prod-database

    prod-compute:
      stacks:
        - prod-compute-us-east-1
        - prod-compute-us-west-1

    prod-compute-us-east-1:
      tag_query: prod and compute and us-east-1

    prod-compute-us-west-1:
      tag_query: prod and compute and us-west-1


    prod-database:
      stacks:
        - prod-database-us-east-1
        - prod-database-us-west-1

    prod-database-us-east-1:
      tag_query: prod and database and us-east-1

    prod-database-us-west-1:
      tag_query: prod and database and us-west-1
`,
		dirs: []string{"prod/compute/east", "prod/compute/west", "prod/database/east", "prod/database/west"},
		members: map[string][]string{
			"prod-compute-us-east-1":  {"prod/compute/east@default"},
			"prod-compute-us-west-1":  {"prod/compute/west@default"},
			"prod-database-us-east-1": {"prod/database/east@default"},
			"prod-database-us-west-1": {"prod/database/west@default"},
		},
		paths: map[string][]string{
			"prod-compute-us-east-1": {"everything", "prod", "prod-compute", "prod-compute-us-east-1"},
			"prod-database":          {"everything", "prod", "prod-database"},
		},
		edges: nil,
	},
	{
		name: "rfd2/auto apply after",
		cfg: layerDirCfg + `stacks:
  names:
    network:
      tag_query: network
    base:
      tag_query: base
      rules:
        plan_after:
          - network
    prod:
      tag_query: prod
      rules:
        modified_by:
          - base
        apply_after:
          - dev
    dev:
      tag_query: dev
      rules:
        modified_by:
          - base
      auto_apply: true
`,
		dirs:      layerDirs,
		autoApply: map[string]bool{"dev": true, "prod": false, "base": false},
		edges: []string{
			"base@default -> dev@default (plan)",
			"base@default -> prod@default (plan)",
			"dev@default -> prod@default (apply)",
			"network@default -> base@default (plan)",
		},
	},
}

// designDoc reads a stacks section of the design documents kept under
// testdata/designdocs (the CLI's end-to-end tests run the same files).
func designDoc(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "designdocs", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestDesignDocExamples(t *testing.T) {
	for _, tc := range append(append([]docCase(nil), stacksRFDCases...), nestedRFDCases...) {
		t.Run(tc.name, func(t *testing.T) {
			root := testRepo(t, tc.cfg, tc.dirs...)
			p, diags := loadDiags(t, root)
			if len(tc.errors) > 0 {
				for _, want := range tc.errors {
					if !hasDiag(diags, SeverityError, want) {
						t.Errorf("expected an error containing %q; got:\n%s", want, diagText(diags))
					}
				}
				return
			}
			if diags.HasErrors() {
				t.Fatalf("unexpected errors:\n%s", diagText(diags))
			}
			for _, want := range tc.warnings {
				if !hasDiag(diags, SeverityWarning, want) {
					t.Errorf("expected a warning containing %q; got:\n%s", want, diagText(diags))
				}
			}
			if tc.members != nil {
				got := membership(p)
				for stack, want := range tc.members {
					if !reflect.DeepEqual(got[stack], want) {
						t.Errorf("members of %s = %v, want %v", stack, got[stack], want)
					}
				}
			}
			if tc.unassign != nil {
				var got []string
				for _, ds := range p.Unassigned {
					got = append(got, ds.ID())
				}
				if !reflect.DeepEqual(got, tc.unassign) {
					t.Errorf("unassigned = %v, want %v", got, tc.unassign)
				}
			}
			for stack, want := range tc.variables {
				s, _ := p.Stack(stack)
				got := map[string]string{}
				for _, v := range s.Variables {
					got[v.Name] = v.Value
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("variables of %s = %v, want %v", stack, got, want)
				}
			}
			for stack, want := range tc.rules {
				if got := stackRules(p, stack); got != want {
					t.Errorf("rules of %s:\n got %s\nwant %s", stack, got, want)
				}
			}
			for stack, want := range tc.autoApply {
				s, _ := p.Stack(stack)
				if s.AutoApply != want {
					t.Errorf("auto_apply of %s = %t, want %t", stack, s.AutoApply, want)
				}
			}
			for stack, want := range tc.paths {
				s, _ := p.Stack(stack)
				if !reflect.DeepEqual(s.Path, want) {
					t.Errorf("path of %s = %v, want %v", stack, s.Path, want)
				}
			}
			for dir, want := range tc.engines {
				got, err := p.EngineFor(p.UnitsIn(dir)[0])
				if err != nil {
					t.Fatal(err)
				}
				got.From = ""
				if got != want {
					t.Errorf("engine of %s = %+v, want %+v", dir, got, want)
				}
			}
			if tc.edges != nil || tc.members != nil {
				got := graphEdges(fullGraph(t, p))
				if !reflect.DeepEqual(got, tc.edges) {
					t.Errorf("edges:\n got %q\nwant %q", got, tc.edges)
				}
			}
			for _, run := range tc.runs {
				got := runWhy(modifiedRun(t, p, run.modified...))
				if !reflect.DeepEqual(got, run.want) {
					t.Errorf("modified %v: run\n got %q\nwant %q", run.modified, got, run.want)
				}
			}
		})
	}
}

func diagText(ds Diagnostics) string {
	s := ""
	for _, d := range ds {
		s += "  " + d.String() + "\n"
	}
	return s
}
