// Package controls decides whether a person may plan or apply a unit, and
// whether an apply's pull request meets what the config requires of it
// (docs/controls.md). It reads the config's access_control and
// apply_requirements, asks a Forge who someone is and what a pull request
// holds, and returns a decision per unit; it runs nothing and knows no
// forge's API.
package controls

import (
	"regexp"
	"slices"
	"strings"

	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// Matcher is one entry of a matcher list: *, user:NAME, team:SLUG or
// role:ROLE (repo:ROLE is the same).
type Matcher struct {
	Kind string // "*", "user", "team" or "role"
	Name string
}

func (m Matcher) String() string {
	if m.Kind == "*" {
		return "*"
	}
	return m.Kind + ":" + m.Name
}

// parseMatchers reads a matcher list the config check accepted.
func parseMatchers(list *[]config.String) []Matcher {
	if list == nil {
		return nil
	}
	values := make([]string, len(*list))
	for i, s := range *list {
		values[i] = s.Value
	}
	return parseMatcherStrings(values)
}

// parseMatcherStrings reads matchers the config check accepted.
func parseMatcherStrings(list []string) []Matcher {
	out := make([]Matcher, 0, len(list))
	for _, s := range list {
		if s == "*" {
			out = append(out, Matcher{Kind: "*"})
			continue
		}
		kind, name, _ := strings.Cut(s, ":")
		if kind == "repo" {
			kind = "role"
		}
		out = append(out, Matcher{Kind: kind, Name: name})
	}
	return out
}

// everyone is the list that matches anyone.
var everyone = []Matcher{{Kind: "*"}}

// Policy is one access policy: who may do what to the units its query
// matches.
type Policy struct {
	Query       *tagquery.Query
	QueryText   string
	Plan, Apply []Matcher
	// ApplyAutoapprove and ApplyForce are who may run the comment
	// commands of those names (none by default).
	ApplyAutoapprove, ApplyForce []Matcher
	ApplyWithSuperapproval       []Matcher
	Superapproval                []Matcher
}

// Check is one apply check: what an apply of the units its query matches
// needs of its pull request. Each field holds Terrateam's default when
// the config leaves it out.
type Check struct {
	Query     *tagquery.Query
	QueryText string

	Approved                bool
	AnyOf, AllOf            []Matcher // AnyOf empty: anyone's approval counts
	AnyOfCount              int
	RequireCompletedReviews bool

	MergeConflicts  bool
	StatusChecks    bool
	IgnoreMatching  []string
	ignorePatterns  []*regexp.Regexp
	ApplyAfterMerge bool
	ReadyForReview  bool
}

// Controls are a config's controls, compiled.
type Controls struct {
	// Access says access_control is written and enabled.
	Access                        bool
	Policies                      []Policy
	ApplyRequireAllDirspaceAccess bool
	PlanRequireAllDirspaceAccess  bool
	// Changes are who may run a pull request that changes which files.
	Changes ChangeControls
	// Unlock is who may release a pull request's locks (default anyone).
	Unlock []Matcher
	// Requirements says apply_requirements.checks is written.
	Requirements bool
	Checks       []Check
}

// Compile reads the controls of a config the config check accepted.
// Without access_control everyone may do everything; without
// apply_requirements.checks an apply needs nothing of its pull request
// (docs/controls.md#what-an-apply-requires says why this departs from
// Terrateam's defaults).
func Compile(cfg *config.Config) *Controls {
	c := &Controls{ApplyRequireAllDirspaceAccess: true}
	if ac := cfg.AccessControl; ac != nil && ac.Enabled.Get(true) {
		c.Access = true
		c.ApplyRequireAllDirspaceAccess = ac.ApplyRequireAllDirspaceAccess.Get(true)
		c.PlanRequireAllDirspaceAccess = ac.PlanRequireAllDirspaceAccess.Get(false)
		c.Changes = compileChanges(ac)
		c.Unlock = everyone
		if ac.Unlock != nil {
			c.Unlock = parseMatchers(ac.Unlock)
		}
		if ac.Policies == nil {
			c.Policies = []Policy{{Query: tagquery.MustParse(""), Plan: everyone, Apply: everyone}}
		} else {
			for _, p := range *ac.Policies {
				c.Policies = append(c.Policies, Policy{
					Query: queryOf(p.TagQuery.Value), QueryText: p.TagQuery.Value,
					Plan: parseMatchers(p.Plan), Apply: parseMatchers(p.Apply),
					ApplyAutoapprove: parseMatchers(p.ApplyAutoapprove), ApplyForce: parseMatchers(p.ApplyForce),
					ApplyWithSuperapproval: parseMatchers(p.ApplyWithSuperapproval),
					Superapproval:          parseMatchers(p.Superapproval),
				})
			}
		}
	}
	if ar := cfg.ApplyRequirements; ar != nil && ar.Checks != nil {
		c.Requirements = true
		for _, chk := range ar.Checks.List {
			c.Checks = append(c.Checks, compileCheck(chk))
		}
	}
	return c
}

// compileCheck fills a check's defaults as Terrateam does.
func compileCheck(chk config.ApplyCheck) Check {
	out := Check{
		Query: queryOf(chk.TagQuery.Value), QueryText: chk.TagQuery.Value,
		AnyOfCount: 1, MergeConflicts: true, StatusChecks: true,
		ReadyForReview: chk.RequireReadyForReviewPR.Get(true),
	}
	if a := chk.Approved; a != nil {
		out.Approved = a.Enabled.Get(false)
		out.AnyOf, out.AllOf = parseMatchers(a.AnyOf), parseMatchers(a.AllOf)
		out.RequireCompletedReviews = a.RequireCompletedReviews.Get(false)
		switch {
		case a.Count.Set:
			out.AnyOfCount = a.Count.Value
		case a.AnyOfCount.Set:
			out.AnyOfCount = a.AnyOfCount.Value
		}
	}
	if m := chk.MergeConflicts; m != nil {
		out.MergeConflicts = m.Enabled.Get(true)
	}
	if s := chk.StatusChecks; s != nil {
		out.StatusChecks = s.Enabled.Get(true)
		if s.IgnoreMatching != nil {
			for _, p := range *s.IgnoreMatching {
				out.IgnoreMatching = append(out.IgnoreMatching, p.Value)
				// A plain name is that name only; one with pattern
				// characters is a pattern.
				if regexp.QuoteMeta(p.Value) == p.Value {
					continue
				}
				if re, err := regexp.Compile(p.Value); err == nil {
					out.ignorePatterns = append(out.ignorePatterns, re)
				}
			}
		}
	}
	if m := chk.ApplyAfterMerge; m != nil {
		out.ApplyAfterMerge = m.Enabled.Get(false)
	}
	return out
}

// ignored says a status check of this name is not counted: one of the
// names or patterns ignore_matching gives.
func (c *Check) ignored(name string) bool {
	if slices.Contains(c.IgnoreMatching, name) {
		return true
	}
	for _, re := range c.ignorePatterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// queryOf parses a tag query the config check accepted; one that does
// not parse matches nothing, so a control never opens by mistake.
func queryOf(s string) *tagquery.Query {
	q, err := tagquery.Parse(s)
	if err != nil {
		return nil
	}
	return q
}

// PolicyFor is the first policy whose query matches the unit, or nil.
func (c *Controls) PolicyFor(u *stacks.Unit) *Policy {
	for i := range c.Policies {
		if q := c.Policies[i].Query; q != nil && q.Match(u.Subject()) {
			return &c.Policies[i]
		}
	}
	return nil
}

// CheckFor is the first apply check whose query matches the unit, or nil.
func (c *Controls) CheckFor(u *stacks.Unit) *Check {
	for i := range c.Checks {
		if q := c.Checks[i].Query; q != nil && q.Match(u.Subject()) {
			return &c.Checks[i]
		}
	}
	return nil
}

// Any says the controls ask anything of anyone.
func (c *Controls) Any() bool { return c.Access || c.Requirements }
