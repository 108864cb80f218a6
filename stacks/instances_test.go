package stacks

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/stacks/config"
)

// instanceRepo is a repository with a network (output id) and an app
// (variable vpc) under cfg.
func instanceRepo(t *testing.T, cfg string) string {
	t.Helper()
	root := t.TempDir()
	testenv.WriteFile(t, filepath.Join(root, config.StrataConfigFile), cfg)
	testenv.WriteFile(t, filepath.Join(root, "net/main.tf"), "output \"id\" {\n  value = \"x\"\n}\n")
	testenv.WriteFile(t, filepath.Join(root, "app/main.tf"), "variable \"vpc\" {\n  type = string\n}\n")
	testenv.WriteFile(t, filepath.Join(root, "dns/main.tf"), "resource \"terraform_data\" \"d\" {}\n")
	return root
}

// unitLines renders each unit as `ID ws=… vars=…`, sorted.
func unitLines(p *Project) []string {
	var out []string
	for _, u := range p.Units {
		var vars []string
		for _, v := range u.Stack.Variables {
			vars = append(vars, v.Name+"="+v.Value)
		}
		line := u.ID() + " name=" + u.Name() + " ws=" + u.Workspace
		if len(vars) > 0 {
			line += " vars=" + strings.Join(vars, ",")
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// inputLines renders every wired input as `consumer.var <- producer.output`.
func inputLines(p *Project) []string {
	var out []string
	for _, u := range p.Units {
		for _, in := range p.Inputs(u) {
			out = append(out, u.Name()+"."+in.Var+" <- "+in.Producer.Name()+"."+in.Output)
		}
	}
	sort.Strings(out)
	return out
}

func TestStackInstances(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cfg    string
		units  []string
		inputs []string
		edges  []string // graph edges, unit pairs
		rules  map[string]string
	}{
		{
			name: "the issue's two regions: a map and a list, app[k] reads net[k]",
			cfg: `stacks:
  names:
    net:
      tag_query: dir:net
      variables: {size: small, region: none}
      for_each:
        us: {variables: {region: us-east-1}}
        eu: {variables: {region: eu-west-1}}
    app:
      tag_query: dir:app
      for_each: [us, eu]
      inputs:
        vpc: net.id
`,
			units: []string{
				"app@eu#app[eu] name=app@eu ws=eu",
				"app@us#app[us] name=app@us ws=us",
				"dns@default#default name=dns@default ws=default",
				"net@eu#net[eu] name=net@eu ws=eu vars=region=eu-west-1,size=small",
				"net@us#net[us] name=net@us ws=us vars=region=us-east-1,size=small",
			},
			inputs: []string{"app@eu.vpc <- net@eu.id", "app@us.vpc <- net@us.id"},
		},
		{
			name: "a rule between instanced stacks pairs the keys; to a plain stack, that stack; net[eu] names one",
			cfg: `stacks:
  names:
    dns:
      tag_query: dir:dns
    net:
      tag_query: dir:net
      for_each: [us, eu]
      rules: {apply_after: [dns]}
    app:
      tag_query: dir:app
      for_each: [us, eu]
      rules: {apply_after: [net, "net[eu]"]}
      inputs:
        vpc: {stack: "net[us]", output: id}
`,
			units: []string{
				"app@eu#app[eu] name=app@eu ws=eu",
				"app@us#app[us] name=app@us ws=us",
				"dns@default#dns name=dns@default ws=default",
				"net@eu#net[eu] name=net@eu ws=eu",
				"net@us#net[us] name=net@us ws=us",
			},
			inputs: []string{"app@eu.vpc <- net@us.id", "app@us.vpc <- net@us.id"},
			rules: map[string]string{
				"app[us]": "plan_after= apply_after=dns,net[eu],net[us] modified_by=",
				"app[eu]": "plan_after= apply_after=dns,net[eu] modified_by=",
				"net[eu]": "plan_after= apply_after=dns modified_by=",
			},
		},
		{
			name: "a plain stack reading an instanced one waits for every instance",
			cfg: `stacks:
  names:
    net:
      tag_query: dir:net
      for_each: [us, eu]
    dns:
      tag_query: dir:dns
      rules: {plan_after: [net]}
`,
			units: []string{
				"app@default#default name=app@default ws=default",
				"dns@default#dns name=dns@default ws=default",
				"net@eu#net[eu] name=net@eu ws=eu",
				"net@us#net[us] name=net@us ws=us",
			},
			rules: map[string]string{"dns": "plan_after=net[eu],net[us] apply_after= modified_by="},
		},
		{
			name: "a nested stack's for_each gives each instance to all its leaves",
			cfg: `stacks:
  names:
    region:
      stacks: [net, app]
      variables: {tier: region}
      for_each:
        us: {variables: {region: us-east-1}}
        eu: {variables: {region: eu-west-1}}
    net:
      tag_query: dir:net
    app:
      tag_query: dir:app
      variables: {region: app-own}
      inputs: {vpc: net.id}
`,
			units: []string{
				"app@eu#app[eu] name=app@eu ws=eu vars=region=app-own,tier=region",
				"app@us#app[us] name=app@us ws=us vars=region=app-own,tier=region",
				"dns@default#default name=dns@default ws=default",
				"net@eu#net[eu] name=net@eu ws=eu vars=region=eu-west-1,tier=region",
				"net@us#net[us] name=net@us ws=us vars=region=us-east-1,tier=region",
			},
			inputs: []string{"app@eu.vpc <- net@eu.id", "app@us.vpc <- net@us.id"},
		},
		{
			name: "a dirspace outside default gets <workspace>-<key>",
			cfg: `dirs:
  net:
    workspaces: {staging: {}}
stacks:
  names:
    net:
      tag_query: dir:net
      for_each: [us]
`,
			units: []string{
				"app@default#default name=app@default ws=default",
				"dns@default#default name=dns@default ws=default",
				"net@staging-us#net[us] name=net@staging-us ws=staging-us",
			},
		},
		{
			name: "a workflow naming the instance in its backend keeps the workspace, and the name carries the stack",
			cfg: `stacks:
  names:
    net:
      tag_query: dir:net
      for_each: [us, eu]
workflows:
  - tag_query: stack_name:net
    plan:
      - type: init
        extra_args: ['-backend-config=path=${STRATA_STACK_INSTANCE}.tfstate']
      - type: plan
`,
			units: []string{
				"app@default#default name=app@default ws=default",
				"dns@default#default name=dns@default ws=default",
				"net@default#net[eu] name=net@default#net[eu] ws=default",
				"net@default#net[us] name=net@default#net[us] ws=default",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := loadRepo(t, instanceRepo(t, tc.cfg))
			if got := unitLines(p); !reflect.DeepEqual(got, tc.units) {
				t.Errorf("units:\n got %q\nwant %q", got, tc.units)
			}
			if got := inputLines(p); !reflect.DeepEqual(got, tc.inputs) && (len(got) > 0 || len(tc.inputs) > 0) {
				t.Errorf("inputs:\n got %q\nwant %q", got, tc.inputs)
			}
			for name, want := range tc.rules {
				if got := stackRules(p, name); got != want {
					t.Errorf("rules of %s: got %s, want %s", name, got, want)
				}
			}
		})
	}
}

// Each instance takes its own engine, auto_apply and targets where its key
// gives them, and the stack's otherwise; its tags name the stack, the
// instance and its key.
func TestStackInstanceSettings(t *testing.T) {
	t.Parallel()
	p := loadRepo(t, instanceRepo(t, `stacks:
  names:
    net:
      tag_query: dir:net
      engine: {name: terraform, version: 1.11.4}
      auto_apply: true
      targets: [terraform_data.all]
      for_each:
        us: {}
        eu:
          engine: {name: tofu, version: 1.8.8}
          auto_apply: false
          targets: [terraform_data.eu]
`))
	type settings struct {
		engine, tags string
		auto         bool
		targets      []string
	}
	got := map[string]settings{}
	for _, u := range p.UnitsIn("net") {
		s := u.Stack
		var tags []string
		for _, t := range u.Tags {
			if strings.HasPrefix(t, "stack_") || strings.HasPrefix(t, "workspace:") {
				tags = append(tags, t)
			}
		}
		got[s.Name] = settings{engine: s.Engine.Name.Value + "@" + s.Engine.VersionString().Value, auto: s.AutoApply, targets: s.Targets, tags: strings.Join(tags, " ")}
	}
	want := map[string]settings{
		"net[us]": {engine: "terraform@1.11.4", auto: true, targets: []string{"terraform_data.all"}, tags: "workspace:us stack_name:net[us] stack_name:net stack_instance:us"},
		"net[eu]": {engine: "tofu@1.8.8", auto: false, targets: []string{"terraform_data.eu"}, tags: "workspace:eu stack_name:net[eu] stack_name:net stack_instance:eu"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings:\n got %+v\nwant %+v", got, want)
	}
}

// --stack net selects every instance, --stack 'net[eu]' one, and a tag
// query stack_instance:eu every stack's instance of that key.
func TestStackInstanceSelection(t *testing.T) {
	t.Parallel()
	p := loadRepo(t, instanceRepo(t, `stacks:
  names:
    net:
      tag_query: dir:net
      for_each: [us, eu]
    app:
      tag_query: dir:app
      for_each: [us, eu]
`))
	for _, tc := range []struct {
		sel  Selection
		want []string
	}{
		{Selection{Stacks: []string{"net"}}, []string{"net@eu", "net@us"}},
		{Selection{Stacks: []string{"net[eu]"}}, []string{"net@eu"}},
		{Selection{Query: "stack_instance:eu"}, []string{"app@eu", "net@eu"}},
		{Selection{Query: "stack_name:app and stack_instance:us"}, []string{"app@us"}},
	} {
		tc.sel.Cwd = "."
		r, err := p.Select(tc.sel)
		if err != nil {
			t.Fatalf("%+v: %v", tc.sel, err)
		}
		var got []string
		for _, ru := range r.Units {
			got = append(got, ru.Name())
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: got %q, want %q", tc.sel, got, tc.want)
		}
	}
	if _, err := p.Select(Selection{Cwd: ".", Stacks: []string{"net[ap]"}}); err == nil || !strings.Contains(err.Error(), `--stack net[ap]: stack net has no instance "ap"; expected one of its for_each keys: us, eu`) {
		t.Errorf("--stack net[ap]: %v", err)
	}
}

// An input from an instanced consumer to a producer without the
// consumer's key is an error where it is written.
func TestStackInstanceInputKeys(t *testing.T) {
	t.Parallel()
	_, diags := loadDiags(t, instanceRepo(t, `stacks:
  names:
    net:
      tag_query: dir:net
      for_each: [us, eu]
    app:
      tag_query: dir:app
      for_each: [us, ap]
      inputs:
        vpc: net.id
`))
	want := `strata.yml:10:14: stacks.names.app.inputs.vpc: app[ap] has instance key "ap" and net has no instance of that key (its keys: us, eu)`
	if !hasDiag(diags, config.SeverityError, want) {
		t.Errorf("want %s, got:\n%v", want, diags)
	}
}

// A workspace terraform has selected in an instanced dir is an
// instance's: it adds no dirspace of its own (which would make
// instances of instances, net@us-us).
func TestStackInstanceSelectedWorkspace(t *testing.T) {
	t.Parallel()
	root := instanceRepo(t, `stacks:
  names:
    net:
      tag_query: dir:net
      for_each: [us, eu]
`)
	p, err := LoadFrom(root, filepath.Join(root, config.StrataConfigFile), nil, WithSelectedWorkspace("net", "us"), WithSelectedWorkspace("dns", "blue"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"app@default#default name=app@default ws=default",
		"dns@blue#default name=dns@blue ws=blue",
		"dns@default#default name=dns@default ws=default",
		"net@eu#net[eu] name=net@eu ws=eu",
		"net@us#net[us] name=net@us ws=us",
	}
	if got := unitLines(p); !reflect.DeepEqual(got, want) {
		t.Errorf("units:\n got %q\nwant %q", got, want)
	}
}

// auto_inputs from an instance looks among the instances of its own key
// (and stacks without instances): app[us] finds net[us]'s id, never
// net[eu]'s, where both are its siblings.
func TestStackInstanceAutoInputs(t *testing.T) {
	t.Parallel()
	root := instanceRepo(t, `stacks:
  names:
    net:
      tag_query: dir:net
      for_each: [us, eu]
    dns:
      tag_query: dir:dns
    app:
      tag_query: dir:app
      for_each: [us, eu]
      auto_inputs: true
`)
	testenv.WriteFile(t, filepath.Join(root, "app/main.tf"), "variable \"id\" {\n  type = string\n}\n")
	p := loadRepo(t, root)
	want := []string{"app@eu.id <- net@eu.id", "app@us.id <- net@us.id"}
	if got := inputLines(p); !reflect.DeepEqual(got, want) {
		t.Errorf("inputs:\n got %q\nwant %q", got, want)
	}
}

// A name that is no stack, among a stack of many instances: the error
// names the first twenty choices and counts the rest, and the suggestion
// is made over all of them.
func TestUnknownStackAmongManyInstances(t *testing.T) {
	t.Parallel()
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%02d", i)
	}
	p := loadRepo(t, instanceRepo(t, "stacks:\n  names:\n    net:\n      tag_query: dir:net\n      for_each: ["+strings.Join(keys, ", ")+"]\n"))
	_, err := p.Select(Selection{Cwd: ".", Stacks: []string{"nte[k39]"}})
	if err == nil {
		t.Fatal("an unknown stack was selected")
	}
	msg := err.Error()
	if !strings.Contains(msg, "did you mean net[k39]?") || !strings.Contains(msg, ", and 22 more") || strings.Contains(msg, "net[k39],") {
		t.Errorf("error: %s", msg)
	}
	_, err = p.Select(Selection{Cwd: ".", Stacks: []string{"net[k99]"}})
	if err == nil || !strings.Contains(err.Error(), `--stack net[k99]: stack net has no instance "k99"; expected one of its for_each keys: k00, k01,`) || !strings.Contains(err.Error(), `, and 20 more (did you mean "k09"?)`) {
		t.Errorf("net[k99]: %v", err)
	}
}
