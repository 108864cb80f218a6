package controls

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-iac/strata/stacks"
	"github.com/strata-iac/strata/stacks/config"
)

// byStack is the stacks design's "different controls based on stack name":
// prod applied only by team:sre with two SRE approvals, dev by anyone. The
// stacks package keeps the example as the design writes it.
var byStack = "dirs:\n  production: {tags: [production]}\n  development: {tags: [development]}\n" + designDoc("controls-by-stack-name.yml")

// designDoc reads an example of the design documents, as the stacks
// package's tests keep them.
func designDoc(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "stacks", "testdata", "designdocs", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// directory is a forge that knows its teams and roles by heart.
type directory struct {
	teams map[string][]string // team -> members
	roles map[string]string
	err   error
	asked int
}

func (d *directory) InTeam(_ context.Context, user, team string) (bool, error) {
	d.asked++
	if d.err != nil {
		return false, d.err
	}
	return slices.Contains(d.teams[team], user), nil
}

func (d *directory) Role(_ context.Context, user string) (string, error) {
	d.asked++
	if d.err != nil {
		return "", d.err
	}
	return d.roles[user], nil
}

func sre() *directory {
	return &directory{
		teams: map[string][]string{"sre": {"alice", "carol", "dave"}, "security": {"sam"}},
		roles: map[string]string{"alice": "admin", "bob": "write", "carol": "maintain", "erin": "read"},
	}
}

// project loads a repository of one module per config dir.
func project(t *testing.T, cfg string, dirs ...string) *stacks.Project {
	t.Helper()
	root := t.TempDir()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "main.tf"), []byte("output \"x\" { value = 1 }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(root, "strata.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := stacks.Load(root, path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// decided renders a decision as unit -> reason, "ok" for allowed.
func decided(units []*stacks.Unit, denied map[*stacks.Unit]string) map[string]string {
	out := map[string]string{}
	for _, u := range units {
		out[u.Name()] = "ok"
		if why, ok := denied[u]; ok {
			out[u.Name()] = why
		}
	}
	return out
}

func open() *PullRequest {
	yes := true
	return &PullRequest{Name: "PR #5", Head: "abc", Mergeable: &yes}
}

// decideCase is one request and the decision it must get: unit name ->
// reason, "ok" for allowed. The units it names are the request.
type decideCase struct {
	name  string
	op    Op
	actor string
	pr    *PullRequest
	want  map[string]string
}

func runDecideCases(t *testing.T, p *stacks.Project, c *Controls, tests []decideCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var units []*stacks.Unit
			for _, u := range p.Units {
				if _, ok := tt.want[u.Name()]; ok {
					units = append(units, u)
				}
			}
			got := decided(units, c.Decide(context.Background(), sre(), Request{Op: tt.op, Actor: tt.actor, PR: tt.pr, Units: units}))
			for u, w := range tt.want {
				if got[u] != w {
					t.Errorf("%s:\n got %s\nwant %s", u, got[u], w)
				}
			}
		})
	}
}

func TestDecideByStack(t *testing.T) {
	t.Parallel()
	p := project(t, byStack, "production", "development")
	c := Compile(p.Config)
	withApprovers := func(a ...string) *PullRequest { pr := open(); pr.Approvers = a; return pr }
	tests := []decideCase{
		{"anyone plans", Plan, "bob", nil, map[string]string{"production@default": "ok", "development@default": "ok"}},
		{"bob may not apply prod, so not dev either", Apply, "bob", withApprovers("alice", "carol"), map[string]string{
			"production@default":  `bob may not apply production@default: access_control policy "stack_name:prod" lets team:sre apply it`,
			"development@default": "bob may not apply production@default, and access_control.apply_require_all_dirspace_access refuses the whole apply",
		}},
		{"alice with one SRE approval", Apply, "alice", withApprovers("carol"), map[string]string{
			"production@default":  `apply_requirements check "stack_name:prod": needs 2 approvals from team:sre, has 1: carol`,
			"development@default": "ok",
		}},
		{"approvals from outside the team do not count", Apply, "alice", withApprovers("carol", "bob", "sam"), map[string]string{
			"production@default":  `apply_requirements check "stack_name:prod": needs 2 approvals from team:sre, has 1: carol`,
			"development@default": "ok",
		}},
		{"alice with two SRE approvals", Apply, "alice", withApprovers("carol", "dave"), map[string]string{
			"production@default": "ok", "development@default": "ok",
		}},
		{"no pull request", Apply, "alice", nil, map[string]string{
			"production@default":  `apply_requirements check "stack_name:prod" needs a pull request (approvals, no merge conflicts, passed status checks), and this apply has none`,
			"development@default": `apply_requirements check "stack_name:dev" needs a pull request (no merge conflicts, passed status checks), and this apply has none`,
		}},
		{"merged: the requirements held when it merged", Apply, "alice", &PullRequest{Name: "PR #5", Merged: true}, map[string]string{
			"production@default": "ok", "development@default": "ok",
		}},
	}
	runDecideCases(t, p, c, tests)
}

