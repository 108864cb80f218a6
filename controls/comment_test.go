package controls

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseComment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body    string
		want    *CommentCommand
		wantErr string
	}{
		{"strata plan", &CommentCommand{Action: "plan"}, ""},
		{"terrateam plan dir:ec2", &CommentCommand{Action: "plan", Query: "dir:ec2"}, ""},
		{"  \n strata apply  stack:prod and not dir:legacy  \nthanks!", &CommentCommand{Action: "apply", Query: "stack:prod and not dir:legacy"}, ""},
		{"terrateam apply-autoapprove", &CommentCommand{Action: "apply-autoapprove"}, ""},
		{"strata apply_force tag:db", &CommentCommand{Action: "apply-force", Query: "tag:db"}, ""},
		{"strata unlock", &CommentCommand{Action: "unlock"}, ""},
		{"strata unlock a@default  b@default", &CommentCommand{Action: "unlock", Units: []string{"a@default", "b@default"}}, ""},
		{"strata help", &CommentCommand{Action: "help"}, ""},
		{"terrateam gate approve denied-resources", &CommentCommand{Action: "gate", Tokens: []string{"denied-resources"}}, ""},
		{"strata gate approve", nil, "strata gate: expected gate approve TOKEN"},
		{"strata gate open x", nil, "strata gate: expected gate approve TOKEN"},
		{"LGTM, strata plan later", nil, ErrNotACommand.Error()},
		{"stratas plan", nil, ErrNotACommand.Error()},
		{"", nil, ErrNotACommand.Error()},
		{"strata", nil, "strata: no action; expected one of: plan, apply, apply-autoapprove, apply-force, unlock, gate, help"},
		{"terrateam destroy", nil, "terrateam destroy: unknown action; expected one of: plan, apply, apply-autoapprove, apply-force, unlock, gate, help"},
		{"strata plan (dir:a", nil, `strata plan: the tag query "(dir:a": `},
		{"strata plan " + strings.Repeat("a ", MaxCommentLine), nil, "bytes long; expected at most 4096"},
	}
	for _, tt := range tests {
		got, err := ParseComment(tt.body)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", tt.body, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.body, err)
			continue
		}
		if got.Action != tt.want.Action || got.Query != tt.want.Query || !slices.Equal(got.Units, tt.want.Units) || !slices.Equal(got.Tokens, tt.want.Tokens) {
			t.Errorf("%q: got %+v, want %+v", tt.body, got, tt.want)
		}
	}
}

// TestCommentCommandOps: what each action runs and under which control.
func TestCommentCommandOps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		action   string
		op       Op
		command  string
		reviewed bool
	}{
		{"plan", Plan, "plan", false},
		{"apply", Apply, "apply", true},
		{"apply-autoapprove", ApplyAutoapprove, "apply", false},
		{"apply-force", ApplyForce, "apply", true},
		{"unlock", Plan, "", false},
		{"help", Plan, "", false},
	}
	for _, tt := range tests {
		cc := &CommentCommand{Action: tt.action}
		if cc.Op() != tt.op || cc.Command() != tt.command || cc.ReviewedOnly() != tt.reviewed {
			t.Errorf("%s: op %s, command %q, reviewed only %v; want %s, %q, %v", tt.action, cc.Op(), cc.Command(), cc.ReviewedOnly(), tt.op, tt.command, tt.reviewed)
		}
	}
}

func FuzzParseComment(f *testing.F) {
	for _, s := range []string{"strata plan", "terrateam apply dir:a and tag:b", "strata unlock x y", "strata plan ((", "strata"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cc, err := ParseComment(body)
		if err != nil {
			if cc != nil {
				t.Fatalf("%q: a command and an error", body)
			}
			return
		}
		if !slices.Contains(actions, cc.Action) {
			t.Fatalf("%q: action %q", body, cc.Action)
		}
		if len(cc.Query) > MaxCommentLine {
			t.Fatalf("%q: a query over the budget", body)
		}
	})
}

