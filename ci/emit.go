package ci

import (
	"bytes"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/strata-iac/strata/stacks/config"
)

// The CI files strata writes (docs/ci.md, README "Running in CI"): a
// reusable GitHub Actions workflow with a fixed number of wave jobs, each
// a matrix over the shards ci start says its wave has, skipped when the
// run has no such wave (docs/ci.md#waves-on-github-actions); for GitLab a
// static parent pipeline whose start job writes a child pipeline with one
// job per wave and shard, ordered by needs as the run's units are. Every file is built as YAML nodes and
// marshalled, so no value can break the YAML, and no value reaches a shell
// script except through an environment variable. This file holds the
// options and the YAML node builders; emit_github.go writes the workflow,
// emit_gitlab.go the parent and child pipelines.

// DefaultShards is the most jobs a wave is spread over unless told.
const DefaultShards = 8

// DefaultMaxWaves is the number of wave jobs of the GitHub workflow unless
// told: the most waves a run of it can have, whatever the repository's
// graph is when the workflow is written (docs/ci.md#waves-on-github-actions).
const DefaultMaxWaves = 16

// MaxWaveJobs is the most wave jobs the GitHub workflow may have: each
// adds about 4 KB, and GitHub Actions starts no run of a workflow file
// over 500 KB.
const MaxWaveJobs = 100

// GitLabMaxNeeds is the most jobs one GitLab job may need
// (ci_max_needs_size); a job that waits for more waits through join jobs.
const GitLabMaxNeeds = 50

// GitHubOptions shape the workflow EmitGitHub writes.
type GitHubOptions struct {
	// MaxWaves is the number of wave jobs (1 to MaxWaveJobs): the most
	// waves a run can have. Which of them run, and over which shards, is
	// ci start's output; `strata ci start --max-waves` fails a run that
	// needs more, saying how to write the workflow again.
	MaxWaves int
	// Shards is the default of the shards input (1 to MaxShards: a
	// matrix holds at most 256 jobs).
	Shards int
	// Version is the strata that writes the workflow: the strata-version
	// input's default (DefaultStrataVersion).
	Version string
	// CheckoutStrategy is the config's checkout_strategy, the
	// checkout-strategy input's default: merge or checkout.
	CheckoutStrategy string
	// OIDC: the config has oidc steps, so the jobs that run units may
	// ask for the run's OIDC token (id-token: write).
	OIDC bool
}

// DefaultGitHubOptions are the options of `strata ci emit github` without
// flags.
func DefaultGitHubOptions() GitHubOptions {
	return GitHubOptions{MaxWaves: DefaultMaxWaves, Shards: DefaultShards}
}

// GitLabOptions shape the pipelines EmitGitLabParent and EmitGitLabChild
// write.
type GitLabOptions struct {
	// Shards is the default of STRATA_SHARDS (parent).
	Shards int
	// Image is the default of STRATA_IMAGE (parent) and the image of the
	// child's jobs: an image with strata and a shell.
	Image string
	// OIDCAudiences are the audiences of the config's oidc steps: the
	// child's jobs get an OIDC token for them as STRATA_OIDC_TOKEN.
	OIDCAudiences []string
	// CheckoutStrategy is the config's checkout_strategy (parent: the
	// default of STRATA_CHECKOUT_STRATEGY; child: the run's).
	CheckoutStrategy string
	// DestinationBranches are the config's destination_branches: the
	// parent's rules run for them only.
	DestinationBranches []config.DestinationBranch
	// MergeTarget is the target branch's commit the run's start merged a
	// merge request with (checkout_strategy merge): every child job
	// merges the same commit.
	MergeTarget string
}

// DefaultImage is strata's release image (Dockerfile).
const DefaultImage = "ghcr.io/strata-iac/strata:latest"

// DefaultGitLabOptions are the options of `strata ci emit gitlab` without
// flags.
func DefaultGitLabOptions() GitLabOptions {
	return GitLabOptions{Shards: DefaultShards, Image: DefaultImage}
}

// YAML node builders: mappings keep the order they are given in.

func yMap(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		yAdd(n, kv[i].(string), kv[i+1].(*yaml.Node))
	}
	return n
}

func yAdd(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, yStr(key), value)
}

// yStr is a string, plain when that reads back as the same string.
func yStr(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// yQuoted is a string always double-quoted: a value from the user or the
// manifest.
func yQuoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func yInt(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}

func yBool(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func ySeq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

func yStrs(ss ...string) *yaml.Node {
	n := ySeq()
	for _, s := range ss {
		n.Content = append(n.Content, yStr(s))
	}
	return n
}

func yFlowStrs(ss ...string) *yaml.Node {
	n := yStrs(ss...)
	n.Style = yaml.FlowStyle
	if len(ss) == 1 && ss[0] == "" {
		n.Content[0].Style = yaml.DoubleQuotedStyle
	}
	return n
}

func yMarshal(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