// A control naming a stack with instances (stack_name:prod) holds for
// every instance (docs/behaviour.md#stack-instances): prod in two regions
// is applied only by team:sre, each instance alike.
func TestDecideByStackInstances(t *testing.T) {
	t.Parallel()
	cfg := strings.Replace(byStack, "      tag_query: production\n", "      tag_query: production\n      for_each: [us, eu]\n", 1)
	p := project(t, cfg, "production", "development")
	c := Compile(p.Config)
	tests := []decideCase{
		{"bob may apply neither instance of prod", Apply, "bob", &PullRequest{Name: "PR #5", Merged: true}, map[string]string{
			"production@us": `bob may not apply production@us: access_control policy "stack_name:prod" lets team:sre apply it`,
			"production@eu": `bob may not apply production@eu: access_control policy "stack_name:prod" lets team:sre apply it`,
		}},
		{"alice may apply both", Apply, "alice", &PullRequest{Name: "PR #5", Merged: true}, map[string]string{
			"production@us": "ok", "production@eu": "ok", "development@default": "ok",
		}},
	}
	runDecideCases(t, p, c, tests)
}

func TestDecideRequirements(t *testing.T) {
	t.Parallel()
	cfg := `dirs:
  app: {tags: [app]}
apply_requirements:
  checks:
    - tag_query: app
      approved: {enabled: true, all_of: ['team:sre', 'user:sam'], require_completed_reviews: true}
      merge_conflicts: {enabled: true}
      status_checks: {enabled: true, ignore_matching: ['^ci/', 'lint']}
    - tag_query: draftonly
      approved: {enabled: false}
      merge_conflicts: {enabled: false}
      status_checks: {enabled: false}
`
	p := project(t, strings.Replace(cfg, "app: {tags: [app]}", "app: {tags: [app]}\n  notes: {tags: [draftonly]}", 1), "app", "notes")
	c := Compile(p.Config)
	no := false
	tests := []struct {
		name string
		edit func(*PullRequest)
		want string
	}{
		{"all met", func(pr *PullRequest) { pr.Approvers = []string{"carol", "sam"}; pr.ReviewDecision = "approved" }, "ok"},
		{"all_of missing one", func(pr *PullRequest) { pr.Approvers = []string{"carol"}; pr.ReviewDecision = "approved" },
			`apply_requirements check "app": needs an approval from user:sam (all_of)`},
		{"conflicts, failing and pending checks, a draft", func(pr *PullRequest) {
			pr.Approvers, pr.ReviewDecision, pr.Mergeable, pr.Draft = []string{"carol", "sam"}, "approved", &no, true
			pr.Checks = []StatusCheck{{"ci/build", "failure"}, {"lint", "failure"}, {"test", "pending"}, {"docs", "success"}, {"e2e", "failure"}}
		}, `apply_requirements check "app": PR #5 has merge conflicts; status checks not passed: test (pending), e2e (failure); PR #5 is a draft`},
		{"mergeability not yet known", func(pr *PullRequest) {
			pr.Approvers, pr.ReviewDecision, pr.Mergeable = []string{"carol", "sam"}, "approved", nil
		}, `apply_requirements check "app": the forge has not yet said whether PR #5 merges cleanly`},
		{"code owners have not approved", func(pr *PullRequest) {
			pr.Approvers, pr.ReviewDecision = []string{"carol", "sam"}, "review_required"
		}, `apply_requirements check "app": the forge's review verdict is review required, not approved`},
		{"a plain name is that name only", func(pr *PullRequest) {
			pr.Approvers, pr.ReviewDecision = []string{"carol", "sam"}, "approved"
			pr.Checks = []StatusCheck{{"lint", "failure"}, {"golint-strict", "failure"}}
		}, `apply_requirements check "app": status checks not passed: golint-strict (failure)`},
		{"no verdict, changes requested", func(pr *PullRequest) {
			pr.Approvers, pr.ChangesRequested, pr.PendingReviewers = []string{"carol", "sam"}, []string{"erin"}, []string{"dave"}
		}, `apply_requirements check "app": changes requested by erin`},
		{"no verdict, a review still requested", func(pr *PullRequest) {
			pr.Approvers, pr.PendingReviewers = []string{"carol", "sam"}, []string{"dave"}
		}, `apply_requirements check "app": reviews still requested from dave`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pr := open()
			tt.edit(pr)
			got := decided(p.Units, c.Decide(context.Background(), sre(), Request{Op: Apply, Actor: "alice", PR: pr, Units: p.Units}))
			if got["app@default"] != tt.want {
				t.Errorf("\n got %s\nwant %s", got["app@default"], tt.want)
			}
		})
	}
}

