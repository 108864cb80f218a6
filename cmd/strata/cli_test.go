package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// strata runs the CLI in-process and returns its exit code and output.
func strata(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"strata"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckValid(t *testing.T) {
	code, out, errOut := strata(t, "-C", fixture(t, "nested"), "check")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	// The fixture names no engine: that one warning is counted.
	if want := "ok: strata.yml: 7 dirspaces, 9 stacks (7 leaf), 7 units, 1 warning\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
}

func TestCheckListsEveryError(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `stacks:
  names:
    app:
      tag_query: 'dir:app and ('
      rules:
        plan_after: [nope]
    other:
      tag_qeury: x
parallel_runs: many
`,
		"app/main.tf": "",
	})
	code, out, errOut := strata(t, "-C", root, "check")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if out != "" {
		t.Errorf("stdout = %q, want nothing", out)
	}
	for _, want := range []string{
		`strata.yml:4:32: stacks.names.app.tag_query: tag query "dir:app and (": column 14: expected a tag or "(" after "("`,
		`strata.yml:6:22: stacks.names.app.rules.plan_after[0]: unknown stack "nope"`,
		`strata.yml:8:7: stacks.names.other.tag_qeury: unknown key "tag_qeury"`,
		`strata.yml:9:16: parallel_runs: expected a whole number, found "many"`,
		"error(s)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestOtherCommandsStopOnConfigErrors(t *testing.T) {
	root := writeRepo(t, map[string]string{"strata.yml": "stacks: {names: {a: {}}}\n", "a/main.tf": ""})
	code, out, errOut := strata(t, "-C", root, "ls")
	if code != 1 || out != "" || !strings.Contains(errOut, "has neither tag_query nor stacks") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestLsJSON(t *testing.T) {
	code, out, errOut := strata(t, "-C", filepath.Join(fixture(t, "nested"), "prod", "network"), "ls", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := []map[string]any{{
		"dir": "prod/network", "workspace": "default", "stack": "prod-network",
		"stack_path": []any{"prod", "prod-network"},
		"tags":       []any{"prod", "network", "dir:prod/network", "workspace:default", "stack_name:prod-network", "stack_name:prod"},
		"engine":     map[string]any{"name": "terraform", "version": ""},
		"why":        "selected",
		"whys":       []any{"selected"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ls --json:\n got %v\nwant %v", got, want)
	}
}

func TestLsShowsUnassignedAndQuery(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": "stacks:\n  names:\n    a: {tag_query: 'dir:a'}\n    default: {tag_query: never}\n",
		"a/main.tf":  "", "b/main.tf": "",
	})
	code, out, errOut := strata(t, "-C", root, "ls", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "match no stack and will not run") {
		t.Errorf("no warning for the unassigned dirspace:\n%s", errOut)
	}
	var got []struct {
		Dir   string  `json:"dir"`
		Stack *string `json:"stack"`
		Why   string  `json:"why"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Dir != "a" || got[1].Dir != "b" || got[1].Stack != nil {
		t.Errorf("ls --json = %s", out)
	}
	// A query that matches nothing is a mistake, not an empty success.
	code, out, errOut = strata(t, "-C", root, "ls", "dir:zzz")
	if code != 1 || out != "" || !strings.Contains(errOut, `no units match query "dir:zzz"`) {
		t.Errorf("empty selection: exit %d, %q %q", code, out, errOut)
	}
}

// TestMistypedSelection: a --dir, --stack or query that matches no unit
// exits 1 saying so, with the nearest dir when one is close.
func TestMistypedSelection(t *testing.T) {
	root := fixture(t, "nested")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--dir", "prod/netwrok"}, "no units match --dir prod/netwrok; did you mean --dir prod/network?"},
		{[]string{"ls", "--query", "nothing-has-this-tag"}, `no units match query "nothing-has-this-tag"`},
		{[]string{"plan", "--dir", "prod/netwrok"}, "no units match --dir prod/netwrok"},
		{[]string{"graph", "--workspace", "nope"}, "no units match --workspace nope"},
		// A query names its tags no dirspace has, with the nearest.
		{[]string{"ls", "--query", "prod and netwrk"}, `no units match query "prod and netwrk": no dirspace has the tag netwrk (did you mean network?)`},
		{[]string{"plan", "--stack", "prd"}, "--stack prd: no such stack; did you mean prod?"},
	} {
		code, out, errOut := strata(t, append([]string{"-C", root}, tc.args...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestUnknownCommandAndFlag: a mistyped command gets the nearest one; a
// bad flag one error line and the command's usage line, not the help.
func TestUnknownCommandAndFlag(t *testing.T) {
	root := fixture(t, "nested")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plna"}, "strata: unknown command \"plna\"; did you mean plan?\n"},
		{[]string{"aplly"}, "strata: unknown command \"aplly\"; did you mean apply?\n"},
		{[]string{"plan", "--bogus"}, "strata: flag provided but not defined: -bogus\nusage: strata plan [options] [-- engine args]\n"},
		{[]string{"plan", "--paralellism", "2"}, "strata: flag provided but not defined: -paralellism; did you mean --parallelism?\nusage: strata plan [options] [-- engine args]\n"},
		{[]string{"--confg", "x", "ls"}, "strata: flag provided but not defined: -confg; did you mean --config?\nusage: strata [global options] <command> [options] [-- engine args]\n"},
		{[]string{"engines", "install", "--bogus"}, "strata: flag provided but not defined: -bogus\nusage: strata engines install [options]\n"},
		{[]string{"ci", "strat"}, "strata: unknown command \"ci strat\"; did you mean \"ci start\"?\n"},
		{[]string{"ci", "emit", "gitlb"}, "strata: unknown command \"ci emit gitlb\"; did you mean \"ci emit gitlab\"?\n"},
		{[]string{"ci", "zzz"}, "strata: unknown command \"ci zzz\"; expected one of: start, run, finish, check, unlock, comment, command, emit, help\n"},
		// A missing flag a ci command cannot go without is one line.
		{[]string{"ci", "run", "--run", "r1"}, "strata: ci run needs --wave W, --shard N, as ci start printed them\n"},
		{[]string{"ci", "finish"}, "strata: ci finish needs --run ID (or STRATA_RUN), as ci start printed them\n"},
		{[]string{"ci", "run", "--run", "r1", "--wave", "0", "--shard", "0"}, "strata: no state bucket: give --state URL or STRATA_STATE_URL (s3://…, gs://…, azblob://…, file:///dir)\n"},
	} {
		code, out, errOut := strata(t, append([]string{"-C", root}, tc.args...)...)
		if code != 1 || out != "" || errOut != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestBranchFlags: --dest-branch and the CI's environment give units their
// branch tags; check warns about a branch query when no branch is known.
func TestBranchFlags(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": "workflows:\n  - tag_query: 'deployflow and dest_branch:poc'\n    plan: [{type: init}, {type: plan}]\ndirs:\n  a: {tags: [deployflow]}\n",
		"a/main.tf":             "",
	})
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITLAB_CI", "")
	code, _, errOut := strata(t, "-C", root, "check")
	if code != 0 || !strings.Contains(errOut, ".terrateam/config.yml:2:16: warning: workflows[0].tag_query: the query uses dest_branch") {
		t.Errorf("check: exit %d, %q", code, errOut)
	}
	code, out, errOut := strata(t, "-C", root, "--dest-branch", "poc", "ls", "--query", "dest_branch:poc")
	if code != 0 || !strings.Contains(out, "a@default") {
		t.Errorf("--dest-branch: exit %d, %q %q", code, out, errOut)
	}
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_BASE_REF", "poc")
	code, out, errOut = strata(t, "-C", root, "ls", "--query", "dest_branch:poc")
	if code != 0 || !strings.Contains(out, "a@default") {
		t.Errorf("from GitHub Actions: exit %d, %q %q", code, out, errOut)
	}
}

// TestTerrateamConfigYAML: .terrateam/config.yaml is read like
// .terrateam/config.yml; both present is an error naming both.
func TestTerrateamConfigYAML(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yaml": "dirs:\n  a: {tags: [from-yaml]}\n",
		"a/main.tf":              "",
	})
	code, out, errOut := strata(t, "-C", filepath.Join(root, "a"), "ls", "--json")
	if code != 0 || !strings.Contains(out, "from-yaml") {
		t.Errorf("config.yaml not read: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := strata(t, "-C", root, "check"); code != 0 || !strings.Contains(out, "ok: .terrateam/config.yaml:") {
		t.Errorf("check: exit %d, %q", code, out)
	}
	if err := os.WriteFile(filepath.Join(root, ".terrateam", "config.yml"), []byte("dirs: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = strata(t, "-C", root, "check")
	if code != 1 || !strings.Contains(errOut, "both .terrateam/config.yml and .terrateam/config.yaml exist") {
		t.Errorf("both: exit %d, %q", code, errOut)
	}
}

func TestStacksJSON(t *testing.T) {
	code, out, errOut := strata(t, "-C", fixture(t, "nested"), "stacks", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var got []stackEntry
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	byName := map[string]stackEntry{}
	for _, s := range got {
		byName[s.Name] = s
	}
	prod := byName["prod"]
	if prod.Kind != "nested" || !reflect.DeepEqual(prod.Stacks, []string{"prod-service", "prod-database", "prod-network"}) || len(prod.Members) != 3 {
		t.Errorf("prod = %+v", prod)
	}
	svc := byName["prod-service"]
	if svc.Kind != "leaf" || svc.Variables["environment"] != "prod" ||
		!reflect.DeepEqual(svc.Rules.PlanAfter, []string{"base", "prod-database"}) ||
		!reflect.DeepEqual(svc.Rules.ApplyAfter, []string{"dev-database", "dev-network", "dev-service"}) ||
		!reflect.DeepEqual(svc.Rules.ModifiedBy, []string{"base"}) {
		t.Errorf("prod-service = %+v", svc)
	}
	// Every documented key is present, even when empty.
	var raw []map[string]json.RawMessage
	_ = json.Unmarshal([]byte(out), &raw)
	for _, key := range []string{"name", "kind", "stacks", "members", "variables", "engine", "targets", "inputs", "rules"} {
		if _, ok := raw[0][key]; !ok {
			t.Errorf("stacks --json lacks %q", key)
		}
	}
}

func TestStacksMasksSensitive(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": "stacks:\n  names:\n    a:\n      tag_query: 'dir:a'\n      sensitive: [token]\n      variables: {token: s3cr3t, api_secret: hidden, region: eu}\n",
		"a/main.tf":  "",
	})
	_, out, _ := strata(t, "-C", root, "stacks", "--json")
	if strings.Contains(out, "s3cr3t") || strings.Contains(out, "hidden") || !strings.Contains(out, `"region": "eu"`) {
		t.Errorf("sensitive variables not masked:\n%s", out)
	}
}

func TestGraphFormats(t *testing.T) {
	dir := fixture(t, "nested")
	code, out, errOut := strata(t, "-C", dir, "graph", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var g graphJSON
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	layers := map[string]int{}
	for _, u := range g.Units {
		layers[u.ID] = u.Layer
	}
	want := map[string]int{
		"base@default#base": 0, "dev/network@default#dev-network": 1, "prod/network@default#prod-network": 4,
		"dev/database@default#dev-database": 2, "dev/service@default#dev-service": 3,
		"prod/database@default#prod-database": 5, "prod/service@default#prod-service": 6,
	}
	if !reflect.DeepEqual(layers, want) {
		t.Errorf("layers = %v, want %v", layers, want)
	}
	// Each stack holds one unit: every edge is a rule between stacks.
	found := false
	for _, e := range g.StackEdges {
		if e.From == "dev-service" && e.To == "prod-network" && e.Kind == "apply" && e.Via == "apply_after" {
			found = true
		}
	}
	if !found || len(g.StackEdges) != 7 || len(g.Edges) != 0 || len(g.Stacks) != 7 {
		t.Errorf("edges = %+v\nstack_edges = %+v", g.Edges, g.StackEdges)
	}
	_, dot, _ := strata(t, "-C", dir, "graph")
	if !strings.HasPrefix(dot, "digraph strata {") || !strings.Contains(dot, `"dev/service@default#dev-service" -> "prod/network@default#prod-network" [style=dashed, ltail=cluster_3, lhead=cluster_5, penwidth=2, label="apply_after"];`) {
		t.Errorf("dot:\n%s", dot)
	}
	_, mm, _ := strata(t, "-C", dir, "graph", "--format", "mermaid")
	if !strings.HasPrefix(mm, "flowchart LR\n") || !strings.Contains(mm, "  s3 -. apply .-> s5\n") {
		t.Errorf("mermaid:\n%s", mm)
	}
	code, _, errOut = strata(t, "-C", dir, "graph", "--format", "svg")
	if code != 1 || !strings.Contains(errOut, "expected dot, mermaid, json or html") {
		t.Errorf("bad format: exit %d, %s", code, errOut)
	}
}

func TestSelectionFlagErrors(t *testing.T) {
	code, _, errOut := strata(t, "-C", fixture(t, "nested"), "ls", "--stack", "nope")
	if code != 1 || !strings.Contains(errOut, "--stack nope: no such stack; expected one of: base, dev,") {
		t.Errorf("exit %d, %s", code, errOut)
	}
}

func TestVersionAndPassthroughOutsideUnits(t *testing.T) {
	code, out, _ := strata(t, "version")
	if code != 0 || !strings.HasPrefix(out, "strata ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	for _, flag := range []string{"--version", "-v"} {
		if c, o, e := strata(t, flag); c != 0 || o != out {
			t.Errorf("%s: exit %d, %q %q; want %q", flag, c, o, e, out)
		}
	}
	// Any other command is the engine's, run in a unit's dir.
	code, _, errOut := strata(t, "-C", t.TempDir(), "frobnicate")
	if code != 1 || !strings.Contains(errOut, "strata frobnicate runs the engine in a unit's dir") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
}

func TestTerrateamConfigAndPrecedence(t *testing.T) {
	root := writeRepo(t, map[string]string{
		".terrateam/config.yml": "dirs:\n  a: {tags: [from-terrateam]}\n",
		"a/main.tf":             "",
	})
	code, out, errOut := strata(t, "-C", filepath.Join(root, "a"), "ls", "--json")
	if code != 0 || !strings.Contains(out, "from-terrateam") {
		t.Errorf("terrateam config not read: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(root, "strata.yml"), []byte("dirs:\n  a: {tags: [from-strata]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = strata(t, "-C", root, "ls", "--json")
	if code != 0 || !strings.Contains(out, "from-strata") || !strings.Contains(errOut, "both strata.yml and .terrateam/config.yml exist; using strata.yml") {
		t.Errorf("strata.yml does not win with a warning: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestREADMEDocumentsFlags keeps the README's flag table in step with the
// engine commands' flags (those every one has, and each one's own) and
// their environment variables.
func TestREADMEDocumentsFlags(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(readme)
	flags := map[string]cli.Flag{}
	for _, c := range runCommands() {
		for _, f := range c.Flags {
			flags[f.Names()[0]] = f
		}
	}
	for _, f := range flags {
		names := f.Names()
		found := false
		for _, n := range names {
			if strings.Contains(doc, "`--"+n) || strings.Contains(doc, "`-"+n) {
				found = true
			}
		}
		if !found {
			t.Errorf("README does not document --%s", names[0])
		}
		if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
			for _, e := range ev.GetEnvVars() {
				if !strings.Contains(doc, "`"+e+"`") {
					t.Errorf("README does not document %s", e)
				}
			}
		}
	}
}

func writeRepo(t *testing.T, files map[string]string) string { return testenv.WriteRepo(t, files) }

// TestNoConfiguration: plan, apply, ls and check where there is no config
// and no root module (an empty dir, a wrong working-directory) exit 1
// saying what was searched, as terraform's "No configuration files"
// does; a dir with a module and no config still works.
func TestNoConfiguration(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{{"plan"}, {"apply", "-auto-approve"}, {"ls"}, {"check"}} {
		code, out, errOut := strata(t, append([]string{"-C", empty}, args...)...)
		if code != 1 || !strings.Contains(errOut, "no configuration: no strata.yml or .terrateam/config.yml in "+empty) || !strings.Contains(errOut, "no root module") {
			t.Errorf("%v in an empty dir: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	withModule := writeRepo(t, map[string]string{"m/main.tf": "output \"x\" {\n  value = 1\n}\n"})
	if code, out, errOut := strata(t, "-C", withModule, "ls"); code != 0 || !strings.Contains(out, "m@default") {
		t.Errorf("ls by a module with no config: exit %d\n%s%s", code, out, errOut)
	}
}

// TestHelpAsTerraform: -help and -h, terraform's spelling, show strata's
// help of its own commands; --help of a passthrough command is the
// engine's help of it, never the hidden passthrough command's; strata's
// help lists the engine commands it passes through.
func TestHelpAsTerraform(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	env := hermeticEnv(t)
	for _, args := range [][]string{{"plan", "-help"}, {"plan", "-h"}, {"apply", "-help"}, {"destroy", "-h"}} {
		if r := runBin(t, root, env, args...); r.code != 0 || !strings.Contains(r.stdout, "strata "+args[0]+" - ") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{{"state", "--help"}, {"state", "-help"}} {
		r := runBin(t, filepath.Join(root, "app"), env, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "state <subcommand>") || strings.Contains(r.stdout+r.stderr, passthroughCommand) {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runBin(t, root, env, "--help"); r.code != 0 || !strings.Contains(r.stdout, "ALL OTHER COMMANDS") || !strings.Contains(r.stdout, "state, taint") {
		t.Errorf("--help: exit %d\n%s", r.code, r.stdout)
	}
}

// TestCheckNamesOIDCStepsSkippedLocally: outside CI, with no OIDC token,
// check names each oidc step, hook or workflow step, at its file:line:col
// as skipped; in CI it says nothing of them.
func TestCheckNamesOIDCStepsSkippedLocally(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `hooks:
  all:
    pre:
      - type: oidc
        provider: aws
        role_arn: arn:aws:iam::123456789012:role/ci
workflows:
  - tag_query: ''
    plan:
      - type: oidc
        provider: aws
        role_arn: arn:aws:iam::123456789012:role/ci
      - type: init
      - type: plan
`,
		"app/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	r := runBin(t, root, hermeticEnv(t), "check")
	want := "note: outside CI, with no OIDC token, oidc steps are skipped and the ambient credentials used (docs/behaviour.md#oidc):\n" +
		"  strata.yml:4:9: hooks.all.pre[0]\n  strata.yml:10:9: workflows[0].plan[0]\n"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("check outside CI: exit %d\n%s", r.code, r.stderr)
	}
	if r := runBin(t, root, append(hermeticEnv(t), "CI=true"), "check"); r.code != 0 || strings.Contains(r.stderr, "oidc steps are skipped") {
		t.Errorf("check in CI: exit %d\n%s", r.code, r.stderr)
	}
}

// TestCheckCountsWarningsAsPrinted: check's closing count is the count of
// the warnings it printed: the config's, a branch query's, a second
// config file's, and the warning of units with no engine configured,
// which names their stacks and says it has no line to point at.
func TestCheckCountsWarningsAsPrinted(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITLAB_CI", "")
	const stacks = "stacks:\n  names:\n    net: {tag_query: 'dir:net'}\n    app: {tag_query: 'dir:app'}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"no engine", map[string]string{"strata.yml": stacks},
			[]string{"warning: strata.yml: no engine is configured for 2 units (2 stacks: app, net); they run the terraform on PATH (no line to point at"}},
		{"the config's, at its line", map[string]string{"strata.yml": "engine: {name: terraform}\ndirs:\n  gone: {tags: [g]}\n" + stacks},
			[]string{`strata.yml:3:3: warning: dirs.gone: dir "gone" does not exist`}},
		{"a branch query with no branch", map[string]string{"strata.yml": "engine: {name: terraform}\nworkflows:\n  - tag_query: 'dir:net and dest_branch:poc'\n    plan: [{type: init}, {type: plan}]\n" + stacks},
			[]string{"strata.yml:3:16: warning: workflows[0].tag_query: the query uses dest_branch"}},
		{"two config files", map[string]string{"strata.yml": "engine: {name: terraform}\n" + stacks, ".terrateam/config.yml": "dirs:\n  net: {}\n"},
			[]string{"warning: both strata.yml and .terrateam/config.yml exist; using strata.yml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"net/main.tf": "", "app/main.tf": ""}
			for k, v := range tc.files {
				files[k] = v
			}
			root := writeRepo(t, files)
			code, out, errOut := strata(t, "-C", root, "check")
			printed := strings.Count(errOut, "warning: ")
			if code != 0 || printed != len(tc.want) || !strings.Contains(out, ", "+report.CountOf(printed, "warning")+"\n") {
				t.Errorf("check: exit %d, %d warnings printed, want %d and counted\n%s\n%s", code, printed, len(tc.want), out, errOut)
			}
			for _, want := range tc.want {
				if !strings.Contains(errOut, want) {
					t.Errorf("the warnings:\n%s\nwant %q", errOut, want)
				}
			}
		})
	}
}
