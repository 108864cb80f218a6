package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// AccessControl is `access_control`: who may plan, apply and unlock which
// units (docs/controls.md#who-may-do-what).
type AccessControl struct {
	Pos                           Pos
	Enabled                       Bool            `yaml:"enabled" doc:"false: everyone may do everything (default true when the section is written)"`
	Policies                      *[]AccessPolicy `yaml:"policies" doc:"per tag query, who may do what; the first policy matching a unit decides"`
	ApplyRequireAllDirspaceAccess Bool            `yaml:"apply_require_all_dirspace_access" doc:"an apply refused for one unit is refused for all (default true)"`
	PlanRequireAllDirspaceAccess  Bool            `yaml:"plan_require_all_dirspace_access" doc:"a plan refused for one unit is refused for all (default false)"`
	Unlock                        *[]String       `yaml:"unlock" doc:"who may run the unlock comment command (default *)"`
	TerrateamConfigUpdate         *[]String       `yaml:"terrateam_config_update" doc:"who may run a pull request that changes the config (default *)"`
	CIConfigUpdate                *[]String       `yaml:"ci_config_update" doc:"who may run a pull request that changes CI files (default *)"`
	Files                         *Map[[]String]  `yaml:"files" doc:"path -> who may run a pull request that changes it"`
}

// AccessPolicy is one entry of access_control.policies.
type AccessPolicy struct {
	Pos                    Pos
	TagQuery               String    `yaml:"tag_query" cfg:"required" doc:"the units the policy is for"`
	Plan                   *[]String `yaml:"plan" doc:"who may plan (default none once a policy matches)"`
	Apply                  *[]String `yaml:"apply" doc:"who may apply, auto_apply included"`
	ApplyAutoapprove       *[]String `yaml:"apply_autoapprove" doc:"who may run the apply-autoapprove comment command (default none)"`
	ApplyForce             *[]String `yaml:"apply_force" doc:"who may run the apply-force comment command (default none)"`
	ApplyWithSuperapproval *[]String `yaml:"apply_with_superapproval" doc:"who may apply once a superapprover approved"`
	Superapproval          *[]String `yaml:"superapproval" doc:"whose approval is a superapproval"`
}

// ApplyRequirements is `apply_requirements`: what an apply needs of its
// pull request (docs/controls.md#what-an-apply-requires).
type ApplyRequirements struct {
	Pos                             Pos
	Checks                          *ApplyChecks `yaml:"checks" doc:"per tag query, what an apply needs; the first check matching a unit decides"`
	CreatePendingApplyCheck         Bool         `yaml:"create_pending_apply_check" doc:"a pending commit status \"strata apply\" while a pull request's plans wait to be applied (default true)"`
	CreateCompletedApplyCheckOnNoop Bool         `yaml:"create_completed_apply_check_on_noop" doc:"the status completed when a pull request's plan has nothing to apply (default false)"`
}

// ApplyChecks are apply_requirements.checks: a list of checks, each with
// a tag query, or Terrateam's older form, one map for every unit.
type ApplyChecks struct {
	Pos  Pos
	List []ApplyCheck
	// Legacy: written as one map, which holds for every unit.
	Legacy bool
}

// legacyCheckKeys are the keys of the older one-map form.
var legacyCheckKeys = map[string]bool{"approved": true, "merge_conflicts": true, "status_checks": true}

func (c *ApplyChecks) decodeNode(d *decoder, n *yaml.Node, key string) {
	*c = ApplyChecks{Pos: posOf(n)}
	switch n.Kind {
	case yaml.SequenceNode:
		d.decode(n, reflectValue(&c.List), key)
	case yaml.MappingNode:
		c.Legacy = true
		c.List = make([]ApplyCheck, 1)
		d.decodeStruct(n, reflectValue(&c.List[0]), key, legacyCheckKeys)
	default:
		d.Errorf(posOf(n), key, "expected a list of checks or a map, found %s", kindName(n))
	}
}