func TestDecideAccess(t *testing.T) {
	t.Parallel()
	cfg := `dirs:
  prod: {tags: [prod]}
  dev: {tags: [dev]}
  other: {tags: [other]}
access_control:
  plan_require_all_dirspace_access: true
  policies:
    - tag_query: prod
      plan: ['role:maintain']
      apply: []
      apply_with_superapproval: ['role:write']
      superapproval: ['team:security']
    - tag_query: dev
      plan: ['repo:write', 'user:Erin']
      apply: ['role:write']
`
	p := project(t, cfg, "prod", "dev", "other")
	c := Compile(p.Config)
	tests := []decideCase{
		{"a role at least as strong matches", Plan, "alice", nil, map[string]string{
			"prod@default": "ok", "dev@default": "ok",
		}},
		{"no policy matches: no one may", Plan, "alice", nil, map[string]string{
			"other@default": "no access_control policy matches other@default, so no one may plan it",
			"prod@default":  "alice may not plan other@default, and access_control.plan_require_all_dirspace_access refuses the whole plan",
		}},
		{"plan_require_all_dirspace_access", Plan, "bob", nil, map[string]string{
			"prod@default": `bob may not plan prod@default: access_control policy "prod" lets role:maintain plan it`,
			"dev@default":  "bob may not plan prod@default, and access_control.plan_require_all_dirspace_access refuses the whole plan",
		}},
		{"user names match whatever their case", Plan, "erin", nil, map[string]string{
			"dev@default":  "erin may not plan prod@default, and access_control.plan_require_all_dirspace_access refuses the whole plan",
			"prod@default": `erin may not plan prod@default: access_control policy "prod" lets role:maintain plan it`,
		}},
		{"superapproval lets a writer apply", Apply, "bob", &PullRequest{Name: "PR #5", Approvers: []string{"sam"}}, map[string]string{
			"prod@default": "ok", "dev@default": "ok",
		}},
		{"without the superapproval no one applies prod", Apply, "alice", &PullRequest{Name: "PR #5", Approvers: []string{"carol"}}, map[string]string{
			"prod@default": `alice may not apply prod@default: access_control policy "prod" lets no one apply it`,
		}},
	}
	runDecideCases(t, p, c, tests)
}

// TestNoPullRequestDraftOnly: being ready for review is asked of a pull
// request only; an apply after a push straight to the branch is not held
// by a check that asks nothing else.
func TestNoPullRequestDraftOnly(t *testing.T) {
	t.Parallel()
	cfg := "dirs:\n  notes: {tags: [notes]}\napply_requirements:\n  checks:\n    - {tag_query: notes, merge_conflicts: {enabled: false}, status_checks: {enabled: false}}\n"
	p := project(t, cfg, "notes")
	if denied := Compile(p.Config).Decide(context.Background(), sre(), Request{Op: Apply, Actor: "alice", Units: p.Units}); len(denied) != 0 {
		t.Errorf("denied %v, want the apply allowed", denied)
	}
}

// TestForgeFailsClosed: a forge that cannot answer denies every unit with
// its error, never allows.
func TestForgeFailsClosed(t *testing.T) {
	t.Parallel()
	p := project(t, byStack, "production", "development")
	dir := sre()
	dir.err = errors.New("GET /orgs/acme/teams/sre/memberships/alice: 403 Resource not accessible by integration")
	denied := Compile(p.Config).Decide(context.Background(), dir, Request{Op: Apply, Actor: "alice", PR: open(), Units: p.Units})
	for _, u := range p.Units {
		if !strings.Contains(denied[u], "the controls could not be checked: is alice in team sre: GET /orgs/acme/teams/sre/memberships/alice: 403") {
			t.Errorf("%s: %q, want it denied with the forge's error", u.Name(), denied[u])
		}
	}
}

