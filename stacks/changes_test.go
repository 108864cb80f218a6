package stacks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// gitRun runs git in dir and fails the test on an error.
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, args...)
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// gitFixture is a work tree with a bare "origin" beside it.
type gitFixture struct {
	t      testing.TB
	work   string
	origin string
}

// newGitFixture commits files on main in a new work tree, pushes main to a
// bare origin (so origin/main exists) and checks out a feature branch.
func newGitFixture(t testing.TB, files map[string]string) *gitFixture {
	t.Helper()
	needGit(t)
	top := t.TempDir()
	f := &gitFixture{t: t, work: filepath.Join(top, "work"), origin: filepath.Join(top, "origin.git")}
	gitRun(t, top, "init", "-q", "--bare", f.origin)
	gitRun(t, top, "init", "-q", f.work)
	f.write(files)
	f.commit("base")
	gitRun(t, f.work, "remote", "add", "origin", f.origin)
	gitRun(t, f.work, "push", "-q", "origin", "main")
	gitRun(t, f.work, "checkout", "-q", "-b", "feature")
	return f
}

func (f *gitFixture) git(args ...string) string {
	f.t.Helper()
	return gitRun(f.t, f.work, args...)
}

func (f *gitFixture) write(files map[string]string) {
	f.t.Helper()
	for name, content := range files {
		testenv.WriteFile(f.t, filepath.Join(f.work, filepath.FromSlash(name)), content)
	}
}

func (f *gitFixture) commit(msg string) {
	f.t.Helper()
	f.git("add", "-A")
	f.git("commit", "-q", "--allow-empty", "-m", msg)
}

// changes runs git.Changes in the work tree with env as the environment.
func (f *gitFixture) changes(base string, env map[string]string) ([]FileChange, error) {
	return git.Changes(context.Background(), f.work, git.ChangeOptions{Base: base, Env: func(k string) string { return env[k] }})
}

func renderChanges(cs []FileChange) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Status + " " + c.Path
		if c.Deleted {
			out[i] += " (deleted)"
		}
	}
	return out
}

func renderModified(m map[*Unit]string) []string {
	out := []string{}
	for u, why := range m {
		out = append(out, u.Name()+": "+why)
	}
	sort.Strings(out)
	return out
}

func renderDeleted(ds []DeletedUnit) []string {
	out := []string{}
	for _, d := range ds {
		stack := "-"
		if d.Stack != nil {
			stack = d.Stack.Name
		}
		out = append(out, fmt.Sprintf("%s@%s#%s (%s)", d.Dir, d.Workspace, stack, d.File))
	}
	return out
}

const changesConfig = `when_modified:
  file_patterns: ["**/*.tf", "**/*.tfvars", "!**/*_test.tf"]
dirs:
  app:
    when_modified:
      file_patterns: ["${DIR}/*.tf", "shared/app.yml", "!${DIR}/scratch.tf"]
  net:
    workspaces:
      blue: {}
      green:
        when_modified: {autoplan: false}
`

func changesRepo() map[string]string {
	res := `resource "terraform_data" "this" {}` + "\n"
	return map[string]string{
		config.StrataConfigFile:          changesConfig,
		"app/main.tf":                    res,
		"net/main.tf":                    res,
		"db/main.tf":                     res,
		"db/outputs.tf":                  `output "id" { value = "db" }` + "\n",
		"svc/main.tf":                    `module "vpc" { source = "../modules/vpc" }` + "\n",
		"edge/main.tf":                   `module "lb" { source = "../modules/lb" }` + "\n",
		"modules/lb/main.tf":             `module "vpc" { source = "../vpc" }` + "\n",
		"modules/vpc/main.tf":            res,
		"modules/vpc/files/user_data.sh": "#!/bin/sh\n",
		"old/main.tf":                    res,
		"old/variables.tf":               `variable "x" {}` + "\n",
		"shared/app.yml":                 "replicas: 1\n",
		"README.md":                      "# infra\n",
	}
}

