package stacks

// nestedRFDCases are the examples of the nested stacks design document
// (nested-stacks-rfd.adoc), checked by TestDesignDocExamples.
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
