package config

import (
	"fmt"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"
)

// DestinationBranch is one entry of destination_branches: the branch a
// pull request goes into (a glob) and, optionally, the branches it may
// come from (globs).
type DestinationBranch struct {
	Pos            Pos
	Branch         String    `yaml:"branch" cfg:"required" doc:"the branch a pull request goes into (a glob)"`
	SourceBranches *[]String `yaml:"source_branches" doc:"the branches it may come from (globs; default any)"`
}

func (b *DestinationBranch) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind == yaml.ScalarNode {
		*b = DestinationBranch{Pos: posOf(n), Branch: String{Value: n.Value, Pos: posOf(n), Set: true}}
		return
	}
	d.decodeStruct(n, reflectValue(b), key, nil)
}

// RunsFor says strata runs for a pull request from source into dest
// (docs/behaviour.md#the-config-file): destination_branches is unset, or
// an entry's branch matches dest and its source_branches (any, when
// unset) match source.
func (c *Config) RunsFor(dest, source string) bool {
	if c.DestinationBranches == nil {
		return true
	}
	for _, e := range *c.DestinationBranches {
		if ok, _ := doublestar.Match(e.Branch.Value, dest); !ok {
			continue
		}
		if e.SourceBranches == nil {
			return true
		}
		for _, s := range *e.SourceBranches {
			if ok, _ := doublestar.Match(s.Value, source); ok {
				return true
			}
		}
	}
	return false
}

// checkDestinations checks destination_branches' globs.
func checkDestinations(cfg *Config, c *Collector) {
	if cfg.DestinationBranches == nil {
		return
	}
	check := func(s String, key string) {
		if !doublestar.ValidatePattern(s.Value) {
			c.Errorf(s.Pos, key, "%q is not a valid glob", s.Value)
		}
	}
	for i, e := range *cfg.DestinationBranches {
		key := fmt.Sprintf("destination_branches[%d]", i)
		check(e.Branch, key+".branch")
		if e.SourceBranches != nil {
			for j, s := range *e.SourceBranches {
				check(s, fmt.Sprintf("%s.source_branches[%d]", key, j))
			}
		}
	}
}
