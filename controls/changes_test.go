package controls

import (
	"context"
	"errors"
	"testing"
)

// TestWhoMayChangeWhat: who may run a pull request that changes the
// config, the CI's configuration or a file access_control.files names;
// a refusal refuses every unit of the command.
func TestWhoMayChangeWhat(t *testing.T) {
	t.Parallel()
	p := project(t, `dirs:
  app: {tags: [app]}
access_control:
  terrateam_config_update: ['team:sre']
  ci_config_update: ['role:admin']
  files:
    app/secrets.tf: ['user:alice']
  policies:
    - {tag_query: '', plan: ['*'], apply: ['*']}
`, "app")
	tests := []struct {
		actor   string
		changed []string
		err     error
		want    string
	}{
		{"bob", []string{"app/main.tf"}, nil, ""},
		{"bob", nil, nil, ""},
		{"bob", []string{"app/main.tf", ".terrateam/config.yml"}, nil, "bob may not plan a pull request that changes .terrateam/config.yml: access_control.terrateam_config_update lets team:sre"},
		{"alice", []string{"strata.yml"}, nil, ""},
		{"carol", []string{".github/workflows/strata.yml"}, nil, "carol may not plan a pull request that changes .github/workflows/strata.yml: access_control.ci_config_update lets role:admin"},
		{"alice", []string{".github/workflows/strata.yml", ".gitlab-ci.yml"}, nil, ""},
		{"bob", []string{"app/secrets.tf"}, nil, `bob may not plan a pull request that changes app/secrets.tf: access_control.files["app/secrets.tf"] lets user:alice`},
		{"alice", []string{"app/secrets.tf", "strata.yml"}, nil, ""},
		{"bob", nil, errors.New("502 Bad Gateway"), "the controls could not be checked: reading the files the pull request changes: 502 Bad Gateway"},
	}
	for _, tt := range tests {
		src := &source{directory: sre(), actor: tt.actor, found: true, changed: tt.changed, changedErr: tt.err}
		v := Command(context.Background(), src, p.Config, Plan, p.Units, nil)
		if got := v.Denied[p.Units[0]]; got != tt.want {
			t.Errorf("%s changes %v:\n got %q\nwant %q", tt.actor, tt.changed, got, tt.want)
		}
	}
	// Without narrowed file keys, the files are never asked for.
	open := project(t, "dirs:\n  app: {tags: [app]}\naccess_control:\n  policies: [{tag_query: '', plan: ['*']}]\n", "app")
	src := &source{directory: sre(), actor: "bob", found: true, changedErr: errors.New("must not be asked")}
	if v := Command(context.Background(), src, open.Config, Plan, open.Units, nil); len(v.Denied) != 0 {
		t.Errorf("default file keys: %v", v.Denied)
	}
}
