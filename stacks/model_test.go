package stacks

import (
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

func dirspaceIDs(p *Project) []string {
	var out []string
	for _, ds := range p.Dirspaces {
		out = append(out, ds.ID())
	}
	return out
}

func TestDiscovery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   string
		files map[string]string
		want  []string
	}{
		{
			name: "a dir called as a local module is not a root",
			files: map[string]string{
				"app/main.tf":         "module \"net\" {\n  source = \"../modules/net\"\n}\n",
				"modules/net/main.tf": "variable \"x\" {\n  default = 1\n}\n",
			},
			want: []string{"app@default"},
		},
		{
			name: "an exact dirs key makes a module dir a root",
			cfg:  "dirs:\n  modules/net: {}\n",
			files: map[string]string{
				"app/main.tf":         "module \"net\" {\n  source = \"../modules/net\"\n}\n",
				"modules/net/main.tf": "variable \"x\" {\n  default = 1\n}\n",
			},
			want: []string{"app@default", "modules/net@default"},
		},
		{
			name: "tfvars alone, hidden dirs and .terraform are not roots",
			files: map[string]string{
				"vars/prod.tfvars":                 "x = 1\n",
				".hidden/main.tf":                  "",
				"app/.terraform/modules/m/main.tf": "",
				"app/main.tf":                      "",
				"json/main.tf.json":                "{}",
				"tofu/main.tofu":                   "",
				"root.tf":                          "",
			},
			want: []string{".@default", "app@default", "json@default", "tofu@default"},
		},
		{
			name: "global file_patterns choose the roots",
			cfg:  "when_modified:\n  file_patterns: ['terraform/**/*.tf']\n",
			files: map[string]string{
				"terraform/a/main.tf": "",
				"scratch/b/main.tf":   "",
			},
			want: []string{"terraform/a@default"},
		},
		{
			name: "workspaces replace the default workspace",
			cfg:  "dirs:\n  app:\n    workspaces:\n      staging: {}\n      prod: {}\n",
			files: map[string]string{
				"app/main.tf": "",
			},
			want: []string{"app@prod", "app@staging"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := testRepo(t, tc.cfg)
			for f, c := range tc.files {
				testenv.WriteFile(t, filepath.Join(root, f), c)
			}
			p := loadRepo(t, root)
			if got := dirspaceIDs(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("dirspaces = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDirTagsAndInheritance(t *testing.T) {
	root := testRepo(t, `when_modified:
  autoplan: false
  file_patterns: ['**/*.tf']
dirs:
  aws/**:
    tags: [aws]
  aws/prod/**:
    tags: [aws, prod]
    when_modified:
      autoapply: true
  aws/prod/db:
    tags: [db]
    workspaces:
      blue:
        tags: [blue]
        when_modified:
          file_patterns: ['${DIR}/*.tf', '!${DIR}/scratch.tf']
      green: {}
`, "aws/dev/net", "aws/prod/net", "aws/prod/db")
	p := loadRepo(t, root)
	tags := map[string]string{}
	for _, ds := range p.Dirspaces {
		tags[ds.ID()] = strings.Join(ds.Tags, " ")
	}
	want := map[string]string{
		"aws/dev/net@default":  "aws dir:aws/dev/net workspace:default",
		"aws/prod/net@default": "aws prod dir:aws/prod/net workspace:default",
		"aws/prod/db@blue":     "db blue dir:aws/prod/db workspace:blue",
		"aws/prod/db@green":    "db dir:aws/prod/db workspace:green",
	}
	if !reflect.DeepEqual(tags, want) {
		t.Errorf("tags:\n got %v\nwant %v", tags, want)
	}
	byID := map[string]*Dirspace{}
	for _, ds := range p.Dirspaces {
		byID[ds.ID()] = ds
	}
	// The longest glob key wins; when_modified is inherited field by field.
	if wm := byID["aws/prod/net@default"].WhenModified; !wm.Autoapply || wm.Autoplan || !wm.Global {
		t.Errorf("aws/prod/net when_modified = %+v", wm)
	}
	if wm := byID["aws/dev/net@default"].WhenModified; wm.Autoapply || wm.Autoplan {
		t.Errorf("aws/dev/net when_modified = %+v", wm)
	}
	blue := byID["aws/prod/db@blue"].WhenModified
	if blue.Global || !reflect.DeepEqual(blue.FilePatterns, []string{"${DIR}/*.tf", "!${DIR}/scratch.tf"}) || blue.Autoplan {
		t.Errorf("aws/prod/db@blue when_modified = %+v", blue)
	}
}

func TestFilePatterns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		patterns []string
		global   bool
		file     string
		want     bool
	}{
		{[]string{"**/*.tf"}, true, "app/main.tf", true},
		{[]string{"**/*.tf"}, true, "app/sub/main.tf", false}, // global **/x is ${DIR}/x
		{[]string{"**/*.tf"}, true, "other/main.tf", false},
		{[]string{"*.tfvars"}, true, "app/prod.tfvars", true},
		{[]string{"${DIR}/**/*.tf"}, false, "app/sub/main.tf", true},
		{[]string{"${DIR}/*.tf", "!${DIR}/scratch.tf"}, false, "app/scratch.tf", false},
		{[]string{"${DIR}/*.tf", "!${DIR}/scratch.tf"}, false, "app/main.tf", true},
		{[]string{"modules/**/*.tf"}, true, "modules/vpc/main.tf", true},
		{[]string{"${DIR}/${WORKSPACE}.tfvars"}, false, "app/prod.tfvars", true},
		{[]string{"${DIR}/${WORKSPACE}.tfvars"}, false, "app/dev.tfvars", false},
	}
	for _, tc := range tests {
		if got := MatchFilePatterns(tc.patterns, tc.file, "app", "prod", tc.global); got != tc.want {
			t.Errorf("MatchFilePatterns(%v, %s, global=%t) = %t, want %t", tc.patterns, tc.file, tc.global, got, tc.want)
		}
	}
}

func TestVariables(t *testing.T) {
	root := testRepo(t, `dirs:
  a:
    tags: [a]
stacks:
  names:
    top:
      stacks: [mid]
      variables:
        region: eu-west-1
        price: 1.50
        enabled: true
        owner: top
    mid:
      stacks: [leaf]
      variables:
        owner: mid
        db_secret: hunter2
    leaf:
      tag_query: a
      sensitive: [token]
      variables:
        token: abc
        count: 3
`, "a")
	p := loadRepo(t, root)
	leaf := mustStack(t, p, "leaf")
	got := map[string]string{}
	sensitive := []string{}
	for _, v := range leaf.Variables {
		got[v.Name] = v.Value + " from " + v.From
		if v.Sensitive {
			sensitive = append(sensitive, v.Name)
		}
	}
	want := map[string]string{
		"region":    "eu-west-1 from top",
		"price":     "1.50 from top",
		"enabled":   "true from top",
		"owner":     "mid from mid",
		"db_secret": "hunter2 from mid",
		"token":     "abc from leaf",
		"count":     "3 from leaf",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("variables:\n got %v\nwant %v", got, want)
	}
	sort.Strings(sensitive)
	if !reflect.DeepEqual(sensitive, []string{"db_secret", "token"}) {
		t.Errorf("sensitive = %v", sensitive)
	}
	if v, ok := leaf.Variable("price"); !ok || v != "1.50" {
		t.Errorf("Variable(price) = %q, %t", v, ok)
	}
	u := p.UnitsIn("a")[0]
	if got := strings.Join(u.Tags, " "); got != "a dir:a workspace:default stack_name:leaf stack_name:mid stack_name:top" {
		t.Errorf("unit tags = %s", got)
	}
}

func TestInheritedEngineAndAutoApply(t *testing.T) {
	root := testRepo(t, `dirs:
  a: {tags: [a]}
  b: {tags: [b]}
stacks:
  names:
    all:
      stacks: [group]
      engine: {name: terraform, version: 1.5.7}
      auto_apply: true
    group:
      stacks: [a, b]
      rules: {auto_apply: false}
    a:
      tag_query: a
    b:
      tag_query: b
      engine: {name: tofu, version: "~> 1.8"}
`, "a", "b")
	p := loadRepo(t, root)
	ea, _ := p.EngineFor(p.UnitsIn("a")[0])
	eb, _ := p.EngineFor(p.UnitsIn("b")[0])
	if ea.Name != "terraform" || ea.Version != "1.5.7" || ea.From != "stack all" {
		t.Errorf("engine of a = %+v", ea)
	}
	if eb.Name != "tofu" || eb.Version != "~> 1.8" || eb.From != "stack b" {
		t.Errorf("engine of b = %+v", eb)
	}
	// The nearest explicit auto_apply wins: group's false over all's true.
	if mustStack(t, p, "a").AutoApply {
		t.Error("a inherits auto_apply false from group, the nearer ancestor")
	}
}

func TestTopLevelEngineBeatsDefaultVersion(t *testing.T) {
	root := testRepo(t, "engine: {name: tofu, version: latest}\ndefault_tf_version: 1.5.7\n", "a")
	p := loadRepo(t, root)
	e, err := p.EngineFor(p.UnitsIn("a")[0])
	if err != nil || e.Name != "tofu" || e.Version != "latest" || e.From != "engine" {
		t.Errorf("engine = %+v, %v", e, err)
	}
	root = testRepo(t, "", "b")
	p = loadRepo(t, root)
	if e, _ := p.EngineFor(p.UnitsIn("b")[0]); e.Name != "terraform" || e.Version != "" || e.From != "PATH" {
		t.Errorf("no engine configured: %+v", e)
	}
}

func TestEngineSources(t *testing.T) {
	cfg := `dirs:
  a: {tags: [a]}
  b: {tags: [b]}
  c: {tags: [c]}
workflows:
  - tag_query: b
    engine: {name: tofu, version: 1.8.8}
  - tag_query: c
    terraform_version: 1.6.6
default_tf_version: 1.5.7
`
	root := testRepo(t, cfg, "a", "b", "c", "d/e")
	testenv.WriteFile(t, filepath.Join(root, "d", ".opentofu-version"), "1.8.5\n")
	p := loadRepo(t, root)
	got := map[string]string{}
	for _, dir := range []string{"a", "b", "c", "d/e"} {
		e, err := p.EngineFor(p.UnitsIn(dir)[0])
		if err != nil {
			t.Fatal(err)
		}
		got[dir] = e.Name + " " + e.Version + " (" + e.From + ")"
	}
	want := map[string]string{
		"a":   "terraform 1.5.7 (default_tf_version)",
		"b":   "tofu 1.8.8 (workflow b)",
		"c":   "terraform 1.6.6 (workflow c)",
		"d/e": "tofu 1.8.5 (d/.opentofu-version)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("engines:\n got %v\nwant %v", got, want)
	}
}

const layeredCfg = `dirs:
  net/a: {tags: [net]}
  net/b: {tags: [net]}
  app/x:
    tags: [app]
    when_modified:
      depends_on: 'dir:app/y'
  app/y:
    tags: [app]
    when_modified:
      depends_on:
        tag_query: 'relative_dir:../z'
        prune_on_no_change: true
  app/z: {tags: [app]}
stacks:
  names:
    net:
      tag_query: net
      on_change: {run_strategy: all-for-one}
    app:
      tag_query: app
`

func TestPropagation(t *testing.T) {
	t.Parallel()
	root := testRepo(t, layeredCfg, "net/a", "net/b", "app/x", "app/y", "app/z")
	p := loadRepo(t, root)
	tests := []struct {
		modified []string
		want     []string
	}{
		{[]string{"net/a"}, []string{"net/a@default: modified: net/a/main.tf", "net/b@default: all_for_one: net/a@default"}},
		// y is pulled in by z through depends_on, then pruned: only
		// propagation added it and it sets prune_on_no_change. x still
		// comes, through y.
		{[]string{"app/z"}, []string{"app/x@default: depends_on: app/y@default", "app/z@default: modified: app/z/main.tf"}},
		{[]string{"app/y"}, []string{"app/x@default: depends_on: app/y@default", "app/y@default: modified: app/y/main.tf"}},
	}
	for _, tc := range tests {
		if got := runWhy(modifiedRun(t, p, tc.modified...)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("modified %v:\n got %q\nwant %q", tc.modified, got, tc.want)
		}
	}
	// The pruned unit keeps the order: x waits for z through y.
	run := modifiedRun(t, p, "app/z")
	g, err := p.Graph(run.List(), GraphOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := graphEdges(g); !reflect.DeepEqual(got, []string{"app/z@default -> app/x@default (plan)"}) {
		t.Errorf("edges through the pruned unit = %v", got)
	}
	if r, _ := p.Select(Selection{Cwd: ".", Modified: map[*Unit]string{p.UnitsIn("net/a")[0]: "modified: net/a/main.tf"}, NoPropagate: true}); len(r.Units) != 1 {
		t.Errorf("--no-propagate kept %d units", len(r.Units))
	}
}

func TestUnitCycle(t *testing.T) {
	root := testRepo(t, `dirs:
  a:
    when_modified: {depends_on: 'dir:b'}
  b:
    when_modified: {depends_on: 'dir:a'}
`, "a", "b")
	p := loadRepo(t, root)
	_, err := p.Graph(p.Units, GraphOptions{})
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("want a CycleError, got %v", err)
	}
	if got := strings.Join(ce.Cycle, " -> "); got != "a@default -> b@default -> a@default" && got != "b@default -> a@default -> b@default" {
		t.Errorf("cycle = %s", got)
	}
}

func TestDestroyGraph(t *testing.T) {
	root := testRepo(t, `dirs:
  base: {tags: [base]}
  dev: {tags: [dev]}
  prod: {tags: [prod]}
stacks:
  names:
    base: {tag_query: base}
    dev:
      tag_query: dev
      rules: {modified_by: [base]}
    prod:
      tag_query: prod
      rules: {modified_by: [base], apply_after: [dev]}
`, "base", "dev", "prod")
	p := loadRepo(t, root)
	g, err := p.Graph(p.Units, GraphOptions{Destroy: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"dev@default -> base@default (plan)",
		"dev@default -> prod@default (apply)",
		"prod@default -> base@default (plan)",
	}
	if got := graphEdges(g); !reflect.DeepEqual(got, want) {
		t.Errorf("destroy edges:\n got %v\nwant %v", got, want)
	}
	if g.Layer[p.UnitsIn("base")[0]] != 2 {
		t.Errorf("base is destroyed last: layer %d", g.Layer[p.UnitsIn("base")[0]])
	}
}

func TestSelection(t *testing.T) {
	t.Parallel()
	root := testRepo(t, `dirs:
  base: {tags: [base]}
  dev/net: {tags: [dev, net]}
  dev/app: {tags: [dev, app]}
  prod/net:
    tags: [prod, net]
    workspaces: {blue: {}, green: {}}
stacks:
  names:
    base: {tag_query: base}
    dev:
      stacks: [dev-net, dev-app]
      rules: {modified_by: [base]}
    dev-net: {tag_query: dev and net}
    dev-app: {tag_query: dev and app}
    prod-net: {tag_query: prod}
`, "base", "dev/net", "dev/app", "prod/net")
	p := loadRepo(t, root)
	tests := []struct {
		name string
		sel  Selection
		want []string
		drop bool
	}{
		{"root, no flag: everything", Selection{Cwd: "."}, []string{"base@default", "dev/app@default", "dev/net@default", "prod/net@blue", "prod/net@green"}, false},
		{"subtree", Selection{Cwd: "dev"}, []string{"dev/app@default", "dev/net@default"}, false},
		{"drop-in dir with two workspaces", Selection{Cwd: "prod/net"}, []string{"prod/net@blue", "prod/net@green"}, true},
		{"drop-in with TF_WORKSPACE", Selection{Cwd: "prod/net", EnvWorkspace: "green"}, []string{"prod/net@green"}, true},
		{"--workspace", Selection{Cwd: ".", Workspace: "blue"}, []string{"prod/net@blue"}, false},
		{"--stack nested selects its leaves", Selection{Cwd: ".", Stacks: []string{"dev"}}, []string{"dev/app@default", "dev/net@default"}, false},
		{"--query over unit tags", Selection{Cwd: ".", Query: "stack_name:dev and app"}, []string{"dev/app@default"}, false},
		{"--dir", Selection{Cwd: ".", Dirs: []string{"prod"}}, []string{"prod/net@blue", "prod/net@green"}, false},
		{"--all in a unit dir selects below it", Selection{Cwd: "dev/net", All: true}, []string{"dev/net@default"}, false},
		{"selections intersect", Selection{Cwd: ".", Stacks: []string{"prod-net"}, Workspace: "green"}, []string{"prod/net@green"}, false},
		{"empty", Selection{Cwd: ".", Query: "nothing"}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := p.Select(tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range r.Units {
				got = append(got, u.Name())
			}
			if !reflect.DeepEqual(got, tc.want) || r.DropIn != tc.drop {
				t.Errorf("got %v (drop-in %t), want %v (drop-in %t)", got, r.DropIn, tc.want, tc.drop)
			}
		})
	}
	// An explicit selection runs what it names; with --propagate, base
	// pulls dev in.
	r, _ := p.Select(Selection{Cwd: ".", Stacks: []string{"base"}})
	if got := runWhy(r); !reflect.DeepEqual(got, []string{"base@default: selected"}) {
		t.Errorf("--stack base: %v", got)
	}
	r, _ = p.Select(Selection{Cwd: ".", Stacks: []string{"base"}, Propagate: true})
	if got := runWhy(r); !reflect.DeepEqual(got, []string{"base@default: selected", "dev/app@default: modified_by: base", "dev/net@default: modified_by: base"}) {
		t.Errorf("--stack base --propagate: %v", got)
	}
	if _, err := p.Select(Selection{Cwd: ".", Stacks: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "--stack nope: no such stack") {
		t.Errorf("unknown stack: %v", err)
	}
	if _, err := p.Select(Selection{Cwd: ".", Query: "a and ("}); err == nil || !strings.Contains(err.Error(), "--query") {
		t.Errorf("bad query: %v", err)
	}
}

func TestWarnings(t *testing.T) {
	root := testRepo(t, `dirs:
  a:
    tags: [x]
    when_modified: {depends_on: 'dir:b'}
  b: {tags: [y]}
  c: {tags: [z]}
stacks:
  names:
    sx: {tag_query: x}
    sy: {tag_query: y}
    sz:
      tag_query: z
      engine: {name: terragrunt}
indexer: {enabled: true}
batch_runs: {enabled: true}
workflows:
  - tag_query: 'x y or z'
    runs_on: {group: a}
  - tag_query: z
    runs_on: {group: b}
`, "a", "b", "c")
	_, diags := loadDiags(t, root)
	if diags.HasErrors() {
		t.Fatalf("errors:\n%s", diagText(diags))
	}
	for _, want := range []string{
		`depends_on "dir:b" of a@default matches units of other stacks, which it ignores: b@default (stack sy)`,
		"engine terragrunt (set by stack sz) is not supported",
		"indexer: accepted and ignored",
		"batch_runs: accepted and ignored",
		"workflows[0].tag_query:",
	} {
		if !hasDiag(diags, config.SeverityWarning, want) {
			t.Errorf("no warning %q in:\n%s", want, diagText(diags))
		}
	}
	// Each at the line that sets what it is about.
	for _, w := range []struct {
		message string
		line    int
	}{{"matches units of other stacks", 4}, {"engine terragrunt (set by stack sz) is not supported", 13}} {
		for _, d := range diags {
			if strings.Contains(d.Message, w.message) && d.Pos.Line != w.line {
				t.Errorf("the warning %q is at %s, want line %d", w.message, d, w.line)
			}
		}
	}
	n := 0
	for _, d := range diags {
		if strings.Contains(d.Message, "runs_on") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("an ignored key warns once per run, got %d", n)
	}
}

func TestSeveralParents(t *testing.T) {
	root := testRepo(t, `dirs:
  db: {tags: [db]}
stacks:
  names:
    zeta:
      stacks: [shared]
      variables: {team: data}
      rules: {apply_after: [other]}
    alpha:
      stacks: [mid]
      variables: {region: eu}
    mid:
      stacks: [shared]
    shared:
      tag_query: db
    other:
      tag_query: never
`, "db")
	p := loadRepo(t, root)
	s := mustStack(t, p, "shared")
	// Both paths are root-to-leaf; the lexicographically smallest wins.
	if got := strings.Join(s.Path, "/"); got != "alpha/mid/shared" {
		t.Errorf("path = %s", got)
	}
	if v, _ := s.Variable("team"); v != "data" {
		t.Errorf("team from parent zeta = %q", v)
	}
	if v, _ := s.Variable("region"); v != "eu" {
		t.Errorf("region from grandparent alpha = %q", v)
	}
	if got := stackRules(p, "shared"); got != "plan_after= apply_after=other modified_by=" {
		t.Errorf("rules inherited from one of two parents: %s", got)
	}
	u := p.UnitsIn("db")[0]
	if got := strings.Join(u.Tags, " "); got != "db dir:db workspace:default stack_name:shared stack_name:mid stack_name:zeta stack_name:alpha" {
		t.Errorf("tags = %s", got)
	}
}

func TestRootsBelow(t *testing.T) {
	root := testRepo(t, "", "app", "app/nested", "app/nested/deeper", "app2", "other")
	testenv.WriteFile(t, filepath.Join(root, "main.tf"), "")
	p := loadRepo(t, root)
	for dir, want := range map[string][]string{
		"app":        {"app/nested", "app/nested/deeper"},
		"app2":       nil,
		".":          {"app", "app/nested", "app/nested/deeper", "app2", "other"},
		"app/nested": {"app/nested/deeper"},
	} {
		if got := p.RootsBelow(dir); !reflect.DeepEqual(got, want) {
			t.Errorf("RootsBelow(%s) = %v, want %v", dir, got, want)
		}
	}
}
