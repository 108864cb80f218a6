package job

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// TestBuildVarFile: the var file holds a TF_VAR_ value only for a
// declared variable no file or -var sets, later levels over earlier ones,
// typed as the variable is; inputs always; nothing when empty.
func TestBuildVarFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("terraform.tfvars", "in_tfvars = \"x\"\n")
	write("a.auto.tfvars.json", `{"in_auto_json": 1}`)
	write("b.auto.tfvars", "in_auto = true\n")
	user := filepath.Join(dir, "user.tfvars")
	write("user.tfvars", "in_user_file = 2\n")
	declared := map[string]*tfconfig.Variable{}
	for name, typ := range map[string]string{"region": "string", "size": "number", "tags": "map(string)", "untyped": "", "flag": "bool",
		"in_tfvars": "string", "in_auto_json": "number", "in_auto": "bool", "in_user_file": "number", "in_user_var": "string", "bad": "number"} {
		declared[name] = &tfconfig.Variable{Name: name, Type: typ}
	}
	got, err := buildVarFile(varFileInput{
		Dir: dir, Declared: declared,
		TFVars: []map[string]string{
			{"region": "eu-west-1", "size": "1", "undeclared": "x", "in_tfvars": "no", "in_auto_json": "9", "in_auto": "false"},
			{"size": "3", "tags": `{a = "b"}`, "untyped": "u", "flag": "true", "in_user_file": "9", "in_user_var": "no", "bad": "not a number {"},
		},
		Inputs:       map[string]json.RawMessage{"from_stack": json.RawMessage(`{"id":"i-1"}`)},
		UserVars:     []string{"in_user_var=mine"},
		UserVarFiles: []string{user},
	})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	want := map[string]any{"region": "eu-west-1", "size": float64(3), "tags": map[string]any{"a": "b"}, "untyped": "u", "flag": true,
		"bad": "not a number {", "from_stack": map[string]any{"id": "i-1"}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("var file = %v\nwant %v", m, want)
	}
	if got[0] != '{' || got[len(got)-1] != '\n' {
		t.Errorf("var file text: %q", got)
	}
	empty, err := buildVarFile(varFileInput{Dir: dir, Declared: declared, TFVars: []map[string]string{{"undeclared": "x"}}})
	if err != nil || empty != nil {
		t.Errorf("nothing to write: %q %v", empty, err)
	}
	if none, err := buildVarFile(varFileInput{Dir: dir}); none != nil || err != nil {
		t.Errorf("no values: %q %v", none, err)
	}
}

// TestBuildVarFileStable: the same inputs give the same bytes (the
// digest reads them).
func TestBuildVarFileStable(t *testing.T) {
	declared := map[string]*tfconfig.Variable{"a": {Type: "string"}, "b": {Type: "string"}, "c": {Type: "string"}}
	in := varFileInput{Dir: t.TempDir(), Declared: declared, TFVars: []map[string]string{{"c": "3", "a": "1", "b": "2"}}}
	first, _ := buildVarFile(in)
	for range 10 {
		if again, _ := buildVarFile(in); string(again) != string(first) {
			t.Fatalf("var file changed: %q then %q", first, again)
		}
	}
	if want := "{\n  \"a\": \"1\",\n  \"b\": \"2\",\n  \"c\": \"3\"\n}\n"; string(first) != want {
		t.Errorf("var file = %q, want %q", first, want)
	}
}

// TestTFVarJSON: a string variable takes the value as written; others
// read it as an HCL expression, as Terraform does, and a value it
// cannot read stays a string for the engine to refuse.
func TestTFVarJSON(t *testing.T) {
	for _, tc := range []struct{ value, typ, want string }{
		{"hello", "string", `"hello"`},
		{"42", "", `"42"`},
		{"42", "any", `"42"`},
		{"42", "number", `42`},
		{"true", "bool", `true`},
		{`["a", "b"]`, "list(string)", `["a","b"]`},
		{`{x = 1}`, "object({x=number})", `{"x":1}`},
		{"oops {", "number", `"oops {"`},
		{"var.x", "number", `"var.x"`},
	} {
		got, err := tfVarJSON(tc.value, tc.typ)
		if err != nil || string(got) != tc.want {
			t.Errorf("tfVarJSON(%q, %q) = %s %v, want %s", tc.value, tc.typ, got, err, tc.want)
		}
	}
}

// TestVarsSetByFiles: the names terraform.tfvars, *.auto.tfvars[.json]
// and the user's var files set; other files and unreadable ones are
// left out.
func TestVarsSetByFiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"terraform.tfvars":      "a = 1\n",
		"terraform.tfvars.json": `{"b": 2}`,
		"x.auto.tfvars":         "c = 3\n",
		"y.auto.tfvars.json":    `{"d": 4}`,
		"other.tfvars":          "e = 5\n",
		"broken.auto.tfvars":    "f = = \n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := varsSetByFiles(dir, []string{filepath.Join(dir, "other.tfvars"), filepath.Join(dir, "missing.tfvars")})
	want := map[string]bool{"a": true, "b": true, "c": true, "d": true, "e": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("varsSetByFiles = %v, want %v", got, want)
	}
}
