package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated schema and README reference")

const (
	schemaPath = "../../schema/strata.schema.json"
	readmePath = "../../README.md"
	refBegin   = "<!-- BEGIN CONFIG REFERENCE (generated: go test ./stacks/config -run TestGenerated -update) -->\n"
	refEnd     = "<!-- END CONFIG REFERENCE -->"
)

// TestGeneratedSchema keeps the published JSON Schema equal to what the
// config types generate.
func TestGeneratedSchema(t *testing.T) {
	got, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	props := v["properties"].(map[string]any)
	for _, key := range []string{"dirs", "stacks", "workflows", "engine", "when_modified", "hooks"} {
		if _, ok := props[key]; !ok {
			t.Errorf("schema lacks top-level key %q", key)
		}
	}
	if *update {
		if err := os.WriteFile(schemaPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatalf("%v (run go test ./stacks/config -run TestGenerated -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with the config types; run go test ./stacks/config -run TestGenerated -update", schemaPath)
	}
}

// TestGeneratedReference keeps the README's configuration reference equal to
// what the config types generate.
func TestGeneratedReference(t *testing.T) {
	ref := Reference()
	for _, key := range []string{"`stacks.names.NAME.rules.plan_after`", "`workflows[].plan[].extra_args`", "`dirs.NAME.workspaces.NAME.tags`"} {
		if !strings.Contains(ref, key) {
			t.Errorf("reference lacks %s", key)
		}
	}
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i, j := strings.Index(s, refBegin), strings.Index(s, refEnd)
	if i < 0 || j < i {
		t.Fatalf("README lacks the reference markers %q … %q", refBegin, refEnd)
	}
	current := s[i+len(refBegin) : j]
	if *update {
		s = s[:i+len(refBegin)] + ref + s[j:]
		if err := os.WriteFile(readmePath, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if current != ref {
		t.Errorf("README configuration reference is out of date; run go test ./stacks/config -run TestGenerated -update")
	}
}

// TestReferenceLeavesTheDecoder: writing the reference does not disturb
// how configs decode afterwards (it once sorted the decoder's own field
// list, and the next config decoded keys into the wrong fields).
func TestReferenceLeavesTheDecoder(t *testing.T) {
	cfg := "notifications:\n  policies: [{tag_query: app, comment_strategy: shout}]\n"
	Reference()
	_, diags := Parse("strata.yml", []byte(cfg))
	if !strings.Contains(diagText(diags), `comment_strategy: found "shout"`) {
		t.Errorf("after the reference, the config decodes as:\n%s", diagText(diags))
	}
}