// TestNoControls: a config without the sections asks nothing of anyone,
// and asks the forge nothing.
func TestNoControls(t *testing.T) {
	t.Parallel()
	p := project(t, "dirs:\n  app: {tags: [app]}\n", "app")
	c := Compile(p.Config)
	dir := sre()
	if denied := c.Decide(context.Background(), dir, Request{Op: Apply, Actor: "nobody", Units: p.Units}); len(denied) != 0 || c.Any() || dir.asked != 0 {
		t.Errorf("denied %v, Any %v, forge asked %d times; want nothing asked", denied, c.Any(), dir.asked)
	}
	off := project(t, "dirs:\n  app: {tags: [app]}\naccess_control: {enabled: false, policies: [{tag_query: app, apply: []}]}\n", "app")
	if denied := Compile(off.Config).Decide(context.Background(), dir, Request{Op: Apply, Actor: "nobody", Units: off.Units}); len(denied) != 0 {
		t.Errorf("access_control.enabled false still denies: %v", denied)
	}
}

// source is a CI run's view of the forge for Command: a directory, an
// actor, a pull request and the default branch's config.
type source struct {
	*directory
	actor   string
	pr      *PullRequest
	prErr   error
	def     *config.Config
	found   bool
	defErr  error
	prAsked int
	// changed are the files the pull request changes.
	changed    []string
	changedErr error
}

func (s *source) Actor() string { return s.actor }

func (s *source) ChangedFiles(context.Context) ([]string, error) { return s.changed, s.changedErr }

func (s *source) ConfigPaths() []string { return []string{"strata.yml", ".terrateam/config.yml"} }

func (s *source) PullRequest(context.Context) (*PullRequest, error) {
	s.prAsked++
	return s.pr, s.prErr
}

func (s *source) DefaultBranchConfig(context.Context) (*config.Config, string, error) {
	if s.found || s.defErr != nil {
		return s.def, "", s.defErr
	}
	return nil, "strata.yml, .terrateam/config.yml at main", nil
}

