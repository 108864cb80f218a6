package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/oidc/oidctest"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// hooksConfig is a Terrateam config whose hooks log what runs, set a
// variable every unit's plan reads and a sensitive one a run step
// prints, and fail when FAIL_HOOK names them.
const hooksConfig = `hooks:
  all:
    pre:
      - type: run
        cmd: ['sh', '-c', 'echo "all.pre $STRATA_ROOT" >> "$STRATA_ROOT/hooks.log"; test "$FAIL_HOOK" != pre']
      - type: env
        name: TF_VAR_image_tag
        cmd: ['sh', '-c', 'echo v-from-hook']
      - type: env
        name: API_TOKEN
        cmd: ['echo', 'token-9f8e7d6c']
        sensitive: true
    post:
      - type: run
        cmd: ['sh', '-c', 'echo all.post >> "$TERRATEAM_ROOT/hooks.log"']
        run_on: always
  plan:
    pre:
      - type: run
        cmd: ['sh', '-c', 'echo plan.pre >> hooks.log']
    post:
      - type: run
        cmd: ['sh', '-c', 'echo plan.post >> hooks.log; test "$FAIL_HOOK" != post']
  apply:
    pre:
      - type: run
        cmd: ['sh', '-c', 'echo apply.pre >> hooks.log']
    post:
      - type: run
        cmd: ['sh', '-c', 'echo apply.post-success >> hooks.log']
      - type: run
        cmd: ['sh', '-c', 'echo apply.post-failure >> hooks.log']
        run_on: failure
workflows:
  - tag_query: ''
    plan:
      - type: init
      - type: run
        cmd: ['sh', '-c', 'echo "token is $API_TOKEN"']
      - type: plan
`

const hooksModule = `variable "image_tag" {
  type = string
}
resource "terraform_data" "x" {
  input = var.image_tag
}
`

// TestHooks: pre hooks run once before the units, in the repository root,
// all's before the operation's; what an env hook sets reaches every
// unit, TF_VAR_ names as variables, sensitive values masked; post hooks
// run once after, the operation's before all's, run_on picking by the
// outcome; the report lists each hook step.
func TestHooks(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": hooksConfig,
		"a/main.tf":             hooksModule,
		"b/main.tf":             hooksModule,
	})
	e := newE2E(t, root)
	readLog := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, "hooks.log"))
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(root, "hooks.log"))
		return string(b)
	}
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	for _, u := range res.Report.Units {
		if u.Status != report.StatusPlanned {
			t.Fatalf("%s: %s (%s)\n%s", u.Dir, u.Status, u.Reason, e.console.String())
		}
	}
	if got, want := readLog(), "all.pre "+root+"\nplan.pre\nplan.post\nall.post\n"; got != want {
		t.Errorf("plan ran the hooks\n%s\nwant\n%s", got, want)
	}
	out := e.console.String()
	if strings.Count(out, `+ input  = "v-from-hook"`) != 2 {
		t.Errorf("the env hook's TF_VAR_image_tag did not reach both plans:\n%s", out)
	}
	if strings.Contains(out, "token-9f8e7d6c") || !strings.Contains(out, "token is ***") {
		t.Errorf("the sensitive hook value is not masked:\n%s", out)
	}
	if h := res.Report.Hooks; h == nil || len(h.Steps) != 6 || h.Error != "" {
		t.Errorf("report hooks: %+v", h)
	}
	js, _ := json.Marshal(res.Report)
	if strings.Contains(string(js), "token-9f8e7d6c") {
		t.Error("the report holds the sensitive value")
	}

	e.console.Reset()
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply exit %d\n%s", res.ExitCode, e.console.String())
	}
	if got, want := readLog(), "all.pre "+root+"\napply.pre\napply.post-success\nall.post\n"; got != want {
		t.Errorf("apply ran the hooks\n%s\nwant\n%s", got, want)
	}
}

