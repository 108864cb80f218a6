package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestWarningsOncePerRun: with real terraform at a terminal, a warning two
// units print alike (a failed check block) is printed once and, after the
// table, counted for both; a config warning is printed once at its
// file:line:col; the closing line counts the warnings as printed, in a
// pipe too, where the engine's warnings have no box and each unit's is
// printed (docs/behaviour.md#console-output).
func TestWarningsOncePerRun(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	const module = `resource "terraform_data" "x" {}

check "always" {
  assert {
    condition     = terraform_data.x.input != null
    error_message = "this check always fails"
  }
}
`
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n  b: {tags: [b]}\n  gone: {tags: [g]}\n",
		"a/main.tf":  module,
		"b/main.tf":  module,
	})
	env := hermeticEnv(t)
	r := onPTY(t, root, env, []string{"plan"})
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.text)
	}
	if n := strings.Count(r.text, "│ Warning: Check block assertion failed"); n != 1 {
		t.Errorf("the check's warning printed %d times, want once:\n%s", n, r.text)
	}
	recap := regexp.MustCompile(`\nwarning printed once above, for 2 units: (a@default, b@default|b@default, a@default): Warning: Check block assertion failed\n`)
	if n := len(recap.FindAllString(r.text, -1)); n != 1 {
		t.Errorf("the check's warning counted for both units %d times after the table, want once:\n%s", n, r.text)
	}
	if n := strings.Count(r.text, "strata.yml:4:3: warning: dirs.gone: dir \"gone\" does not exist\n"); n != 1 {
		t.Errorf("the config's warning printed at its position %d times, want once:\n%s", n, r.text)
	}
	// What was printed: the engine's boxes and strata's warning lines,
	// each of a unit, of the config at a position, or of strata.
	printed := strings.Count(r.text, "│ Warning: ") +
		len(regexp.MustCompile(`(?m)^(?:\[[^\]\n]+\] )?(?:strata: |\S+:\d+:\d+: )?warning: `).FindAllString(r.text, -1))
	m := regexp.MustCompile(`\n(\d+) warnings? printed\n$`).FindStringSubmatch(r.text)
	if m == nil {
		t.Fatalf("no closing line counting the warnings:\n%s", r.text)
	}
	if n, _ := strconv.Atoi(m[1]); n != printed || n != 2 {
		t.Errorf("the closing line counts %d warnings, %d were printed, want 2:\n%s", n, printed, r.text)
	}

	// In a pipe the engine draws no boxes: each unit's warning is
	// printed, and counted.
	p := runBin(t, root, env, "plan")
	out := p.stdout + p.stderr
	printed = len(regexp.MustCompile(`(?m)^(?:\[[^\]\n]+\] )?(?:strata: |\S+:\d+:\d+: )?(?:warning|Warning): `).FindAllString(out, -1))
	if p.code != 0 || printed != 3 || !strings.HasSuffix(p.stdout, "\n3 warnings printed\n") {
		t.Errorf("plan in a pipe: exit %d, %d warnings printed, want 3 and counted:\n%s", p.code, printed, out)
	}
}
