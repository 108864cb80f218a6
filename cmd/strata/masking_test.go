package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// TestRotatedSecretMasked: a sensitive value rotates from old to new. The
// engine prints the old value where it flows unmarked (through
// nonsensitive()), and the plan's JSON holds it at a sensitive path (the
// sensitive output's before, the prior state). Neither value appears in
// the console (streamed as in GitHub Actions), the report, the summary or
// the step summary, of the plan or of the apply that reuses its saved
// plan.
func TestRotatedSecretMasked(t *testing.T) {
	needTerraform(t)
	const (
		oldSecret = "old-rotated-secret-4711"
		newSecret = "new-rotated-secret-0815"
	)
	config := func(v string) string {
		return "stacks:\n  names:\n    app:\n      tag_query: 'dir:a'\n      sensitive: [TF_VAR_token]\n      variables: {TF_VAR_token: " + v + "}\n"
	}
	root := writeRepo(t, map[string]string{
		"strata.yml": config(oldSecret),
		"a/main.tf": `variable "token" {
  type      = string
  sensitive = true
}
resource "terraform_data" "t" {
  input = nonsensitive(var.token)
}
output "token" {
  value     = var.token
  sensitive = true
}
`,
	})
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	testenv.WriteFile(t, filepath.Join(root, "strata.yml"), config(newSecret))

	// The old value takes the place of the masked one in the printed
	// change of the input (the summary's diff block marks it "!").
	changed := regexp.MustCompile(`(~ |!\s+)input\s+= "\*\*\*" -> "\*\*\*"`)
	for _, cmd := range [][]string{{"plan"}, {"apply", "-auto-approve"}} {
		out := t.TempDir()
		report, summary, step := filepath.Join(out, "report.json"), filepath.Join(out, "summary.md"), filepath.Join(out, "step.md")
		args := append(append([]string(nil), cmd...), "--all", "--report", report, "--summary", summary)
		r := runBin(t, root, append(append([]string(nil), env...), "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+step), args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", cmd[0], r.code, r.stdout, r.stderr)
		}
		if cmd[0] == "apply" && !strings.Contains(r.stdout+r.stderr, "reusing the plan saved at") {
			t.Errorf("apply did not reuse the saved plan:\n%s%s", r.stdout, r.stderr)
		}
		written := map[string]string{"stdout": r.stdout, "stderr": r.stderr}
		for _, f := range []string{report, summary, step} {
			written[filepath.Base(f)] = readFileT(t, f)
		}
		for _, what := range []string{"stdout", "summary.md", "step.md"} {
			if !changed.MatchString(written[what]) {
				t.Errorf("%s: %s does not show the input's change masked:\n%s", cmd[0], what, written[what])
			}
		}
		for what, text := range written {
			for _, secret := range []string{oldSecret, newSecret} {
				if strings.Contains(text, secret) {
					t.Errorf("%s: %s holds %q:\n%s", cmd[0], what, secret, text)
				}
			}
		}
	}
}
