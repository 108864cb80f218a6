package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// initBudget is what one of strata's own packages may allocate before
// main: every command pays for it (docs/architecture.md#what-a-command-costs).
const initBudget = 64 << 10

// TestInitBudget: strata's own packages keep their package-level work
// small, measured in bytes allocated (GODEBUG=inittrace=1), not time. A
// regular expression with a counted repeat compiled at package level
// (`[a-z]{1,255}` is 255 copies of its class) or a template parsed there
// costs every command more than this.
func TestInitBudget(t *testing.T) {
	cmd := exec.Command(strataBin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (main|github\.com/strata-iac/strata/\S+) @.*?, (\d+) bytes, (\d+) allocs$`)
	found := line.FindAllStringSubmatch(string(out), -1)
	if len(found) < 10 {
		t.Fatalf("inittrace named %d of strata's packages:\n%s", len(found), out)
	}
	total := 0
	for _, m := range found {
		n, _ := strconv.Atoi(m[2])
		total += n
		if n > initBudget {
			t.Errorf("%s allocates %d bytes at init, over %d", m[1], n, initBudget)
		}
	}
	if total > 4*initBudget {
		t.Errorf("strata's packages allocate %d bytes at init, over %d", total, 4*initBudget)
	}
}