// TestHookFailures: a failed pre hook fails every unit, naming it, and
// runs only the post hooks for failure; a failed post hook fails the
// command after its units succeeded.
func TestHookFailures(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": hooksConfig,
		"a/main.tf":             hooksModule,
	})
	e := newE2E(t, root)
	e.env = append(e.env, "FAIL_HOOK=pre")
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 1 {
		t.Errorf("exit %d after a failed pre hook", res.ExitCode)
	}
	u := res.Report.Units[0]
	if u.Status != report.StatusFailed || !strings.Contains(u.Reason, "hooks.all.pre[0] (run)") {
		t.Errorf("unit %s (%s)", u.Status, u.Reason)
	}
	b, _ := os.ReadFile(filepath.Join(root, "hooks.log"))
	if got, want := string(b), "all.pre "+root+"\napply.post-failure\nall.post\n"; got != want {
		t.Errorf("after a failed pre hook the hooks ran\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "a", "terraform.tfstate")); err == nil {
		t.Error("a unit applied after its pre hook failed")
	}

	os.Remove(filepath.Join(root, "hooks.log"))
	e.env[len(e.env)-1] = "FAIL_HOOK=post"
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	if res.ExitCode != 1 || res.Report.Units[0].Status != report.StatusPlanned {
		t.Errorf("exit %d, unit %s after a failed post hook", res.ExitCode, res.Report.Units[0].Status)
	}
	if h := res.Report.Hooks; h == nil || !strings.Contains(h.Error, "hooks.plan.post[0] (run)") {
		t.Errorf("report hooks: %+v", h)
	}
	if md := res.Report.Markdown(); !strings.Contains(md, "A hook failed") {
		t.Errorf("the summary does not say a hook failed:\n%s", md)
	}
}

// TestHookEnvSubstituted: a hook step's env is substituted as a workflow
// step's: from strata's environment, $$ a literal $; an unknown name fails
// the units, naming the hook step, the key and the name.
func TestHookEnvSubstituted(t *testing.T) {
	config := func(value string) string {
		return `hooks:
  all:
    pre:
      - type: run
        env: {GREETING: '` + value + `'}
        cmd: ['sh', '-c', 'printf %s "$GREETING" > hook.out']
`
	}
	root := writeRepo(t, map[string]string{".terrateam/config.yml": config("hi $$${WHO}"), "a/main.tf": hooksModule})
	e := newE2E(t, root)
	e.env = append(e.env, "WHO=there", "TF_VAR_image_tag=v1")
	if res := e.run(CmdPlan, Options{}, stacks.Selection{}); res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s", res.ExitCode, e.console.String())
	}
	if got := readFile(t, filepath.Join(root, "hook.out")); got != "hi $there" {
		t.Errorf("the hook's env gave %q, want %q", got, "hi $there")
	}

	testenv.WriteFile(t, filepath.Join(root, ".terrateam", "config.yml"), config("${NOPE}"))
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	want := `not run: hooks.all.pre[0] (run): unknown variable "NOPE" in hooks.all.pre[0].env.GREETING`
	if u := res.Report.Units[0]; res.ExitCode != 1 || u.Status != report.StatusFailed || !strings.HasPrefix(u.Reason, want) {
		t.Errorf("exit %d, unit %s (%s); want failed, %s", res.ExitCode, u.Status, u.Reason, want)
	}
}

// TestOIDC: an oidc hook (AWS, a chained role) and an oidc workflow step
// (GCP) get credentials from the CI's OIDC token; they reach the engine
// (a local-exec provisioner writes them to a file) and never the
// console or the report.
func TestOIDC(t *testing.T) {
	srv := oidctest.New(t)
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": `hooks:
  all:
    pre:
      - type: oidc
        provider: aws
        role_arn: arn:aws:iam::123456789012:role/ci
        assume_role_arn: arn:aws:iam::210987654321:role/deploy
        region: eu-west-1
workflows:
  - tag_query: ''
    apply:
      - type: oidc
        provider: gcp
        service_account: ci@acme.iam.gserviceaccount.com
        workload_identity_provider: projects/42/locations/global/workloadIdentityPools/gh/providers/gh
        project_id: acme-prod
      - type: run
        cmd: ['sh', '-c', 'echo "key $AWS_SECRET_ACCESS_KEY token $GOOGLE_OAUTH_ACCESS_TOKEN"']
        capture_output: true
      - type: init
      - type: apply
`,
		"a/main.tf": `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "printf '%s %s %s' \"$AWS_ACCESS_KEY_ID\" \"$AWS_REGION\" \"$GOOGLE_PROJECT\" > creds.out"
  }
}
`,
	})
	e := newE2E(t, root)
	e.env = append(e.env, srv.Env()...)
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s", res.ExitCode, e.console.String())
	}
	b, err := os.ReadFile(filepath.Join(root, "a", "creds.out"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), oidctest.AWSChainedKeyID+" eu-west-1 acme-prod"; got != want {
		t.Errorf("the engine's environment held %q, want %q", got, want)
	}
	js, _ := json.Marshal(res.Report)
	for _, secret := range []string{oidctest.AWSChainedSecret, oidctest.GCPAccessToken, oidctest.AWSSecret} {
		if strings.Contains(e.console.String(), secret) || strings.Contains(string(js), secret) {
			t.Errorf("%s reached the console or the report:\n%s", secret, e.console.String())
		}
	}
	if !strings.Contains(string(js), "key *** token ***") {
		t.Errorf("the captured run step is not masked in the report: %s", js)
	}
}

// TestPostHooksAfterInterrupt: a command interrupted in a pre hook
// cancels its units, and still runs its post hooks for failure, as
// cleanup.
func TestPostHooksAfterInterrupt(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": `hooks:
  all:
    pre:
      - type: run
        cmd: ['sh', '-c', 'touch "$STRATA_ROOT/started"; sleep 5']
    post:
      - type: run
        cmd: ['sh', '-c', 'echo cleanup > "$STRATA_ROOT/cleanup.log"']
        run_on: failure
