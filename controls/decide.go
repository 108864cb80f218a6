package controls

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// Op is what a person asks to do to units.
type Op string

// The operations access_control governs; an auto_apply in plan is Apply.
// ApplyAutoapprove and ApplyForce are the comment commands of those
// names (docs/controls.md#comment-commands): the first plans and applies
// in one go, with no reviewed plan; the second applies the reviewed plans
// without apply_requirements.
const (
	Plan             Op = "plan"
	Apply            Op = "apply"
	ApplyAutoapprove Op = "apply-autoapprove"
	ApplyForce       Op = "apply-force"
)

// Applies says the operation applies.
func (op Op) Applies() bool { return op != Plan }

// key is the operation's key in an access_control policy.
func (op Op) key() string { return strings.ReplaceAll(string(op), "-", "_") }

// Forge answers who someone is in the repository's forge. An error is
// never read as "no": a decision that needed the answer denies
// (docs/controls.md#when-the-forge-fails).
type Forge interface {
	// InTeam says whether user is a member of the team, by its slug.
	InTeam(ctx context.Context, user, team string) (bool, error)
	// Role is user's role in the repository: one of stacks.Roles, or ""
	// for none.
	Role(ctx context.Context, user string) (string, error)
}

// KnownRole says r is one of the repository roles role: matchers name.
func KnownRole(r string) bool { return slices.Contains(config.Roles, r) }

// PullRequest is what apply_requirements read of an apply's pull request.
type PullRequest struct {
	// Name is how people know it: "PR #5", "MR !5".
	Name string
	// Number is its number (a merge request's IID).
	Number int
	Head   string
	// Base is the branch it merges into.
	Base   string
	Draft  bool
	Merged bool
	// Closed says it was closed without being merged.
	Closed bool
	// Mergeable is nil while the forge has not decided.
	Mergeable *bool
	// Approvers approved the head commit, each once, in order.
	Approvers []string
	// ReviewDecision is the forge's own verdict, with code owners:
	// "approved", "changes_requested", "review_required", or "" when the
	// branch requires no review.
	ReviewDecision string
	// PendingReviewers are asked for a review and have not given one.
	PendingReviewers []string
	// ChangesRequested are the reviewers whose latest verdict requests
	// changes.
	ChangesRequested []string
	// Checks are the head commit's statuses and check runs, strata's own
	// (those of this CI run) left out.
	Checks []StatusCheck
}

// StatusCheck is one status or check run of a commit.
type StatusCheck struct {
	Name string
	// State: success, neutral and skipped pass; anything else (pending,
	// failure, error, cancelled, …) does not.
	State string
}

// passed says the check does not hold an apply back.
func (s StatusCheck) passed() bool {
	return s.State == "success" || s.State == "neutral" || s.State == "skipped"
}

// Request is one command's question: may Actor do Op to Units, under PR.
type Request struct {
	Op    Op
	Actor string
	// PR is the pull request the units are applied for: the one a comment
	// or pull request event names, or the one that merged the commit;
	// nil when there is none.
	PR    *PullRequest
	Units []*stacks.Unit
	// Changed are the files the pull request changes, a rename's old and
	// new paths both, and ConfigFiles the paths of the repository's
	// config; both nil when there is no pull request to read them of.
	Changed, ConfigFiles []string
}

// Decide returns the units Request may not touch, each with why, in words
// that name the policy or requirement and what is missing. Units it does
// not name are allowed. A forge that fails denies every unit, with its
// error.
func (c *Controls) Decide(ctx context.Context, f Forge, req Request) map[*stacks.Unit]string {
	d := &decider{c: c, f: f, req: req, ctx: ctx, teams: map[[2]string]bool{}, roles: map[string]string{}}
	if c.Access && req.Changed != nil {
		// Who may change a file decides for the whole pull request.
		why, err := d.changes(req.Changed, req.ConfigFiles)
		if err != nil {
			return denyAll(req.Units, fmt.Sprintf("the controls could not be checked: %v", err))
		}
		if why != "" {
			return denyAll(req.Units, why)
		}
	}
	denied := map[*stacks.Unit]string{}
	for _, u := range req.Units {
		why, err := d.access(u)
		if err != nil {
			return denyAll(req.Units, fmt.Sprintf("the controls could not be checked: %v", err))
		}
		if why != "" {
			denied[u] = why
		}
	}
	if d.allOrNothing(denied) || !req.Op.Applies() || req.Op == ApplyForce {
		// apply-force is the apply that apply_requirements do not hold
		// back: who may run it is the control.
		return denied
	}
	// A check's answer depends on the check and the pull request only.
	checked := map[*Check]string{}
	for _, u := range req.Units {
		if _, ok := denied[u]; ok {
			continue
		}
		chk := c.CheckFor(u)
		why, ok := checked[chk]
		if !ok {
			var err error
			if why, err = d.requirements(chk); err != nil {
				return denyAll(req.Units, fmt.Sprintf("the controls could not be checked: %v", err))
			}
			checked[chk] = why
		}
		if why != "" {
			denied[u] = why
		}
	}
	return denied
}

