package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// stacksRepo writes a repository of three stacks of seven units each:
// staging plans after base, prod applies after staging, and
// staging/u1 depends on staging/u0.
func stacksRepo(t *testing.T) string {
	t.Helper()
	cfg := "dirs:\n"
	files := map[string]string{}
	for _, stack := range []string{"base", "staging", "prod"} {
		for i := range 7 {
			dir := fmt.Sprintf("%s/u%d", stack, i)
			files[dir+"/main.tf"] = "resource \"terraform_data\" \"x\" {}\n"
			extra := ""
			if dir == "staging/u1" {
				extra = ", when_modified: {depends_on: 'dir:staging/u0'}"
			}
			cfg += fmt.Sprintf("  %s: {tags: [%s]%s}\n", dir, stack, extra)
		}
	}
	cfg += `stacks:
  names:
    base: {tag_query: base}
    staging:
      tag_query: staging
      rules: {plan_after: [base]}
    prod:
      tag_query: prod
      rules: {apply_after: [staging]}
`
	files["strata.yml"] = cfg
	return writeRepo(t, files)
}

// TestGraphJSONStackEdges: graph --format json lists the edge between
// two units in edges and each rule between stacks once in stack_edges;
// --expand lists every unit pair a rule holds in edges too
// (docs/behaviour.md#the-unit-dag).
func TestGraphJSONStackEdges(t *testing.T) {
	root := stacksRepo(t)
	wantStacks := []graphStack{{Name: "base", Units: 7}, {Name: "prod", Units: 7}, {Name: "staging", Units: 7}}
	// In the order of the stack waiting: prod, then staging.
	wantStackEdges := []graphStackEdge{
		{From: "staging", To: "prod", Kind: "apply", Via: "apply_after"},
		{From: "base", To: "staging", Kind: "plan", Via: "plan_after"},
	}
	dependsOn := graphEdge{From: "staging/u0@default#staging", To: "staging/u1@default#staging", Kind: "plan", Via: "depends_on"}
	for _, tc := range []struct {
		name  string
		args  []string
		edges int
	}{
		{"one edge per rule", nil, 1},
		// depends_on, then 7 x 7 pairs per rule.
		{"expanded", []string{"--expand"}, 1 + 49 + 49},
	} {
		code, out, errOut := strata(t, append([]string{"-C", root, "graph", "--format", "json"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.name, code, errOut)
		}
		var g graphJSON
		if err := json.Unmarshal([]byte(out), &g); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		if len(g.Units) != 21 || len(g.Edges) != tc.edges || g.Edges[0] != dependsOn {
			t.Errorf("%s: %d units, %d edges, want 21 and %d, depends_on first: %+v", tc.name, len(g.Units), len(g.Edges), tc.edges, g.Edges)
		}
		if !reflect.DeepEqual(g.Stacks, wantStacks) || !reflect.DeepEqual(g.StackEdges, wantStackEdges) {
			t.Errorf("%s: stacks %+v\nstack_edges %+v", tc.name, g.Stacks, g.StackEdges)
		}
		pairs := map[string]int{}
		for _, e := range g.Edges[1:] {
			pairs[e.Kind+" "+e.Via]++
			if e.Via == "plan_after" && (!strings.HasSuffix(e.From, "#base") || !strings.HasSuffix(e.To, "#staging")) ||
				e.Via == "apply_after" && (!strings.HasSuffix(e.From, "#staging") || !strings.HasSuffix(e.To, "#prod")) {
				t.Errorf("%s: edge %+v", tc.name, e)
			}
		}
		if tc.args != nil && (pairs["plan plan_after"] != 49 || pairs["apply apply_after"] != 49) {
			t.Errorf("%s: pairs %v", tc.name, pairs)
		}
	}
	// The layers count a rule as an edge from each unit.
	_, out, _ := strata(t, "-C", root, "graph", "--format", "json")
	var g graphJSON
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	for _, u := range g.Units {
		want := map[string]int{"base": 0, "staging": 1, "prod": 3}[u.Stack]
		if u.ID == "staging/u1@default#staging" {
			want = 2
		}
		if u.Layer != want {
			t.Errorf("%s: layer %d, want %d", u.ID, u.Layer, want)
		}
	}
	if code, _, errOut := strata(t, "-C", root, "graph", "--expand"); code != 1 || !strings.Contains(errOut, "--expand goes with --format json") {
		t.Errorf("--expand with dot: exit %d, %s", code, errOut)
	}
}

// TestGraphDotStackEdges: in dot, each rule between stacks is one edge
// between the two stacks' clusters, dashed for apply and labelled with the
// rule; the edge between two units stays one edge.
func TestGraphDotStackEdges(t *testing.T) {
	root := stacksRepo(t)
	code, dot, errOut := strata(t, "-C", root, "graph", "--format", "dot")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	clusters := regexp.MustCompile(`(?m)^  subgraph cluster_(\d+) \{\n    label="(\w+)";$`).FindAllStringSubmatch(dot, -1)
	if len(clusters) != 3 || clusters[0][2] != "base" || clusters[1][2] != "prod" || clusters[2][2] != "staging" {
		t.Fatalf("clusters %q in\n%s", clusters, dot)
	}
	edges := regexp.MustCompile(`(?m)^  "[^"]+" -> "[^"]+".*;$`).FindAllString(dot, -1)
	want := []string{
		`  "staging/u0@default#staging" -> "prod/u0@default#prod" [style=dashed, ltail=cluster_2, lhead=cluster_1, penwidth=2, label="apply_after"];`,
		`  "base/u0@default#base" -> "staging/u0@default#staging" [ltail=cluster_0, lhead=cluster_2, penwidth=2, label="plan_after"];`,
		`  "staging/u0@default#staging" -> "staging/u1@default#staging";`,
	}
	if !reflect.DeepEqual(edges, want) {
		t.Errorf("edges:\n%s\nwant:\n%s\nin\n%s", strings.Join(edges, "\n"), strings.Join(want, "\n"), dot)
	}
	if !strings.HasPrefix(dot, "digraph strata {\n  rankdir=LR;\n  compound=true;\n") {
		t.Errorf("no compound=true, which ltail and lhead need:\n%s", dot)
	}
}

// TestGraphMermaidStackEdges: in mermaid, each stack is a subgraph and
// each rule between stacks one edge between two subgraphs, dotted for
// apply.
func TestGraphMermaidStackEdges(t *testing.T) {
	root := stacksRepo(t)
	code, mm, errOut := strata(t, "-C", root, "graph", "--format", "mermaid")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	subgraphs := regexp.MustCompile(`(?m)^  subgraph (s\d)\["(\w+)"\]$`).FindAllStringSubmatch(mm, -1)
	if len(subgraphs) != 3 || subgraphs[0][2] != "base" || subgraphs[1][2] != "prod" || subgraphs[2][2] != "staging" {
		t.Fatalf("subgraphs %q in\n%s", subgraphs, mm)
	}
	edges := regexp.MustCompile(`(?m)^  \w+ .*-.? \w+$`).FindAllString(mm, -1)
	// Units are numbered as the graph sorts them: base, prod, staging.
	want := []string{"  s2 -. apply .-> s1", "  s0 --> s2", "  u14 --> u15"}
	if !reflect.DeepEqual(edges, want) {
		t.Errorf("edges %q, want %q in\n%s", edges, want, mm)
	}
	if n := strings.Count(mm, "\n    u"); n != 21 {
		t.Errorf("%d units in subgraphs, want 21", n)
	}
}