// ApplyCheck is one check of apply_requirements.checks.
type ApplyCheck struct {
	Pos                     Pos
	TagQuery                String        `yaml:"tag_query" cfg:"required" doc:"the units the check is for ('' for all)"`
	Approved                *Approved     `yaml:"approved" doc:"approvals the pull request needs"`
	MergeConflicts          *EnabledCheck `yaml:"merge_conflicts" doc:"the pull request merges without conflict (default enabled)"`
	StatusChecks            *StatusChecks `yaml:"status_checks" doc:"the head commit's other checks passed (default enabled)"`
	ApplyAfterMerge         *EnabledCheck `yaml:"apply_after_merge" doc:"apply only once the pull request is merged (default disabled)"`
	RequireReadyForReviewPR Bool          `yaml:"require_ready_for_review_pr" doc:"a draft pull request is not applied (default true)"`
}

// Approved is a check's `approved`.
type Approved struct {
	Pos                     Pos
	Enabled                 Bool      `yaml:"enabled" doc:"approvals are needed (default false)"`
	Count                   Int       `yaml:"count" doc:"older form: approvals from anyone"`
	AnyOf                   *[]String `yaml:"any_of" doc:"approvers of which any_of_count are needed (default anyone)"`
	AnyOfCount              Int       `yaml:"any_of_count" doc:"how many any_of approvals (default 1)"`
	AllOf                   *[]String `yaml:"all_of" doc:"each must have approved"`
	RequireCompletedReviews Bool      `yaml:"require_completed_reviews" doc:"the forge's own review verdict is approved"`
}

// EnabledCheck is a check that is on or off.
type EnabledCheck struct {
	Pos     Pos
	Enabled Bool `yaml:"enabled" doc:"the check holds"`
}

// StatusChecks is a check's `status_checks`.
type StatusChecks struct {
	Pos            Pos
	Enabled        Bool      `yaml:"enabled" doc:"the head commit's checks passed (default true)"`
	IgnoreMatching *[]String `yaml:"ignore_matching" doc:"checks not counted: an exact name or a pattern"`
}

// Roles are the repository roles a `role:` matcher names, strongest first.
var Roles = []string{"admin", "maintain", "write", "triage", "read"}

// overridable are the sections default_branch_overrides may name.
var overridable = []string{"access_control", "apply_requirements", "destination_branches"}

// checkControls checks access_control, apply_requirements,
// default_branch_overrides and the notification policies: their tag
// queries, matchers and patterns.
func checkControls(cfg *Config, c *Collector) {
	if n := cfg.Notifications; n != nil && n.Policies != nil {
		for i, p := range *n.Policies {
			if p.TagQuery.Set {
				checkQuery(p.TagQuery, fmt.Sprintf("notifications.policies[%d].tag_query", i), c)
			}
		}
	}
	if cfg.DefaultBranchOverrides != nil {
		for i, o := range *cfg.DefaultBranchOverrides {
			if !slices.Contains(overridable, o.Value) {
				c.Errorf(o.Pos, fmt.Sprintf("default_branch_overrides[%d]", i), "found %q; expected one of: %s", o.Value, strings.Join(overridable, ", "))
			}
		}
	}
	if ac := cfg.AccessControl; ac != nil {
		if ac.Policies != nil {
			for i, p := range *ac.Policies {
				key := fmt.Sprintf("access_control.policies[%d]", i)
				if p.TagQuery.Set {
					checkQuery(p.TagQuery, key+".tag_query", c)
				}
				checkMatchers(p.Plan, key+".plan", c)
				checkMatchers(p.Apply, key+".apply", c)
				checkMatchers(p.ApplyAutoapprove, key+".apply_autoapprove", c)
				checkMatchers(p.ApplyForce, key+".apply_force", c)
				checkMatchers(p.ApplyWithSuperapproval, key+".apply_with_superapproval", c)
				checkMatchers(p.Superapproval, key+".superapproval", c)
			}
		}
		checkMatchers(ac.Unlock, "access_control.unlock", c)
		checkMatchers(ac.TerrateamConfigUpdate, "access_control.terrateam_config_update", c)
		checkMatchers(ac.CIConfigUpdate, "access_control.ci_config_update", c)
		if ac.Files != nil {
			for _, e := range ac.Files.Entries {
				list := e.Value
				checkMatchers(&list, "access_control.files."+e.Key, c)
			}
		}
	}
	if ar := cfg.ApplyRequirements; ar != nil && ar.Checks != nil {
		for i, chk := range ar.Checks.List {
			key := "apply_requirements.checks"
			if !ar.Checks.Legacy {
				key = fmt.Sprintf("%s[%d]", key, i)
				if chk.TagQuery.Set {
					checkQuery(chk.TagQuery, key+".tag_query", c)
				}
			}
			checkCheck(chk, key, ar.Checks.Legacy, c)
		}
	}
}