// denyAll denies every unit with one reason.
func denyAll(units []*stacks.Unit, why string) map[*stacks.Unit]string {
	out := make(map[*stacks.Unit]string, len(units))
	for _, u := range units {
		out[u] = why
	}
	return out
}

// allOrNothing denies the whole request when access to one unit was
// refused and the config requires access to all of them, and says so.
func (d *decider) allOrNothing(denied map[*stacks.Unit]string) bool {
	all := d.c.ApplyRequireAllDirspaceAccess
	key := "apply_require_all_dirspace_access"
	if d.req.Op == Plan {
		all, key = d.c.PlanRequireAllDirspaceAccess, "plan_require_all_dirspace_access"
	}
	if !all || len(d.refused) == 0 {
		return false
	}
	for _, u := range d.req.Units {
		if _, ok := denied[u]; !ok {
			denied[u] = fmt.Sprintf("%s may not %s %s, and access_control.%s refuses the whole %s", d.req.Actor, d.req.Op, d.refused[0].Name(), key, d.req.Op)
		}
	}
	return true
}

// decider answers one request, asking the forge each question once.
type decider struct {
	c       *Controls
	f       Forge
	req     Request
	ctx     context.Context
	teams   map[[2]string]bool
	roles   map[string]string
	refused []*stacks.Unit // units access_control refused, in order
}

// access says why the actor may not do the request's Op to u, or "".
func (d *decider) access(u *stacks.Unit) (string, error) {
	if !d.c.Access {
		if d.req.Op == ApplyAutoapprove || d.req.Op == ApplyForce {
			d.refused = append(d.refused, u)
			return fmt.Sprintf("%s may not %s %s: no access_control policy lets anyone %s (access_control.policies[].%s, none by default)", d.req.Actor, d.req.Op, u.Name(), d.req.Op, d.req.Op.key()), nil
		}
		return "", nil
	}
	p := d.c.PolicyFor(u)
	if p == nil {
		d.refused = append(d.refused, u)
		return fmt.Sprintf("no access_control policy matches %s, so no one may %s it", u.Name(), d.req.Op), nil
	}
	list := p.listFor(d.req.Op)
	ok, err := d.matchesAny(d.req.Actor, list)
	if err != nil || ok {
		return "", err
	}
	if d.req.Op == Apply && len(p.ApplyWithSuperapproval) > 0 {
		if ok, err := d.superapproved(p); err != nil || ok {
			return "", err
		}
	}
	d.refused = append(d.refused, u)
	why := fmt.Sprintf("%s may not %s %s: access_control policy %q lets %s %s it", d.req.Actor, d.req.Op, u.Name(), p.QueryText, describe(list), d.req.Op)
	if d.req.Op == ApplyAutoapprove || d.req.Op == ApplyForce {
		why += fmt.Sprintf(" (%s)", d.req.Op.key())
	}
	return why, nil
}

// listFor is who the policy lets do op.
func (p *Policy) listFor(op Op) []Matcher {
	switch op {
	case Apply:
		return p.Apply
	case ApplyAutoapprove:
		return p.ApplyAutoapprove
	case ApplyForce:
		return p.ApplyForce
	}
	return p.Plan
}

// superapproved says the actor may apply with a superapproval and a
// superapprover approved the pull request.
func (d *decider) superapproved(p *Policy) (bool, error) {
	may, err := d.matchesAny(d.req.Actor, p.ApplyWithSuperapproval)
	if err != nil || !may || d.req.PR == nil {
		return false, err
	}
	for _, a := range d.req.PR.Approvers {
		if ok, err := d.matchesAny(a, p.Superapproval); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// describe names a matcher list for a reason.
func describe(list []Matcher) string {
	if len(list) == 0 {
		return "no one"
	}
	s := make([]string, len(list))
	for i, m := range list {
		s[i] = m.String()
	}
	return strings.Join(s, ", ")
}

// matchesAny says user matches one of the list.
func (d *decider) matchesAny(user string, list []Matcher) (bool, error) {
	for _, m := range list {
		ok, err := d.matches(user, m)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// matches says user matches m: role:R matches R and every stronger role.
func (d *decider) matches(user string, m Matcher) (bool, error) {
	switch m.Kind {
	case "*":
		return true, nil
	case "user":
		return strings.EqualFold(user, m.Name), nil
	case "team":
		k := [2]string{strings.ToLower(user), m.Name}
		if in, ok := d.teams[k]; ok {
			return in, nil
		}
		in, err := d.f.InTeam(d.ctx, user, m.Name)
		if err != nil {
			return false, fmt.Errorf("is %s in team %s: %w", user, m.Name, err)
		}
		d.teams[k] = in
		return in, nil
	case "role":
		k := strings.ToLower(user)
		role, ok := d.roles[k]
		if !ok {
			var err error
			if role, err = d.f.Role(d.ctx, user); err != nil {
				return false, fmt.Errorf("the repository role of %s: %w", user, err)
			}
			d.roles[k] = role
		}
		has, want := slices.Index(config.Roles, role), slices.Index(config.Roles, m.Name)
		// A stronger role comes first.
		return has >= 0 && want >= 0 && has <= want, nil
	}
	return false, nil
}
