package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readsFiles is a repository whose units read files in each way change
// detection follows (docs/behaviour.md#changed-units), and one unit,
// other, that reads nothing.
func readsFiles() map[string]string {
	return map[string]string{
		"lit/main.tf": "locals {\n  policy = file(\"policy.json\")\n}\n" +
			"output \"policy\" { value = local.policy }\n",
		"lit/policy.json":    `{"allow": true}` + "\n",
		"tmpl/main.tf":       "locals {\n  x = 1\n  cfg = yamldecode(file(\"${path.module}/conf/app.yaml\"))\n}\n",
		"tmpl/conf/app.yaml": "replicas: 2\n",
		"net/main.tf": "locals {\n  net = jsondecode(file(\"${path.module}/../shared/net.json\"))\n}\n" +
			"output \"cidr\" { value = local.net.cidr }\n",
		"shared/net.json": `{"cidr": "10.0.0.0/16"}` + "\n",
		"tpl/main.tf":     "module \"render\" {\n  source = \"../modules/render\"\n}\n",
		"modules/render/main.tf": "output \"body\" {\n  value = templatefile(\"${path.module}/body.tpl\", {})\n}\n" +
			"output \"footer\" {\n  value = file(format(\"%s/../../shared/footer.txt\", path.module))\n}\n",
		"modules/render/body.tpl": "hello\n",
		"shared/footer.txt":       "bye\n",
		"web/main.tf":             "resource \"terraform_data\" \"page\" {\n  for_each = fileset(\"${path.module}/pages\", \"*.html\")\n  input    = each.value\n}\n",
		"web/pages/a.html":        "<p>a</p>\n",
		"web/pages/b.html":        "<p>b</p>\n",
		"json/main.tf.json":       "{\n  \"locals\": {\n    \"cfg\": \"${jsondecode(file(\\\"${path.module}/../shared/json.json\\\"))}\"\n  }\n}\n",
		"shared/json.json":        `{"a": 1}` + "\n",
		"other/main.tf":           "resource \"terraform_data\" \"this\" {}\n",
	}
}

