package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestTerrateamWorkflow: a Terrateam-style config runs its workflow: a run
// step before plan writes $environment (a stack variable) to a file, an
// env step sets a value a later run step reads, the workflow's environment
// is substituted, a captured run step lands in the report and summary.
func TestTerrateamWorkflow(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": `stacks:
  names:
    app:
      tag_query: 'dir:app'
      variables:
        environment: staging
workflows:
  - tag_query: 'stack_name:app'
    environment: 'env-${environment}'
    plan:
      - type: run
        cmd: ['sh', '-c', 'printf "%s" "$environment" > environment.out']
      - type: env
        name: GREETING
        cmd: ['echo', 'hello from an env step']
      - type: run
        cmd: ['sh', '-c', 'printf "%s|%s" "$GREETING" "$STRATA_ENVIRONMENT" > greeting.out; echo captured-line']
        capture_output: true
      - type: init
      - type: plan
        env:
          TF_VAR_label: '${environment}-label'
      - type: run
        cmd: ['sh', '-c', 'touch never']
        run_on: failure
      - type: slack
        msg: planned
`,
		"app/main.tf": `variable "label" {
  type = string
}
resource "terraform_data" "x" {
  input = var.label
}
`,
	})
	e := newE2E(t, root)
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	u := res.Report.Units[0]
	if u.Status != report.StatusPlanned {
		t.Fatalf("status %s (%s)\n%s", u.Status, u.Reason, e.console.String())
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, "app", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("environment.out"); got != "staging" {
		t.Errorf("environment.out = %q", got)
	}
	if got := read("greeting.out"); got != "hello from an env step|env-staging" {
		t.Errorf("greeting.out = %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "app", "never")); err == nil {
		t.Error("a run_on: failure step ran after success")
	}
	if !strings.Contains(e.console.String(), `+ input  = "staging-label"`) {
		t.Errorf("TF_VAR_ from the step env did not reach the plan:\n%s", e.console.String())
	}
	var names []string
	captured := ""
	for _, s := range u.Steps {
		names = append(names, s.Name)
		if s.Output != "" {
			captured = s.Output
		}
	}
	if got := strings.Join(names, ","); got != "run,env,run,init,plan" {
		t.Errorf("steps = %s", got)
	}
	if !strings.Contains(captured, "captured-line") || !strings.Contains(res.Report.Markdown(), "captured-line") {
		t.Errorf("captured output missing from the report or summary: %q", captured)
	}
}

// TestWorkflowFailures: an unknown ${name} fails the unit naming it and the
// stack; a failing step runs the failure steps; ignore_errors goes on.
func TestWorkflowFailures(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  unknown: {tags: [unknown]}
  failing: {tags: [failing]}
  ignored: {tags: [ignored]}
stacks:
  names:
    u: {tag_query: unknown}
    f: {tag_query: failing}
    i: {tag_query: ignored}
workflows:
  - tag_query: unknown
    plan:
      - type: run
        cmd: ['echo', '${no_such_thing}']
      - type: init
      - type: plan
  - tag_query: failing
    plan:
      - type: run
        cmd: ['sh', '-c', 'exit 4']
      - type: run
        cmd: ['touch', 'after-failure']
        run_on: failure
      - type: run
        cmd: ['touch', 'always']
        run_on: always
      - type: plan
  - tag_query: ignored
    plan:
      - type: run
        cmd: ['sh', '-c', 'exit 5']
        ignore_errors: true
      - type: init
      - type: plan
`,
		"unknown/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"failing/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"ignored/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	e := newE2E(t, root)
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	got := statuses(res.Report)
	if u := got["unknown@default"]; !strings.HasPrefix(u, "failed") || !strings.Contains(u, `unknown variable "no_such_thing"`) || !strings.Contains(u, "(stack u)") {
		t.Errorf("unknown: %s", u)
	}
	if !strings.HasPrefix(got["failing@default"], "failed (run failed: sh -c exit 4") {
		t.Errorf("failing: %s", got["failing@default"])
	}
	for _, f := range []string{"after-failure", "always"} {
		if _, err := os.Stat(filepath.Join(root, "failing", f)); err != nil {
			t.Errorf("%s step did not run: %v", f, err)
		}
	}
	if got["ignored@default"] != string(report.StatusPlanned) {
		t.Errorf("ignored: %s", got["ignored@default"])
	}
}