// modifiedFromGitCases are changes made to changesRepo on a branch, with
// the files git reports and the units they modify or delete.
var modifiedFromGitCases = []struct {
	name     string
	change   func(f *gitFixture)
	files    []string
	modified []string
	deleted  []string
}{{
	name:     "tf",
	change:   func(f *gitFixture) { f.write(map[string]string{"db/main.tf": "# db\n"}); f.commit("db") },
	files:    []string{"M db/main.tf"},
	modified: []string{"db@default: modified: db/main.tf"},
}, {
	name:     "tfvars",
	change:   func(f *gitFixture) { f.write(map[string]string{"db/prod.tfvars": "x = 1\n"}); f.commit("vars") },
	files:    []string{"A db/prod.tfvars"},
	modified: []string{"db@default: modified: db/prod.tfvars"},
}, {
	name: "first file in sorted order is the reason",
	change: func(f *gitFixture) {
		f.write(map[string]string{"db/main.tf": "# db\n", "db/a.tfvars": "x = 1\n"})
		f.commit("db")
	},
	files:    []string{"A db/a.tfvars", "M db/main.tf"},
	modified: []string{"db@default: modified: db/a.tfvars"},
}, {
	name:     "local module, transitively",
	change:   func(f *gitFixture) { f.write(map[string]string{"modules/vpc/main.tf": "# vpc\n"}); f.commit("vpc") },
	files:    []string{"M modules/vpc/main.tf"},
	modified: []string{"edge@default: modified: modules/vpc/main.tf", "svc@default: modified: modules/vpc/main.tf"},
}, {
	name:     "module in the middle of the chain",
	change:   func(f *gitFixture) { f.write(map[string]string{"modules/lb/main.tf": "# lb\n"}); f.commit("lb") },
	files:    []string{"M modules/lb/main.tf"},
	modified: []string{"edge@default: modified: modules/lb/main.tf"},
}, {
	name: "a file in a module's subdir",
	change: func(f *gitFixture) {
		f.write(map[string]string{"modules/vpc/files/user_data.sh": "#!/bin/sh\necho\n"})
		f.commit("user data")
	},
	files:    []string{"M modules/vpc/files/user_data.sh"},
	modified: []string{"edge@default: modified: modules/vpc/files/user_data.sh", "svc@default: modified: modules/vpc/files/user_data.sh"},
}, {
	name: "negated patterns",
	change: func(f *gitFixture) {
		f.write(map[string]string{"db/db_test.tf": "# test\n", "app/scratch.tf": "# scratch\n"})
		f.commit("negated")
	},
	files:    []string{"A app/scratch.tf", "A db/db_test.tf"},
	modified: []string{},
}, {
	name:     "pattern outside the dir",
	change:   func(f *gitFixture) { f.write(map[string]string{"shared/app.yml": "replicas: 2\n"}); f.commit("app") },
	files:    []string{"M shared/app.yml"},
	modified: []string{"app@default: modified: shared/app.yml"},
}, {
	name:     "rename counts both paths",
	change:   func(f *gitFixture) { f.git("mv", "db/outputs.tf", "app/outputs.tf"); f.commit("move") },
	files:    []string{"A app/outputs.tf", "D db/outputs.tf (deleted)"},
	modified: []string{"app@default: modified: app/outputs.tf", "db@default: modified: db/outputs.tf"},
}, {
	name:     "untracked file, autoplan false left out",
	change:   func(f *gitFixture) { f.write(map[string]string{"net/new.tf": "# new\n"}) },
	files:    []string{"? net/new.tf"},
	modified: []string{"net@blue: modified: net/new.tf"},
}, {
	name: "staged and unstaged",
	change: func(f *gitFixture) {
		f.write(map[string]string{"app/main.tf": "# staged\n"})
		f.git("add", "app/main.tf")
		f.write(map[string]string{"db/main.tf": "# unstaged\n"})
	},
	files:    []string{"M app/main.tf", "M db/main.tf"},
	modified: []string{"app@default: modified: app/main.tf", "db@default: modified: db/main.tf"},
}, {
	name: "committed and uncommitted together",
	change: func(f *gitFixture) {
		f.write(map[string]string{"app/main.tf": "# committed\n"})
		f.commit("app")
		f.write(map[string]string{"svc/main.tf": "# uncommitted\n"})
	},
	files:    []string{"M app/main.tf", "M svc/main.tf"},
	modified: []string{"app@default: modified: app/main.tf", "svc@default: modified: svc/main.tf"},
}, {
	name:     "deleted dir, committed",
	change:   func(f *gitFixture) { f.git("rm", "-q", "-r", "old"); f.commit("rm old") },
	files:    []string{"D old/main.tf (deleted)", "D old/variables.tf (deleted)"},
	modified: []string{},
	deleted:  []string{"old@default#default (old/main.tf)"},
}, {
	name: "deleted dir, not committed",
	change: func(f *gitFixture) {
		if err := os.RemoveAll(filepath.Join(f.work, "old")); err != nil {
			f.t.Fatal(err)
		}
	},
	files:    []string{"D old/main.tf (deleted)", "D old/variables.tf (deleted)"},
	modified: []string{},
	deleted:  []string{"old@default#default (old/main.tf)"},
}, {
	name:     "a deleted file in a dir that stays",
	change:   func(f *gitFixture) { f.git("rm", "-q", "db/outputs.tf"); f.commit("rm") },
	files:    []string{"D db/outputs.tf (deleted)"},
	modified: []string{"db@default: modified: db/outputs.tf"},
}, {
	name:     "unrelated file",
	change:   func(f *gitFixture) { f.write(map[string]string{"README.md": "# infra!\n"}); f.commit("docs") },
	files:    []string{"M README.md"},
	modified: []string{},
}}