`,
		"a/main.tf": hooksModule,
	})
	e := newE2E(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 100; i++ {
			if _, err := os.Stat(filepath.Join(root, "started")); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	p := e.project()
	run, err := p.Select(stacks.Selection{Cwd: "."})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(ctx, p, run, Options{Settings: Settings{Command: CmdPlan}, Extra: Extra{Environ: e.env}, Output: Output{Console: &e.console}})
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Report.Units[0]; u.Status != report.StatusCancelled {
		t.Errorf("unit %s (%s) after an interrupted pre hook", u.Status, u.Reason)
	}
	if b, err := os.ReadFile(filepath.Join(root, "cleanup.log")); err != nil || string(b) != "cleanup\n" {
		t.Errorf("the post hook for failure did not run after the interrupt: %q %v\n%s", b, err, e.console.String())
	}
}

// TestOIDCOutsideCI: with no OIDC token outside CI, an oidc hook and an
// oidc step are skipped, the run says so once, and the units run on the
// ambient credentials; in CI (CI=true) the same run fails closed.
func TestOIDCOutsideCI(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": `hooks:
  all:
    pre:
      - type: oidc
        provider: aws
        role_arn: arn:aws:iam::123456789012:role/ci
workflows:
  - tag_query: ''
    plan:
      - type: oidc
        provider: gcp
        service_account: ci@acme.iam.gserviceaccount.com
        workload_identity_provider: projects/42/locations/global/workloadIdentityPools/gh/providers/gh
      - type: init
      - type: plan
`,
		"a/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"b/main.tf": "resource \"terraform_data\" \"y\" {}\n",
	})
	e := newE2E(t, root)
	res := e.run(CmdPlan, Options{}, stacks.Selection{})
	const note = "no OIDC token outside CI: oidc steps are skipped, and the ambient credentials are used"
	if res.ExitCode != 0 || strings.Count(e.console.String(), note) != 1 {
		t.Fatalf("outside CI: exit %d, want 0 and the note once\n%s", res.ExitCode, e.console.String())
	}
	for _, u := range res.Report.Units {
		if u.Status != report.StatusPlanned {
			t.Errorf("%s: %s (%s)", u.Name(), u.Status, u.Reason)
		}
	}

	ci := newE2E(t, root)
	ci.env = append(ci.env, "CI=true")
	res = ci.run(CmdPlan, Options{}, stacks.Selection{})
	if res.ExitCode != 1 || strings.Contains(ci.console.String(), note) || !strings.Contains(ci.console.String(), "no OIDC token") {
		t.Errorf("in CI: exit %d, want 1 failing on the missing token\n%s", res.ExitCode, ci.console.String())
	}
}

// TestNoHooks: --no-hooks runs none of the config's hooks, says so once,
// and the units run (a hook that fails at a terminal no longer fails
// them); workflow steps still run.
func TestNoHooks(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": hooksConfig,
		"a/main.tf":             hooksModule,
		"b/main.tf":             hooksModule,
	})
	e := newE2E(t, root)
	e.env = append(e.env, "FAIL_HOOK=pre", "TF_VAR_image_tag=local", "API_TOKEN=none")
	res := e.run(CmdPlan, Options{Settings: Settings{NoHooks: true}}, stacks.Selection{})
	out := e.console.String()
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s", res.ExitCode, out)
	}
	for _, u := range res.Report.Units {
		if u.Status != report.StatusPlanned {
			t.Errorf("%s: %s (%s)", u.Dir, u.Status, u.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "hooks.log")); err == nil {
		t.Error("a hook ran under --no-hooks")
	}
	if n := strings.Count(out, "--no-hooks: the config's 4 pre and 2 post hook steps of plan are not run"); n != 1 {
		t.Errorf("the note is said %d times:\n%s", n, out)
	}
	if strings.Count(out, "token is none") != 2 || res.Report.Hooks != nil {
		t.Errorf("workflow steps did not run, or hooks are reported: %+v\n%s", res.Report.Hooks, out)
	}
}
