package job

import (
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

// TestChangeSet: two plans that leave the same resources with the same
// values have the same change set, whatever they start from; other values,
// actions or resources give another; a plan of no-ops has none.
func TestChangeSet(t *testing.T) {
	change := func(addr string, before, after any, actions ...tfjson.Action) *tfjson.ResourceChange {
		return &tfjson.ResourceChange{Address: addr, Change: &tfjson.Change{Actions: actions, Before: before, After: after}}
	}
	set := func(rcs ...*tfjson.ResourceChange) string {
		t.Helper()
		s, err := changeSet(&tfjson.Plan{ResourceChanges: rcs})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	reviewed := set(change("a.x", "c0", "c9", tfjson.ActionUpdate), change("a.y", "y", "y", tfjson.ActionNoop))
	if reviewed == "" {
		t.Fatal("a plan with a change has no change set")
	}
	for name, other := range map[string]string{
		"another start": set(change("a.x", "c7", "c9", tfjson.ActionUpdate)),
		"other order":   set(change("a.y", "y2", "y2", tfjson.ActionNoop), change("a.x", "c0", "c9", tfjson.ActionUpdate)),
	} {
		if other != reviewed {
			t.Errorf("%s: another change set", name)
		}
	}
	for name, other := range map[string]string{
		"other value":    set(change("a.x", "c0", "c8", tfjson.ActionUpdate)),
		"other action":   set(change("a.x", "c0", "c9", tfjson.ActionDelete, tfjson.ActionCreate)),
		"one more":       set(change("a.x", "c0", "c9", tfjson.ActionUpdate), change("a.z", nil, "z", tfjson.ActionCreate)),
		"other resource": set(change("a.w", "c0", "c9", tfjson.ActionUpdate)),
	} {
		if other == reviewed {
			t.Errorf("%s: the same change set", name)
		}
	}
	if s := set(change("a.y", "y", "y", tfjson.ActionNoop), change("d.r", nil, "r", tfjson.ActionRead)); s != "" {
		t.Errorf("no-op and read: change set %q", s)
	}
}

// TestPullRequestOf: the pull request a CI run builds, from its
// environment.
func TestPullRequestOf(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"GITHUB_ACTIONS=true", "GITHUB_REF=refs/pull/5/merge"}, "PR #5"},
		{[]string{"GITHUB_ACTIONS=true", "GITHUB_REF=refs/heads/main"}, ""},
		{[]string{"GITLAB_CI=true", "CI_MERGE_REQUEST_IID=12"}, "MR !12"},
		{[]string{"GITLAB_CI=true"}, ""},
		{[]string{"GITHUB_REF=refs/pull/5/merge"}, ""},
	} {
		if got := PullRequestOf(tc.env); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
	if got := PullRequestName(7, []string{"GITLAB_CI=true"}); got != "MR !7" {
		t.Errorf("GitLab: %q", got)
	}
	if got := PullRequestName(7, nil); got != "PR #7" {
		t.Errorf("elsewhere: %q", got)
	}
}