// TestModifiedUnitsFromGit makes each kind of change on a branch of a real
// repository and checks the exact units it modifies, with their reasons.
func TestModifiedUnitsFromGit(t *testing.T) {
	for _, tc := range modifiedFromGitCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newGitFixture(t, changesRepo())
			tc.change(f)
			changes, err := f.changes("", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderChanges(changes); !reflect.DeepEqual(got, tc.files) {
				t.Errorf("changes = %q, want %q", got, tc.files)
			}
			p := loadRepo(t, f.work)
			modified, deleted := p.ModifiedUnits(changes)
			if got := renderModified(modified); !reflect.DeepEqual(got, tc.modified) {
				t.Errorf("modified = %q, want %q", got, tc.modified)
			}
			if tc.deleted == nil {
				tc.deleted = []string{}
			}
			if got := renderDeleted(deleted); !reflect.DeepEqual(got, tc.deleted) {
				t.Errorf("deleted = %q, want %q", got, tc.deleted)
			}
		})
	}
}

// TestModifiedUnitsPatterns covers the index's general path: dir-level
// patterns that match outside the dir, ${WORKSPACE}, and files the engine
// writes.
func TestModifiedUnitsPatterns(t *testing.T) {
	root := testRepo(t, `dirs:
  ".":
    when_modified: {file_patterns: ["*.tf"]}
  all:
    when_modified: {file_patterns: ["**/*.hcl", "**/main.tf"]}
  ws:
    workspaces: {dev: {}, prod: {}}
    when_modified: {file_patterns: ["${DIR}/*.tf", "${DIR}/${WORKSPACE}.tfvars", "config/**"]}
  mod:
    when_modified: {file_patterns: ["${DIR}/**/*.tf", "!${DIR}/gen/**"]}
`, ".", "all", "ws", "mod", "other")
	p := loadRepo(t, root)
	changes := []FileChange{
		{Path: "ws/prod.tfvars"}, {Path: "deep/down/x.hcl"}, {Path: "mod/gen/a.tf"},
		{Path: "other/.terraform/modules/m/main.tf"}, {Path: "config"}, {Path: "root.tf"},
	}
	modified, deleted := p.ModifiedUnits(changes)
	// `config/**` matches config itself, as doublestar does.
	want := []string{
		".@default: modified: root.tf",
		"all@default: modified: deep/down/x.hcl",
		"ws@dev: modified: config",
		"ws@prod: modified: config",
	}
	if got := renderModified(modified); !reflect.DeepEqual(got, want) {
		t.Errorf("modified = %q, want %q", got, want)
	}
	if len(deleted) != 0 {
		t.Errorf("deleted = %q", renderDeleted(deleted))
	}
	modified, _ = p.ModifiedUnits([]FileChange{{Path: "config/x.yml"}, {Path: "mod/a/b.tf"}})
	want = []string{"mod@default: modified: mod/a/b.tf", "ws@dev: modified: config/x.yml", "ws@prod: modified: config/x.yml"}
	if got := renderModified(modified); !reflect.DeepEqual(got, want) {
		t.Errorf("modified = %q, want %q", got, want)
	}
}