// parsed reads a config the check must accept.
func parsed(t *testing.T, text string) *config.Config {
	t.Helper()
	cfg, diags := config.Parse("strata.yml", []byte(text))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// TestCommandReadsTheDefaultBranch: a pull request that loosens its own
// controls is held to the default branch's; a default branch with no
// config controls nothing; its default_branch_overrides decides which
// sections it holds; anything that cannot be read refuses every unit.
func TestCommandReadsTheDefaultBranch(t *testing.T) {
	t.Parallel()
	loose := byStack[:strings.Index(byStack, "access_control:")] + "access_control:\n  policies:\n    - tag_query: ''\n      plan: ['*']\n      apply: ['*']\n"
	p := project(t, loose, "production", "development")
	onlyReqs := byStack + "default_branch_overrides: [apply_requirements]\n"
	tests := []struct {
		name string
		src  *source
		op   Op
		auto bool
		want map[string]string
	}{
		{"on the default branch its own controls", &source{actor: "bob", found: true}, Apply, false,
			map[string]string{"production@default": "ok", "development@default": "ok"}},
		{"a pull request that loosens its controls", &source{actor: "bob", def: parsed(t, byStack), found: true}, Apply, false,
			map[string]string{"production@default": `bob may not apply production@default: access_control policy "stack_name:prod" lets team:sre apply it`, "development@default": `bob may not apply production@default, and access_control.apply_require_all_dirspace_access refuses the whole apply`}},
		{"a default branch with no config", &source{actor: "bob"}, Apply, false,
			map[string]string{"production@default": "ok", "development@default": "ok"}},
		// bob passes the branch's access_control, and is held to the default
		// branch's apply_requirements, which need a pull request.
		{"default_branch_overrides leaves access_control to the branch", &source{actor: "bob", def: parsed(t, onlyReqs), found: true}, Apply, false,
			map[string]string{
				"production@default":  `apply_requirements check "stack_name:prod" needs a pull request (approvals, no merge conflicts, passed status checks), and this apply has none`,
				"development@default": `apply_requirements check "stack_name:dev" needs a pull request (no merge conflicts, passed status checks), and this apply has none`,
			}},
		{"plan allowed, its auto_apply refused", &source{actor: "bob", def: parsed(t, byStack), found: true}, Plan, true,
			map[string]string{"production@default": "ok", "development@default": "ok", "auto production@default": `bob may not apply production@default: access_control policy "stack_name:prod" lets team:sre apply it`, "auto development@default": `bob may not apply production@default, and access_control.apply_require_all_dirspace_access refuses the whole apply`}},
		{"an unreadable default branch", &source{actor: "alice", defErr: errors.New("403 Forbidden")}, Plan, false,
			map[string]string{"production@default": "the controls could not be checked: reading the default branch's config: 403 Forbidden", "development@default": "the controls could not be checked: reading the default branch's config: 403 Forbidden"}},
		{"an unreadable pull request", &source{actor: "alice", found: true, prErr: errors.New("502 Bad Gateway")}, Plan, true,
			map[string]string{"production@default": "the controls could not be checked: reading the pull request: 502 Bad Gateway", "development@default": "the controls could not be checked: reading the pull request: 502 Bad Gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.src.directory = sre()
			var auto []*stacks.Unit
			if tt.auto {
				auto = p.Units
			}
			v := Command(context.Background(), tt.src, p.Config, tt.op, p.Units, auto)
			got := decided(p.Units, v.Denied)
			for u, why := range decided(auto, v.AutoApplyDenied) {
				if got[u] == "ok" {
					got["auto "+u] = why
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("decided %v; want %v", got, tt.want)
			}
			for u, w := range tt.want {
				if got[u] != w {
					t.Errorf("%s:\n got %s\nwant %s", u, got[u], w)
				}
			}
		})
	}
}

// TestCommandAsksForThePullRequestOnlyToApply: a plan with nothing to
// auto-apply needs nothing of the pull request, so does not ask for it.
func TestCommandAsksForThePullRequestOnlyToApply(t *testing.T) {
	t.Parallel()
	p := project(t, byStack, "production", "development")
	src := &source{directory: sre(), actor: "bob", found: true}
	if v := Command(context.Background(), src, p.Config, Plan, p.Units, nil); len(v.Denied) != 0 || src.prAsked != 0 {
		t.Errorf("plan: denied %v, asked for the pull request %d times", v.Denied, src.prAsked)
	}
	Command(context.Background(), src, p.Config, Apply, p.Units, nil)
	if src.prAsked != 1 {
		t.Errorf("apply asked for the pull request %d times; want 1", src.prAsked)
	}
}

// TestCommandWarnsOfNoDefaultBranchConfig: a default branch without a
// config while the checkout's config has controls is said on every unit,
// which runs under the default branch's controls (none); a checkout
// without controls, a default branch with a config and the default
// branch itself say nothing.
func TestCommandWarnsOfNoDefaultBranchConfig(t *testing.T) {
	t.Parallel()
	withControls := project(t, byStack, "production", "development")
	without := project(t, byStack[:strings.Index(byStack, "access_control:")], "production", "development")
	for _, tt := range []struct {
		name string
		p    *stacks.Project
		src  *source
		warn bool
	}{
		{"no config there, controls here", withControls, &source{actor: "bob"}, true},
		{"no config there, none here", without, &source{actor: "bob"}, false},
		{"a config there", withControls, &source{actor: "bob", def: parsed(t, byStack), found: true}, false},
		{"on the default branch", withControls, &source{actor: "bob", found: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.src.directory = sre()
			v := Command(context.Background(), tt.src, tt.p.Config, Plan, tt.p.Units, nil)
			for _, u := range tt.p.Units {
				ws := v.Warnings[u]
				want := "the forge answers 404 for the default branch's config (strata.yml, .terrateam/config.yml at main): the controls are the default branch's, and it has none, so the checkout's access_control and apply_requirements are not checked"
				switch {
				case tt.warn && (len(ws) != 1 || ws[0] != want):
					t.Errorf("%s: warnings %q; want %q", u.Name(), ws, want)
				case !tt.warn && len(ws) != 0:
					t.Errorf("%s: warnings %q; want none", u.Name(), ws)
				}
			}
			if len(v.Denied) != 0 && tt.warn {
				t.Errorf("denied %v; the default branch's controls (none) deny nothing", v.Denied)
			}
		})
	}
}
