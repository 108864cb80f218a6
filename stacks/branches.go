package stacks

import (
	"fmt"
	"strings"

	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/stacks/config"
)

// Branches are the branches of the change a run is for, as Terrateam's tag
// queries see them: dest_branch:<name> and source_branch:<name> are tags
// of every unit while they are known.
type Branches struct {
	Dest, Source string
	// Draft says the pull request the run is for is a draft: dirspaces
	// with autoplan_draft_pr false are then not modified.
	Draft bool
}

// BranchesFromCI reads the branches from a CI's environment
// (ciplatform): a GitHub Actions or GitLab CI pull/merge request gives
// both; a push build gives the branch pushed to as both. Elsewhere they
// are unknown ("").
func BranchesFromCI(getenv func(string) string) Branches {
	j := ciplatform.From(getenv).Job()
	if j.BaseRef != "" {
		return Branches{Dest: j.BaseRef, Source: j.HeadRef, Draft: j.Draft}
	}
	return Branches{Dest: j.Branch, Source: j.Branch}
}

// SetBranches gives every unit the branch tags of b that are known. Only
// unit tags carry them: a stack's members do not change with the branch,
// while workflows, --query and depends_on may.
func (p *Project) SetBranches(b Branches) {
	p.draft = b.Draft
	var add []string
	if b.Dest != "" {
		add = append(add, "dest_branch:"+b.Dest)
	}
	if b.Source != "" {
		add = append(add, "source_branch:"+b.Source)
	}
	if len(add) == 0 {
		return
	}
	for _, u := range p.Units {
		u.Tags = append(append(make([]string, 0, len(u.Tags)+len(add)), u.Tags...), add...)
	}
}

// BranchTagWarnings are warnings for the tag queries that use a branch tag
// when the branches are not known: such a query never matches outside CI
// unless --dest-branch or --source-branch says what they are.
func (p *Project) BranchTagWarnings(b Branches) config.Diagnostics {
	if b.Dest != "" && b.Source != "" {
		return nil
	}
	var out config.Diagnostics
	check := func(q config.String, key string) {
		for _, tag := range []string{"dest_branch:", "source_branch:"} {
			known := (tag == "dest_branch:" && b.Dest != "") || (tag == "source_branch:" && b.Source != "")
			if !known && strings.Contains(q.Value, tag) {
				out = append(out, config.Diagnostic{Severity: config.SeverityWarning, File: p.ConfigFile, Pos: q.Pos, Key: key,
					Message: fmt.Sprintf("the query uses %s but the branch is not known (no CI pull request here): it matches nothing; pass --dest-branch and --source-branch", strings.TrimSuffix(tag, ":"))})
				return
			}
		}
	}
	for i, w := range p.Config.Workflows {
		check(w.TagQuery, fmt.Sprintf("workflows[%d].tag_query", i))
	}
	return out
}
