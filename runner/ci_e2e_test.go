package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestGitHubActionsRun runs real terraform as in GitHub Actions, with a CLI
// config file that does not exist (every engine call warns about it) and
// a unit whose plan fails: the failure's reason is the engine's Error
// line, not the warning; the warning is printed once; each step is a
// group; the failure is annotated at its file and line; the report and
// summary name the commit and the CI run.
func TestGitHubActionsRun(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  good: {tags: [good]}
  broken: {tags: [broken]}
stacks:
  names:
    good: {tag_query: good}
    broken: {tag_query: broken}
`,
		"good/main.tf":   "resource \"terraform_data\" \"x\" {}\n",
		"broken/main.tf": "resource \"terraform_data\" \"x\" {\n  bogus = 1\n}\n",
	})
	e := newE2E(t, root, "TF_CLI_CONFIG_FILE="+filepath.Join(t.TempDir(), "missing.tfrc"),
		"GITHUB_ACTIONS=true", "GITHUB_SHA=0123456789abcdef", "GITHUB_SERVER_URL=https://github.example", "GITHUB_REPOSITORY=o/r", "GITHUB_RUN_ID=7")
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	got := statuses(res.Report)
	if got["broken@default"] != string(report.StatusFailed)+" (plan failed: Unsupported argument)" {
		t.Errorf("broken: %s", got["broken@default"])
	}
	if got["good@default"] != string(report.StatusPlanned) {
		t.Errorf("good: %s", got["good@default"])
	}
	con := e.console.String()
	if n := strings.Count(con, "Warning: Unable to open CLI configuration file"); n != 1 {
		t.Errorf("the CLI config warning is printed %d times:\n%s", n, con)
	}
	if !strings.Contains(con, "::group::good@default plan\n") || strings.Count(con, "::group::") != strings.Count(con, "::endgroup::") {
		t.Errorf("groups:\n%s", con)
	}
	if !strings.Contains(con, "::error file=broken/main.tf,line=2,title=broken@default plan failed::Unsupported argument") {
		t.Errorf("no annotation:\n%s", con)
	}
	ci := res.Report.CI
	if ci == nil || ci.Commit != "0123456789abcdef" || ci.RunURL != "https://github.example/o/r/actions/runs/7" {
		t.Errorf("report CI: %+v", ci)
	}
	md := res.Report.Markdown()
	if !strings.HasPrefix(md, "## strata plan: 1 to change, 1 failed\n\n**+1 ~0 -0** in 2 units · commit [`0123456789ab`]") {
		t.Errorf("summary:\n%s", md)
	}
}
