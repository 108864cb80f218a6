package report

import (
	"strings"
	"testing"
)

// TestSharedWarnings: an engine warning that several units print alike is
// shown once, naming the units, and left out of their logs; one unit's
// own warning stays in its log.
func TestSharedWarnings(t *testing.T) {
	t.Parallel()
	deprecated := "╷\n│ Warning: Deprecated attribute\n│\n│ The attribute \"x\" is deprecated.\n╵"
	own := "╷\n│ Warning: Value for undeclared variable\n│\n│ b only\n╵"
	plan := "Plan: 1 to add, 0 to change, 0 to destroy."
	rep := &Report{Command: "plan", Stacks: []StackReport{{Name: "s", Path: []string{"s"}, Status: StatusPlanned}}}
	for _, dir := range []string{"a", "b", "c"} {
		log := deprecated + "\n" + plan
		if dir == "b" {
			log = own + "\n" + log
		}
		rep.Units = append(rep.Units, &UnitReport{Dir: dir, Workspace: "default", Stack: "s", Status: StatusPlanned, Changes: Changes{Add: 1}, Log: log})
	}
	shared := rep.sharedWarnings()
	if len(shared) != 1 || shared[0].text != deprecated || strings.Join(shared[0].units, " ") != "a@default b@default c@default" {
		t.Fatalf("shared warnings: %+v", shared)
	}
	for name, text := range map[string]string{"summary": rep.Markdown(), "comment": Comment(rep, "")} {
		if n := strings.Count(text, "Warning: Deprecated attribute"); n != 1 {
			t.Errorf("%s shows the shared warning %d times:\n%s", name, n, text)
		}
		if !strings.Contains(text, "1 warning printed by several units, shown once") || !strings.Contains(text, "3 units: a@default, b@default, c@default") {
			t.Errorf("%s does not say which units print it:\n%s", name, text)
		}
		if !strings.Contains(text, "b only") {
			t.Errorf("%s lost b's own warning:\n%s", name, text)
		}
	}
	if got := warningBlocks("no box here\n╷\n│ Error: x\n╵"); len(got) != 0 {
		t.Errorf("an error box is no warning: %q", got)
	}
}
