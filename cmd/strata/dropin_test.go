package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

// Drop-in fidelity: in a unit's dir strata answers as terraform does.

const inputsConfig = `dirs:
  network: {tags: [network]}
  app: {tags: [app]}
stacks:
  names:
    network: {tag_query: network}
    app:
      tag_query: app
      inputs:
        vpc_id: network.vpc_id
`

func inputsRepo(t *testing.T) string {
	t.Helper()
	return writeRepo(t, map[string]string{
		"strata.yml": inputsConfig,
		"network/main.tf": `resource "terraform_data" "vpc" {
  input = "vpc-1"
}
output "vpc_id" {
  value = terraform_data.vpc.output
}
output "subnets" {
  value = ["a", "b", 3]
}
output "secret" {
  value     = "hunter2"
  sensitive = true
}
`,
		"app/main.tf": testenv.ConsumerTF("vpc_id", "app", "seen_vpc"),
	})
}

// terraformOut runs terraform itself in dir and returns its stdout.
func terraformOut(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("terraform", args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("terraform %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// TestDropInOutput: strata output in a unit's dir prints exactly what
// terraform output prints, sensitive values asked for by name included.
func TestDropInOutput(t *testing.T) {
	needTerraform(t)
	root := inputsRepo(t)
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	network := filepath.Join(root, "network")
	for _, args := range [][]string{
		{"output", "-raw", "vpc_id"},
		{"output", "vpc_id"},
		{"output", "subnets"},
		{"output", "-json"},
		{"output", "-json", "subnets"},
		{"output", "secret"},
		{"output", "-raw", "secret"},
		{"output"},
	} {
		want := terraformOut(t, network, env, args...)
		r := runBin(t, network, env, args...)
		if r.code != 0 || r.stdout != want {
			t.Errorf("strata %s: exit %d\n got %q\nwant %q\n%s", strings.Join(args, " "), r.code, r.stdout, want, r.stderr)
		}
	}
	// At the root, output keeps strata's shape: one object by unit.
	r := runBin(t, root, env, "output", "-json")
	if r.code != 0 || !strings.Contains(r.stdout, `"network@default#network"`) || !strings.Contains(r.stdout, `"***"`) {
		t.Errorf("output -json at the root: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDropInWithInputs: in a dir whose unit takes inputs from another
// stack, passthrough commands get them as plan does, and plan -out then
// apply FILE works.
func TestDropInWithInputs(t *testing.T) {
	needTerraform(t)
	root := inputsRepo(t)
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	app := filepath.Join(root, "app")
	if r := runBin(t, app, env, "refresh"); r.code != 0 {
		t.Errorf("refresh: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cmd := exec.Command(strataBin, "console")
	cmd.Dir, cmd.Env, cmd.Stdin = app, env, strings.NewReader("var.vpc_id\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"vpc-1"`) {
		t.Errorf("console: %v\n%s", err, out)
	}
	if wantNoVarValues(t, root) == 0 {
		t.Error("no var file under .strata/vars: the inputs reached the engine another way")
	}
	if err := os.WriteFile(filepath.Join(app, "extra.tf"), []byte("resource \"terraform_data\" \"more\" {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// plan -out ends as terraform's: where the plan is, and how to apply
	// exactly it.
	const saved = "\n" + "─────────────────────────────────────────────────────────────────────────────" +
		"\n\nSaved the plan to: p.tfplan\n\nTo perform exactly these actions, run the following command to apply:\n    strata apply \"p.tfplan\"\n"
	if r := runBin(t, app, env, "plan", "-out=p.tfplan"); r.code != 0 || !strings.HasSuffix(r.stdout, "to destroy.\n"+saved) {
		t.Fatalf("plan -out: exit %d\n%q\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, app, env, "apply", "p.tfplan"); r.code != 0 || !strings.Contains(r.stdout, "Apply complete! Resources: 1 added") {
		t.Errorf("apply p.tfplan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestEngineNotices: the terraform-from-PATH notice comes from check and
// engines list, not from every command; an engine version written with
// ${var} is substituted in ls and engines list as in a run.
func TestEngineNotices(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  a: {tags: [a]}
  b: {tags: [b]}
stacks:
  names:
    a: {tag_query: a}
    b:
      tag_query: b
      variables: {tf_version: 1.5.7}
      engine: {name: terraform, version: '${tf_version}'}
`,
		"a/main.tf": "output \"x\" {\n  value = 1\n}\n",
		"b/main.tf": "",
	})
	env := hermeticEnv(t)
	const notice = "no engine is configured"
	if r := runBin(t, filepath.Join(root, "a"), env, "plan"); r.code != 0 || strings.Contains(r.stderr, notice) {
		t.Errorf("drop-in plan: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runBin(t, root, env, "check"); r.code != 0 || !strings.Contains(r.stderr, notice+" for 1 unit (1 stack: a);") {
		t.Errorf("check: exit %d, stderr %q", r.code, r.stderr)
	}
	r := runBin(t, root, env, "engines", "list", "--json")
	if !strings.Contains(r.stderr, notice) || !strings.Contains(r.stdout, `"version": "1.5.7"`) || strings.Contains(r.stdout, "tf_version") {
		t.Errorf("engines list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "ls", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"version": "1.5.7"`) {
		t.Errorf("ls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPrerequisitesListed: ls and graph show the units a stale
// prerequisite brings into the run, as apply runs them.
func TestPrerequisitesListed(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  creds: {tags: [creds]}
  app: {tags: [app]}
stacks:
  names:
    rotate-credentials: {tag_query: creds}
    app:
      tag_query: app
      rules:
        prerequisites:
          - {stack: rotate-credentials, succeeded_within: 1h}
`,
		"creds/main.tf": "resource \"terraform_data\" \"c\" {}\n",
		"app/main.tf":   "resource \"terraform_data\" \"a\" {}\n",
	})
	code, out, errOut := strata(t, "-C", root, "ls", "--stack", "app", "--json")
	if code != 0 || !strings.Contains(out, `"why": "prerequisite_of: app"`) || !strings.Contains(out, `"dir": "creds"`) {
		t.Errorf("ls: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = strata(t, "-C", root, "graph", "--stack", "app", "--format", "json")
	var g graphJSON
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("graph: %v\n%s", err, out)
	}
	want := []graphStackEdge{{From: "rotate-credentials", To: "app", Kind: "plan", Via: "prerequisite"}}
	if code != 0 || !strings.Contains(out, `"id": "creds@default#rotate-credentials"`) || !reflect.DeepEqual(g.StackEdges, want) {
		t.Errorf("graph: exit %d\n%s%s", code, out, errOut)
	}
}

// TestShellCompletion: the bash script, sourced in a real bash, completes
// commands and the repository's stack names for --stack; zsh and fish get
// scripts of their own.
func TestShellCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	root := fixture(t, "nested")
	script := runBin(t, root, hermeticEnv(t), "completion", "bash").stdout
	complete := func(words ...string) string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		cmd := exec.Command("bash", "-c", script+"\nCOMP_WORDS=("+strings.Join(quoted, " ")+"); COMP_CWORD="+
			strconv.Itoa(len(words)-1)+"; _strata_complete; echo \"${COMPREPLY[*]}\"")
		cmd.Dir = root
		cmd.Env = append(hermeticEnv(t), "PATH="+filepath.Dir(strataBin)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := complete("strata", "pl"); got != "plan" {
		t.Errorf("strata pl<TAB> = %q, want plan", got)
	}
	if got := complete("strata", "plan", "--stack", "dev-"); got != "dev-service dev-database dev-network" {
		t.Errorf("strata plan --stack dev-<TAB> = %q", got)
	}
	if r := runBin(t, root, hermeticEnv(t), "completion", "zsh"); r.code != 0 || !strings.Contains(r.stdout, "compdef _strata strata") {
		t.Errorf("zsh: exit %d\n%s", r.code, r.stdout)
	}
	if r := runBin(t, root, hermeticEnv(t), "completion", "fish"); r.code != 0 || !strings.Contains(r.stdout, "complete -c strata -l stack") {
		t.Errorf("fish: exit %d\n%s", r.code, r.stdout)
	}
}

// TestDevNullIsNoTerminal: with stdout on a terminal but stdin from
// /dev/null nobody can answer, so apply refuses without -auto-approve
// instead of reading an empty answer.
func TestDevNullIsNoTerminal(t *testing.T) {
	needTerraform(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to give strata a terminal")
	}
	root := writeRepo(t, map[string]string{"strata.yml": "dirs:\n  a: {tags: [a]}\n", "a/main.tf": "resource \"terraform_data\" \"x\" {}\n"})
	cmd := exec.Command("script", "-qec", strataBin+" apply </dev/null", "/dev/null")
	cmd.Dir, cmd.Env = root, hermeticEnv(t)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 1 || !strings.Contains(string(out), "apply needs -auto-approve when it cannot ask (no terminal)") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestValidate: an invalid configuration fails validate, at the root and
// in its dir, with terraform's own diagnostics and exit code; in a unit's
// dir validate and validate -json print what terraform prints (without
// colour, as every engine call).
func TestValidate(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":   "dirs:\n  good: {tags: [good]}\n  bad: {tags: [bad]}\nstacks:\n  names:\n    good: {tag_query: good}\n    bad: {tag_query: bad}\n",
		"good/main.tf": "module \"label\" {\n  source = \"../mod\"\n}\n\noutput \"name\" {\n  value = module.label.name\n}\n",
		"mod/main.tf":  "output \"name\" {\n  value = \"x\"\n}\n",
		"bad/main.tf":  "resource \"terraform_data\" \"x\" {\n  bogus = 1\n}\n",
	})
	env := hermeticEnv(t)
	reportFile := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, env, "validate", "--report", reportFile)
	if r.code != 1 {
		t.Fatalf("validate at the root: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, u := range readReport(t, reportFile).Units {
		want := map[string]string{"good": "succeeded", "bad": "failed: validate failed: Unsupported argument"}[u.Dir]
		got := string(u.Status)
		if u.Reason != "" {
			got += ": " + u.Reason
		}
		if got != want {
			t.Errorf("%s: %s, want %s", u.Dir, got, want)
		}
	}
	bad := filepath.Join(root, "bad")
	cmd := exec.Command("terraform", "validate", "-no-color")
	cmd.Dir, cmd.Env = bad, env
	var tfErr bytes.Buffer
	cmd.Stderr = &tfErr
	if err := cmd.Run(); err == nil {
		t.Fatal("terraform validate passed an invalid configuration")
	}
	r = runBin(t, bad, env, "validate")
	if r.code != 1 || !strings.HasSuffix(r.stderr, tfErr.String()) {
		t.Errorf("validate in bad: exit %d\n got %q\nwant %q", r.code, r.stderr, tfErr.String())
	}
	good := filepath.Join(root, "good")
	for _, args := range [][]string{{"validate"}, {"validate", "-json"}} {
		want := terraformOut(t, good, env, append(args, "-no-color")...)
		r := runBin(t, good, env, args...)
		if r.code != 0 || r.stdout != want {
			t.Errorf("strata %s: exit %d\n got %q\nwant %q\n%s", strings.Join(args, " "), r.code, r.stdout, want, r.stderr)
		}
	}
}

// TestDropInApplyNoChanges: in a unit's dir, an apply with nothing to
// change ends as terraform apply does, "Apply complete!" and the outputs
// as terraform prints them, whether the plan was saved earlier, asked at
// a terminal, or applied in one call; strata's note names no unit; a
// unit that cannot run says why; a consumer's destroy reads its producer
// outside the run as it stands; a destroy ends "Destroy complete!", with
// what it destroyed or with nothing to destroy.
func TestDropInApplyNoChanges(t *testing.T) {
	needTerraform(t)
	root := inputsRepo(t)
	env := hermeticEnv(t)
	// Before network is applied, app's plan cannot run: the engine says
	// nothing, so strata says why (blocked exits 0, or 2 with
	// -detailed-exitcode).
	if r := runBin(t, filepath.Join(root, "app"), env, "plan", "-detailed-exitcode"); r.code != 2 || !strings.Contains(r.stderr, "strata: blocked: network.vpc_id has no value (network@default never applied)") {
		t.Errorf("plan of a consumer before its producer: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	network := filepath.Join(root, "network")
	tail := func(out string) string {
		_, after, _ := strings.Cut(out, "\nApply complete! ")
		return after
	}
	want := tail(terraformOut(t, network, env, "apply", "-auto-approve", "-input=false", "-no-color"))
	if !strings.Contains(want, "Resources: 0 added, 0 changed, 0 destroyed.\n\nOutputs:\n\n") || !strings.Contains(want, "<sensitive>") {
		t.Fatalf("terraform's own apply with no changes ends otherwise:\n%s", want)
	}

	// One call: the engine's apply prints it.
	if r := runBin(t, network, env, "apply", "-auto-approve"); r.code != 0 || tail(r.stdout) != want {
		t.Errorf("apply -auto-approve: exit %d\n got %q\nwant %q\n%s", r.code, tail(r.stdout), want, r.stderr)
	}
	// A plan saved first, then reused: no engine apply runs.
	if r := runBin(t, network, env, "plan"); r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runBin(t, network, env, "apply", "-auto-approve")
	if r.code != 0 || tail(r.stdout) != want {
		t.Errorf("apply of a saved plan with no changes: exit %d\n got %q\nwant %q\n%s", r.code, tail(r.stdout), want, r.stderr)
	}
	if !strings.Contains(r.stderr, "reusing the plan saved at") || strings.Contains(r.stderr, "[network@") {
		t.Errorf("drop-in notes: want the note without the unit's name:\n%s", r.stderr)
	}
	// At a terminal, with nothing to ask: the same end, in colour.
	out, code := atTerminal(t, network, env, "apply")
	if code != 0 || !strings.Contains(out, "Apply complete! Resources: 0 added, 0 changed, 0 destroyed.") ||
		!strings.Contains(out, "Outputs:") || !strings.Contains(out, `vpc_id = "vpc-1"`) || !strings.Contains(out, "\x1b[32m") {
		t.Errorf("apply at a terminal: exit %d\n%q", code, out)
	}

	app := filepath.Join(root, "app")
	// A destroy ends as terraform destroy does, not with the words of the
	// apply of a plan -destroy.
	if r := runBin(t, app, env, "destroy", "-auto-approve"); r.code != 0 || !strings.Contains(r.stdout, "\nDestroy complete! Resources: 1 destroyed.\n") || strings.Contains(r.stdout, "Apply complete!") {
		t.Fatalf("destroy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, app, env, "destroy", "-auto-approve"); r.code != 0 || !strings.HasSuffix(r.stdout, "\nDestroy complete! Resources: 0 destroyed.\n") {
		t.Errorf("destroy with nothing to destroy: exit %d\n%q\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestDropInApplyQuestion: at a terminal, an apply (and a destroy) in a
// unit's dir without -auto-approve asks terraform's question in its
// words; anything but "yes" cancels with terraform's words and exit 1,
// and "yes" applies.
func TestDropInApplyQuestion(t *testing.T) {
	needTerraform(t)
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not on PATH")
	}
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	app := filepath.Join(root, "app")
	env := hermeticEnv(t)
	answer := func(args, in string) (string, int) {
		t.Helper()
		cmd := exec.Command(scriptBin, "-qefc", strataBin+" "+args, "/dev/null")
		cmd.Dir, cmd.Env, cmd.Stdin = app, env, strings.NewReader(in)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(out), "\r\n", "\n"), code
	}
	const ask = "Do you want to perform these actions?\n  Terraform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: "
	out, code := answer("apply", "no\n")
	if code != 1 || !strings.Contains(out, ask) || !strings.Contains(out, "\nApply cancelled.\n") || strings.Contains(out, "[yes/all/no]") {
		t.Errorf("apply answered no: exit %d\n%s", code, out)
	}
	if out, code = answer("apply", "yes\n"); code != 0 || !strings.Contains(out, ask) || !strings.Contains(out, "Apply complete! Resources: 1 added") {
		t.Errorf("apply answered yes: exit %d\n%s", code, out)
	}
	const askDestroy = "Do you really want to destroy all resources?\n  Terraform will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm.\n\n  Enter a value: "
	if out, code = answer("destroy", "y\n"); code != 1 || !strings.Contains(out, askDestroy) || !strings.Contains(out, "\nDestroy cancelled.\n") {
		t.Errorf("destroy answered y: exit %d\n%s", code, out)
	}
}

// TestDropInApplyNoChangesFreshPlan: at a terminal, an apply in a unit's
// dir whose new plan finds nothing to change (no saved plan to reuse)
// ends as terraform's apply does, with its outputs; the engine's output
// call after the plan belongs to the job (its worker is not handed on
// before it).
func TestDropInApplyNoChangesFreshPlan(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":   "",
		"solo/main.tf": "resource \"terraform_data\" \"x\" {}\noutput \"o\" {\n  value = \"v\"\n}\n",
	})
	env := hermeticEnv(t)
	solo := filepath.Join(root, "solo")
	if r := runBin(t, solo, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A new digest, the same resources: the plan is made again.
	if err := os.WriteFile(filepath.Join(solo, "extra.tf"), []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := atTerminal(t, solo, env, "apply")
	if code != 0 || !strings.Contains(out, "Apply complete! Resources: 0 added, 0 changed, 0 destroyed.") || !strings.Contains(out, `o = "v"`) {
		t.Errorf("apply at a terminal with a new plan and nothing to change: exit %d\n%q", code, out)
	}
}