// TestChangedReads: a change to a file a unit reads, and only that,
// brings the unit into `ls --changed`, saying the file and the read; one
// case per read form. Real terraform then plans what `plan --changed`
// selects, reading the same files: the report says the same whys, and
// no unit fails to read what strata resolved.
func TestChangedReads(t *testing.T) {
	needTerraform(t)
	cases := []struct {
		name   string
		change func(t *testing.T, root string)
		want   []string
	}{
		{"literal path", edit("lit/policy.json", `{"allow": false}`),
			[]string{"lit@default: modified: lit/policy.json (read by lit/main.tf:2)"}},
		{"path.module template", edit("tmpl/conf/app.yaml", "replicas: 3\n"),
			[]string{"tmpl@default: modified: tmpl/conf/app.yaml (read by tmpl/main.tf:3)"}},
		{"outside the unit's dir", edit("shared/net.json", `{"cidr": "10.1.0.0/16"}`),
			[]string{"net@default: modified: shared/net.json (read by net/main.tf:2)"}},
		{"a local module's read", edit("modules/render/body.tpl", "hi\n"),
			[]string{"tpl@default: modified: modules/render/body.tpl (module render of tpl)"}},
		{"a local module's read outside its dir", edit("shared/footer.txt", "ciao\n"),
			[]string{"tpl@default: modified: shared/footer.txt (module render of tpl)"}},
		{"fileset: a file added", edit("web/pages/c.html", "<p>c</p>\n"),
			[]string{"web@default: modified: web/pages/c.html (read by web/main.tf:2)"}},
		{"fileset: a file deleted", func(t *testing.T, root string) {
			gitIn(t, root, "rm", "-q", "web/pages/a.html")
		}, []string{"web@default: modified: web/pages/a.html (read by web/main.tf:2)"}},
		{"fileset: a file it does not match", edit("web/pages/notes.txt", "x\n"), []string{}},
		{".tf.json", edit("shared/json.json", `{"a": 2}`),
			[]string{"json@default: modified: shared/json.json (read by json/main.tf.json:3)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := changedRepo(t, readsFiles())
			tc.change(t, root)
			gitIn(t, root, "add", "-A")
			gitIn(t, root, "commit", "-q", "-m", tc.name)
			if got := whys(lsChanged(t, root)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ls --changed = %q, want %q", got, tc.want)
			}
			if len(tc.want) == 0 {
				return
			}
			reportFile := filepath.Join(t.TempDir(), "r.json")
			r := runBin(t, root, hermeticEnv(t), "plan", "--changed", "--report", reportFile)
			if r.code != 0 {
				t.Fatalf("plan --changed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			got := []string{}
			for _, u := range readReport(t, reportFile).Units {
				got = append(got, u.Name()+": "+u.Why)
				if u.Status != "planned" && u.Status != "no_changes" {
					t.Errorf("%s: %s %s", u.Name(), u.Status, u.Reason)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan --changed ran %q, want %q", got, tc.want)
			}
		})
	}
}

// edit returns a change that writes content to a repo-relative file.
func edit(rel, content string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckWarnsOfUnresolvedReads: a read whose path needs evaluation is a
// warning at its file:line:col naming when_modified.file_patterns; one
// outside the repository is a warning too; resolved reads are not.
func TestCheckWarnsOfUnresolvedReads(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"app/main.tf": "variable \"path\" {}\n\nlocals {\n  ok  = file(\"${path.module}/ok.txt\")\n  doc = file(var.path)\n}\n",
		"app/ok.txt":  "ok\n",
		"mod/main.tf": "locals {\n  far = file(\"/etc/hostname\")\n}\n",
		"use/main.tf": "module \"m\" {\n  source = \"../mod\"\n}\n",
	})
	code, out, errOut := strata(t, "-C", root, "check")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	want := []string{
		"app/main.tf:5:9: warning: file() reads a path strata cannot know without evaluating it (it refers to var.path, known only when the engine evaluates it), so a change to that file modifies no unit; name the file in when_modified.file_patterns",
		`mod/main.tf:2:9: warning: file() reads a path outside the repository ("/etc/hostname" resolves outside the repository); strata does not follow it`,
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if strings.Contains(line, "file()") {
			got = append(got, line)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("check warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The two above, and the one of units with no engine configured.
	if !strings.Contains(out, "3 warnings") {
		t.Errorf("stdout = %q, want it to count 3 warnings", out)
	}
}

// readRunFiles is a unit that reads a file outside its dir into an
// output, and one that reads nothing.
func readRunFiles() map[string]string {
	return map[string]string{
		"net/main.tf": "locals {\n  net = jsondecode(file(\"${path.module}/../shared/net.json\"))\n}\n" +
			"output \"cidr\" {\n  value = local.net.cidr\n}\n",
		"shared/net.json": `{"cidr": "10.0.0.0/16"}` + "\n",
		"other/main.tf":   "resource \"terraform_data\" \"this\" {}\n",
	}
}

// TestChangedReadsRun: with real terraform, `plan --changed` plans the
// unit that reads the changed file, and the report and the summary say
// which file and which read brought it in.
func TestChangedReadsRun(t *testing.T) {
	needTerraform(t)
	root := changedRepo(t, readRunFiles())
	edit("shared/net.json", `{"cidr": "10.1.0.0/16"}`)(t, root)
	gitIn(t, root, "commit", "-q", "-am", "wider net")
	dir := t.TempDir()
	reportFile, summaryFile := filepath.Join(dir, "r.json"), filepath.Join(dir, "s.md")
	r := runBin(t, root, hermeticEnv(t), "plan", "--changed", "--report", reportFile, "--summary", summaryFile)
	if r.code != 0 {
		t.Fatalf("plan --changed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	const why = "modified: shared/net.json (read by net/main.tf:2)"
	got := map[string]string{}
	for _, u := range readReport(t, reportFile).Units {
		got[u.Name()] = u.Why + " " + string(u.Status)
	}
	if want := map[string]string{"net@default": why + " planned"}; !reflect.DeepEqual(got, want) {
		t.Errorf("report: %v, want %v", got, want)
	}
	summary, err := os.ReadFile(summaryFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(summary), "| `"+why+"` |") {
		t.Errorf("the summary does not say why net is in:\n%s", summary)
	}
}

// TestSavedPlanStaleWhenAReadFileChanges: a file a unit reads is in its
// content digest, so when it changes between plan and apply, the apply
// plans again rather than apply the saved plan; unchanged, the saved plan
// is applied.
func TestSavedPlanStaleWhenAReadFileChanges(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, readRunFiles())
	env := hermeticEnv(t)
	step := func(args ...string) string {
		t.Helper()
		r := runBin(t, root, env, append(args, "--dir", "net")...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r.stdout + r.stderr
	}
	step("plan")
	if out := step("apply", "-auto-approve"); !strings.Contains(out, "reusing the plan saved at") {
		t.Fatalf("the saved plan was not reused with nothing changed:\n%s", out)
	}
	edit("shared/net.json", `{"cidr": "10.1.0.0/16"}`)(t, root)
	step("plan")
	edit("shared/net.json", `{"cidr": "10.2.0.0/16"}`)(t, root)
	if out := step("apply", "-auto-approve"); strings.Contains(out, "reusing the plan") {
		t.Errorf("the saved plan was reused after a file net reads changed:\n%s", out)
	}
	state, err := os.ReadFile(filepath.Join(root, "net", "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(state), "10.2.0.0/16") {
		t.Errorf("the state does not hold the read file's content at apply:\n%s", state)
	}
}

// TestChangedWhys: a unit that two changed files modify, its own
// main.tf and a file it reads, and that a dependency also brings in: ls
// --changed gives one line per unit with the first reason, and --json
// lists every reason, the first first.
func TestChangedWhys(t *testing.T) {
	files := readsFiles()
	files["strata.yml"] = "dirs:\n  net: {when_modified: {depends_on: 'dir:lit'}}\n"
	root := changedRepo(t, files)
	edit("net/main.tf", files["net/main.tf"]+"# changed\n")(t, root)
	edit("shared/net.json", `{"cidr": "10.1.0.0/16"}`)(t, root)
	edit("lit/policy.json", `{"allow": false}`)(t, root)
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "two changes")
	var got []string
	for _, r := range lsChanged(t, root) {
		got = append(got, r.Dir+": "+strings.Join(r.Whys, " | "))
		if len(r.Whys) == 0 || r.Whys[0] != r.Why {
			t.Errorf("%s: why %q is not the first of %q", r.Dir, r.Why, r.Whys)
		}
	}
	want := []string{
		"lit: modified: lit/policy.json (read by lit/main.tf:2)",
		"net: modified: net/main.tf | modified: shared/net.json (read by net/main.tf:2) | depends_on: lit@default",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ls --changed --json whys:\n got %q\nwant %q", got, want)
	}
	code, out, errOut := strata(t, "-C", root, "ls", "--changed")
	if code != 0 || strings.Count(out, "net@default") != 1 || !strings.Contains(out, "modified: net/main.tf") {
		t.Errorf("ls --changed: exit %d, want one line for net with its first reason\n%s%s", code, out, errOut)
	}
}