// checkCheck checks one apply check's approvals and status patterns.
func checkCheck(chk ApplyCheck, key string, legacy bool, c *Collector) {
	if a := chk.Approved; a != nil {
		akey := key + ".approved"
		if a.Count.Set && !legacy {
			c.Errorf(a.Count.Pos, akey+".count", "count is the older one-map form's; expected any_of_count in a list of checks")
		}
		if a.Count.Set && legacy && (a.AnyOf != nil || a.AllOf != nil || a.AnyOfCount.Set) {
			c.Errorf(a.Count.Pos, akey+".count", "count with any_of, any_of_count or all_of; expected one form (any_of_count counts any_of)")
		}
		for _, n := range []Int{a.Count, a.AnyOfCount} {
			if n.Set && n.Value < 0 {
				c.Errorf(n.Pos, akey, "found %d approvals; expected a number of at least 0", n.Value)
			}
		}
		checkMatchers(a.AnyOf, akey+".any_of", c)
		checkMatchers(a.AllOf, akey+".all_of", c)
	}
	if s := chk.StatusChecks; s != nil && s.IgnoreMatching != nil {
		for i, p := range *s.IgnoreMatching {
			if _, err := regexp.Compile(p.Value); err != nil {
				c.Warnf(p.Pos, fmt.Sprintf("%s.status_checks.ignore_matching[%d]", key, i), "%q is not a pattern (%v); it matches that exact name only", p.Value, err)
			}
		}
	}
}

// checkMatchers checks a list of matchers: *, user:NAME, team:SLUG,
// role:ROLE (repo:ROLE is the same).
func checkMatchers(list *[]String, key string, c *Collector) {
	if list == nil {
		return
	}
	for i, m := range *list {
		if why := matcherProblem(m.Value); why != "" {
			c.Errorf(m.Pos, fmt.Sprintf("%s[%d]", key, i), "found %q: %s; expected *, user:NAME, team:SLUG or role:ROLE (%s)", m.Value, why, strings.Join(Roles, ", "))
		}
	}
}

// matcherProblem says what is wrong with a matcher, or "".
func matcherProblem(m string) string {
	if m == "*" {
		return ""
	}
	kind, name, ok := strings.Cut(m, ":")
	switch {
	case !ok:
		return "no kind"
	case name == "":
		return "no name"
	}
	switch kind {
	case "user", "team":
		return ""
	case "role", "repo":
		if slices.Contains(Roles, name) {
			return ""
		}
		return "no such role"
	}
	return "unknown kind " + kind
}

// Notifications is `notifications`: how a pull request's comments follow
// one another.
type Notifications struct {
	Pos      Pos
	Policies *[]NotificationPolicy `yaml:"policies" doc:"per tag query, what a new comment does with strata's earlier one; the first policy matching a unit of the run decides"`
	Summary  Ignored               `yaml:"summary" cfg:"ignored" doc:"Terrateam's summary comment"`
}

// NotificationPolicy is one entry of notifications.policies.
type NotificationPolicy struct {
	Pos             Pos
	TagQuery        String `yaml:"tag_query" cfg:"required" doc:"the units the policy is for"`
	CommentStrategy String `yaml:"comment_strategy" enum:"append,delete,minimize" doc:"append: a new comment, the earlier kept; delete: the earlier deleted; minimize: the earlier hidden as outdated (default minimize)"`
}

// Automerge is the config's automerge (docs/controls.md#automerge).
type Automerge struct {
	Pos          Pos
	Enabled      Bool `yaml:"enabled" doc:"merge the pull request after its last apply (default false)"`
	DeleteBranch Bool `yaml:"delete_branch" doc:"delete its branch once merged (default false)"`
	// Terrateam configs carry it, outside Terrateam's published schema.
	RequireExplicitApply Bool `yaml:"require_explicit_apply" doc:"only an apply command merges, not a plan's auto_apply (default false)"`
}