// TestDeletedUnitsKeepStacksAndWorkspaces: a deleted dir is reported once
// per workspace and stack the config gives it.
func TestDeletedUnitsKeepStacksAndWorkspaces(t *testing.T) {
	root := testRepo(t, `dirs:
  "envs/**":
    tags: [env]
    workspaces: {blue: {}, green: {}}
stacks:
  names:
    envs: {tag_query: env}
`, "envs/a", "base")
	p := loadRepo(t, root)
	changes := []FileChange{
		{Path: "envs/gone/main.tf", Status: "D", Deleted: true},
		{Path: "base/old.tf", Status: "D", Deleted: true},
		{Path: "gone/README.md", Status: "D", Deleted: true},
	}
	_, deleted := p.ModifiedUnits(changes)
	want := []string{"envs/gone@blue#envs (envs/gone/main.tf)", "envs/gone@green#envs (envs/gone/main.tf)"}
	if got := renderDeleted(deleted); !reflect.DeepEqual(got, want) {
		t.Errorf("deleted = %q, want %q", got, want)
	}
	if got := strings.Join(deleted[0].Tags, " "); got != "env dir:envs/gone workspace:blue stack_name:envs" {
		t.Errorf("tags = %s", got)
	}
	sel, err := p.DeletedIn(Selection{Cwd: ".", Workspace: "green"}, deleted)
	if err != nil || len(sel) != 1 || sel[0].Workspace != "green" {
		t.Errorf("DeletedIn --workspace green = %q, %v", renderDeleted(sel), err)
	}
	sel, _ = p.DeletedIn(Selection{Cwd: "base"}, deleted)
	if len(sel) != 0 {
		t.Errorf("DeletedIn from base = %q", renderDeleted(sel))
	}
	sel, _ = p.DeletedIn(Selection{Cwd: ".", Query: "stack_name:envs and workspace:blue"}, deleted)
	if len(sel) != 1 {
		t.Errorf("DeletedIn --query = %q", renderDeleted(sel))
	}
}

