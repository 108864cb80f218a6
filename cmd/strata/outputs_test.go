package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOutputAtRoot: at the root, output prints the outputs alone on
// stdout (one JSON document with -json) and its table on stderr; a name
// filters, -raw prints one unit's value as it is, and a name no unit has
// exits 1.
func TestOutputAtRoot(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n  b: {tags: [b]}\n",
		"a/main.tf":  "output \"name\" { value = \"a\" }\noutput \"n\" { value = 3 }\n",
		"b/main.tf":  "output \"name\" { value = \"b\" }\noutput \"secret\" {\n  value     = \"s3cr3t\"\n  sensitive = true\n}\n",
	})
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runBin(t, root, env, "output", "-json")
	var all map[string]map[string]struct{ Value any }
	if err := json.Unmarshal([]byte(r.stdout), &all); r.code != 0 || err != nil {
		t.Fatalf("output -json: exit %d, stdout is not one JSON document (%v):\n%s", r.code, err, r.stdout)
	}
	if all["a@default#default"]["name"].Value != "a" || all["b@default#default"]["name"].Value != "b" || !strings.Contains(r.stderr, "succeeded") {
		t.Errorf("output -json: %v; stderr:\n%s", all, r.stderr)
	}
	tests := []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"output", "name"}, 0, "a@default: name = \"a\"\nb@default: name = \"b\"\n", ""},
		{[]string{"output", "-json", "name"}, 0, "{\n  \"a@default#default\": \"a\",\n  \"b@default#default\": \"b\"\n}\n", ""},
		{[]string{"output", "--dir", "a", "-raw", "n"}, 0, "3", ""},
		{[]string{"output", "--dir", "b", "-raw", "name"}, 0, "b", ""},
		{[]string{"output", "-raw", "name"}, 1, "", "output -raw name: 2 units have it (a@default, b@default); pick one with --dir or --stack"},
		{[]string{"output", "nope"}, 1, "", `no unit has an output named "nope"`},
		{[]string{"output", "--dir", "b", "-raw", "secret"}, 1, "", "the output is sensitive; add --show-sensitive"},
		{[]string{"output", "--dir", "b", "--show-sensitive", "-raw", "secret"}, 0, "s3cr3t", ""},
	}
	for _, tt := range tests {
		r := runBin(t, root, env, tt.args...)
		if r.code != tt.code || r.stdout != tt.stdout || !strings.Contains(r.stderr, tt.errs) {
			t.Errorf("%v: exit %d, stdout %q; want %d, %q, stderr holding %q\n%s", tt.args, r.code, r.stdout, tt.code, tt.stdout, tt.errs, r.stderr)
		}
	}
}