// TestPerStackBackend: a dirspace in two stacks, each with its own state
// through the workflow's init extra_args, applies in both.
func TestPerStackBackend(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  shared: {tags: [shared]}
stacks:
  allow_workspace_in_multiple_stacks: true
  names:
    one:
      tag_query: shared
      variables: {flavour: one}
    two:
      tag_query: shared
      variables: {flavour: two}
workflows:
  - tag_query: ''
    plan:
      - type: init
        extra_args: ['-backend-config=path=${STRATA_STACK}.tfstate']
      - type: plan
`,
		"shared/main.tf": `terraform {
  backend "local" {}
}
resource "terraform_data" "s" {
  provisioner "local-exec" {
    command = "echo $flavour > flavour-$flavour.out"
  }
}
`,
	})
	e := newE2E(t, root)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	want := map[string]string{"shared@default#one": string(report.StatusApplied), "shared@default#two": string(report.StatusApplied)}
	if got := statuses(res.Report); !equalMaps(got, want) {
		t.Fatalf("apply: %v\n%s", got, e.console.String())
	}
	for _, f := range []string{"one.tfstate", "two.tfstate", "flavour-one.out", "flavour-two.out"} {
		if _, err := os.Stat(filepath.Join(root, "shared", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestBranchNameIsData: a branch name in the environment that holds shell
// syntax reaches a run step's shell as data: nothing it says runs.
func TestBranchNameIsData(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `workflows:
  - tag_query: ''
    plan:
      - type: run
        cmd: ['sh', '-c', 'printf "%s" "$GITHUB_HEAD_REF" > branch.out; printf "%s" "${environment:-none}" > env.out']
      - type: init
      - type: plan
stacks:
  names:
    app:
      tag_query: 'dir:app'
      variables: {environment: prod}
`,
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	branch := "feature/$(touch${IFS}pwned)`touch pwned2`"
	e := newE2E(t, root, "GITHUB_HEAD_REF="+branch)
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("plan: %v\n%s", statuses(res.Report), e.console.String())
	}
	for _, f := range []string{"pwned", "pwned2"} {
		if _, err := os.Stat(filepath.Join(root, "app", f)); err == nil {
			t.Errorf("the branch name ran a command: %s exists", f)
		}
	}
	if got := readFile(t, filepath.Join(root, "app", "branch.out")); got != branch {
		t.Errorf("the script read %q, want the branch name as written", got)
	}
	if got := readFile(t, filepath.Join(root, "app", "env.out")); got != "prod" {
		t.Errorf("a stack variable in the script's environment: %q", got)
	}
}

// TestStackTFVarVariables: a stack variable named TF_VAR_x binds input
// variable x, through the var file for the engine and in the environment
// of run steps; it beats strata's own TF_VAR_x.
func TestStackTFVarVariables(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `workflows:
  - tag_query: ''
    plan:
      - type: run
        cmd: ['sh', '-c', 'printf "%s" "$TF_VAR_region" > seen.out']
      - type: init
      - type: plan
stacks:
  names:
    app:
      tag_query: 'dir:app'
      variables: {TF_VAR_region: eu-west-1}
`,
		"app/main.tf": "variable \"region\" {\n  type = string\n}\nresource \"terraform_data\" \"x\" {\n  input = var.region\n}\n",
	})
	e := newE2E(t, root, "TF_VAR_region=from-the-environment")
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	if got := statuses(res.Report)["app@default"]; got != string(report.StatusPlanned) {
		t.Fatalf("app: %s\n%s", got, e.console.String())
	}
	if !strings.Contains(e.console.String(), `+ input  = "eu-west-1"`) {
		t.Errorf("the plan did not get the stack's TF_VAR_region:\n%s", e.console.String())
	}
	if got := readFile(t, filepath.Join(root, "app", "seen.out")); got != "eu-west-1" {
		t.Errorf("the run step saw TF_VAR_region=%q", got)
	}
}