// TestDeletedInstanceUnits: a deleted dir's instance units are the units
// the dir had: each in its instance's workspace, or, when the workflow's
// init names STRATA_STACK_INSTANCE in its backend config, in the dir's
// own workspace, with the tags the live units carry.
func TestDeletedInstanceUnits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, workflows string
		want            []string
		tags            string
	}{
		{name: "own workspace", want: []string{"gone@eu#net[eu] (gone/main.tf)", "gone@us#net[us] (gone/main.tf)"},
			tags: "net dir:gone workspace:eu stack_name:net[eu] stack_name:net stack_instance:eu"},
		{name: "own backend", workflows: `workflows:
  - tag_query: ''
    plan: [{type: init, extra_args: ['-backend-config=key=${STRATA_STACK_INSTANCE}']}, {type: plan}]
`, want: []string{"gone@default#net[eu] (gone/main.tf)", "gone@default#net[us] (gone/main.tf)"},
			tags: "net dir:gone workspace:default stack_name:net[eu] stack_name:net stack_instance:eu"},
	} {
		root := testRepo(t, `dirs:
  "*":
    tags: [net]
stacks:
  names:
    net: {tag_query: net, for_each: [us, eu]}
`+tc.workflows, "live")
		p := loadRepo(t, root)
		live := p.UnitsIn("live")
		_, deleted := p.ModifiedUnits([]FileChange{{Path: "gone/main.tf", Status: "D", Deleted: true}})
		got := renderDeleted(deleted)
		sort.Strings(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: deleted = %q, want %q", tc.name, got, tc.want)
			continue
		}
		for _, d := range deleted {
			if d.Stack.Name == "net[eu]" && strings.Join(d.Tags, " ") != tc.tags {
				t.Errorf("%s: tags = %s, want %s", tc.name, strings.Join(d.Tags, " "), tc.tags)
			}
		}
		for _, u := range live {
			if u.Stack.Name == "net[eu]" && strings.Join(u.Tags, " ") != strings.ReplaceAll(tc.tags, "gone", "live") {
				t.Errorf("%s: the live unit's tags %s, the deleted one's %s", tc.name, strings.Join(u.Tags, " "), tc.tags)
			}
		}
	}
}

// BenchmarkModifiedUnits decides the modified units of a 500-file change
// in the generated repository of 10,000 dirspaces.
func BenchmarkModifiedUnits(b *testing.B) {
	dir := benchRepoDir(b)
	p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
	if err != nil {
		b.Fatal(err)
	}
	changes := benchChanges(p)
	b.ReportAllocs()
	for b.Loop() {
		modified, _ := p.ModifiedUnits(changes)
		if len(modified) != 900 {
			b.Fatalf("%d units modified, want 900", len(modified))
		}
	}
}