// TestDecideCommentCommands: apply-autoapprove and apply-force are their
// policies' own lists (none by default, and no one without
// access_control); apply-force is not held back by apply_requirements,
// apply-autoapprove is.
func TestDecideCommentCommands(t *testing.T) {
	t.Parallel()
	cfg := `dirs:
  prod: {tags: [prod]}
  dev: {tags: [dev]}
access_control:
  apply_require_all_dirspace_access: false
  policies:
    - tag_query: prod
      apply: ['team:sre']
      apply_force: ['user:alice']
    - tag_query: dev
      apply_autoapprove: ['role:write']
apply_requirements:
  checks:
    - tag_query: ''
      approved: {enabled: true, any_of_count: 1}
`
	p := project(t, cfg, "prod", "dev")
	c := Compile(p.Config)
	unapproved := open()
	tests := []decideCase{
		{"apply-force by its list, with no approval", ApplyForce, "alice", unapproved, map[string]string{"prod@default": "ok"}},
		{"apply-force is not apply", ApplyForce, "carol", unapproved, map[string]string{
			"prod@default": `carol may not apply-force prod@default: access_control policy "prod" lets user:alice apply-force it (apply_force)`,
		}},
		{"apply-force none by default", ApplyForce, "alice", unapproved, map[string]string{
			"dev@default": `alice may not apply-force dev@default: access_control policy "dev" lets no one apply-force it (apply_force)`,
		}},
		{"apply-autoapprove still needs the approvals", ApplyAutoapprove, "bob", unapproved, map[string]string{
			"dev@default": `apply_requirements check "": needs 1 approval, has none`,
		}},
		{"apply-autoapprove approved", ApplyAutoapprove, "bob", &PullRequest{Name: "PR #5", Mergeable: unapproved.Mergeable, Approvers: []string{"carol"}}, map[string]string{
			"dev@default": "ok",
		}},
		{"apply-autoapprove none by default", ApplyAutoapprove, "alice", unapproved, map[string]string{
			"prod@default": `alice may not apply-autoapprove prod@default: access_control policy "prod" lets no one apply-autoapprove it (apply_autoapprove)`,
		}},
	}
	runDecideCases(t, p, c, tests)

	none := project(t, "dirs:\n  app: {tags: [app]}\n", "app")
	denied := Compile(none.Config).Decide(context.Background(), sre(), Request{Op: ApplyForce, Actor: "alice", PR: open(), Units: none.Units})
	if want := "alice may not apply-force app@default: no access_control policy lets anyone apply-force (access_control.policies[].apply_force, none by default)"; denied[none.Units[0]] != want {
		t.Errorf("apply-force without access_control: %q, want %q", denied[none.Units[0]], want)
	}
}

// TestUnlock: access_control.unlock says who may release a pull
// request's locks, anyone by default; the forge failing refuses.
func TestUnlock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cfg, actor, want string
		err                    error
	}{
		{"no access_control", "dirs:\n  app: {}\n", "erin", "", nil},
		{"anyone by default", "dirs:\n  app: {}\naccess_control: {policies: [{tag_query: app, plan: ['*']}]}\n", "erin", "", nil},
		{"a team", "dirs:\n  app: {}\naccess_control: {unlock: ['team:sre']}\n", "carol", "", nil},
		{"not in the team", "dirs:\n  app: {}\naccess_control: {unlock: ['team:sre']}\n", "erin", "erin may not unlock: access_control.unlock lets team:sre", nil},
		{"the forge fails", "dirs:\n  app: {}\naccess_control: {unlock: ['team:sre']}\n", "erin", "the controls could not be checked: is erin in team sre: 502", errors.New("502")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := sre()
			dir.err = tt.err
			cfg := parsed(t, tt.cfg)
			src := &source{directory: dir, actor: tt.actor, def: cfg, found: true}
			if got := Unlock(context.Background(), src, cfg); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