// BenchmarkChangedRun adds propagation (docs/behaviour.md#propagation) to BenchmarkModifiedUnits:
// the whole decision of `--changed` once the changed files are known.
func BenchmarkChangedRun(b *testing.B) {
	dir := benchRepoDir(b)
	p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
	if err != nil {
		b.Fatal(err)
	}
	changes := benchChanges(p)
	b.ReportAllocs()
	for b.Loop() {
		modified, _ := p.ModifiedUnits(changes)
		if _, err := p.Select(Selection{Cwd: ".", Modified: modified}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchChanges is a change of 500 files in 500 dirs: 400 main.tf, 50 new
// tfvars and 50 READMEs that modify nothing.
func benchChanges(p *Project) []FileChange {
	var changes []FileChange
	for i := 0; len(changes) < 500; i += 20 {
		dir := p.Dirspaces[i].Dir
		switch n := len(changes); {
		case n%10 == 8:
			changes = append(changes, FileChange{Path: dir + "/prod.tfvars", Status: "A"})
		case n%10 == 9:
			changes = append(changes, FileChange{Path: dir + "/README.md", Status: "A"})
		default:
			changes = append(changes, FileChange{Path: dir + "/main.tf", Status: "M"})
		}
	}
	return changes
}

// BenchmarkChangedGit is `--changed` after loading, on a real repository:
// git lists a 500-file change on a branch of the generated repository of
// 10,000 dirspaces, then the modified units and propagation decide the run.
func BenchmarkChangedGit(b *testing.B) {
	needGit(b)
	dir := b.TempDir()
	genRepo(b, dir)
	gitRun(b, dir, "init", "-q")
	gitRun(b, dir, "add", "-A")
	gitRun(b, dir, "commit", "-q", "-m", "base")
	gitRun(b, dir, "update-ref", "refs/remotes/origin/main", "HEAD")
	gitRun(b, dir, "checkout", "-q", "-b", "feature")
	p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range benchChanges(p) {
		testenv.WriteFile(b, filepath.Join(dir, filepath.FromSlash(c.Path)), "# changed\n")
	}
	gitRun(b, dir, "add", "-A")
	gitRun(b, dir, "commit", "-q", "-m", "change")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		changes, err := git.Changes(ctx, dir, git.ChangeOptions{Env: envOf(nil)})
		if err != nil {
			b.Fatal(err)
		}
		if len(changes) != 500 {
			b.Fatalf("%d changes, want 500", len(changes))
		}
		modified, _ := p.ModifiedUnits(changes)
		if _, err := p.Select(Selection{Cwd: ".", Modified: modified}); err != nil {
			b.Fatal(err)
		}
	}
}

// genReadsRepo is the generated repository of 10,000 dirspaces whose
// 5,000 root modules each read a JSON file of their group outside their
// dir, a template and a fileset of pages in their dir; every tenth calls
// a local module that reads a template.
func genReadsRepo(tb testing.TB, dir string) {
	genRepo(tb, dir)
	files := map[string]string{"modules/render/main.tf": "output \"body\" {\n  value = templatefile(\"${path.module}/body.tpl\", {})\n}\n", "modules/render/body.tpl": "hi\n"}
	for g := 0; g < 20; g++ {
		files[fmt.Sprintf("shared/g%d.json", g)] = "{}\n"
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "main.tf" {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		group := rel[:strings.IndexByte(rel, '/')]
		src := "locals {\n" +
			"  net   = jsondecode(file(\"${path.module}/../../../../shared/" + group + ".json\"))\n" +
			"  pages = fileset(\"${path.module}/pages\", \"*.html\")\n" +
			"  body  = templatefile(format(\"%s/body.tpl\", path.module), {})\n" +
			"}\n" + `resource "terraform_data" "this" {}` + "\n"
		if n%10 == 0 {
			src += "module \"render\" {\n  source = \"../../../../modules/render\"\n}\n"
		}
		n++
		files[rel+"/main.tf"] = src
		files[rel+"/body.tpl"] = "body\n"
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	for rel, content := range files {
		testenv.WriteFile(tb, filepath.Join(dir, filepath.FromSlash(rel)), content)
	}
}

// BenchmarkModifiedUnitsReads decides the modified units of a change on
// the generated repository of 10,000 dirspaces, from a project just
// loaded, as a command does: with reads, every root module and module is
// parsed once, and the change (a file a group reads, pages added in 100
// dirs, the module's template, and benchChanges) is matched against
// them. "without reads" is the same change on the repository whose
// modules read nothing.
func BenchmarkModifiedUnitsReads(b *testing.B) {
	for _, bc := range []struct {
		name string
		gen  func(testing.TB, string)
	}{{"without reads", genRepo}, {"with reads", genReadsRepo}} {
		dir := b.TempDir()
		bc.gen(b, dir)
		b.Run(bc.name, func(b *testing.B) {
			p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
			if err != nil {
				b.Fatal(err)
			}
			changes := append(benchChanges(p), FileChange{Path: "shared/g0.json", Status: "M"}, FileChange{Path: "modules/render/body.tpl", Status: "M"})
			for i := 50; i < len(p.Dirspaces); i += 100 {
				changes = append(changes, FileChange{Path: p.Dirspaces[i].Dir + "/pages/new.html", Status: "A"})
			}
			want := -1
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p, err := Load(dir, filepath.Join(dir, config.StrataConfigFile))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				modified, _ := p.ModifiedUnits(changes)
				if want < 0 {
					want = len(modified)
				} else if len(modified) != want {
					b.Fatalf("%d units modified, then %d", want, len(modified))
				}
			}
			b.ReportMetric(float64(want), "units")
		})
	}
}
