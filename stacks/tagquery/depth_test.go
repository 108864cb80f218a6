package tagquery

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// nest wraps inner in n levels of open ... close.
func nest(n int, open, inner, close string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// TestParseDepthLimit checks that a query nesting deeper than maxDepth is a
// parse error at the level that goes too deep, whatever makes the levels,
// and that the parser stops there instead of exhausting the stack.
func TestParseDepthLimit(t *testing.T) {
	t.Parallel()
	const million = 1_000_000
	tests := []struct {
		name   string
		query  string
		column int
	}{
		{"a million parentheses", nest(million, "(", "a", ")"), maxDepth + 1},
		{"a million nots", nest(million, "not (", "a", ")"), len("not (") * (maxDepth + 1)},
		{"a million tags side by side", strings.Repeat("a ", million) + "b", 2*(maxDepth+1) + 1},
		{"side by side then or, a hundred thousand times", strings.Repeat("a b or ", 100_000) + "c", len("a b or ")*maxDepth + 3},
		{"groups inside an or", nest(million, "a or (", "b", ")"), len("a or (") * (maxDepth + 1)},
		{"one level too many", nest(maxDepth+1, "(", "a", ")"), maxDepth + 1},
		{"parentheses and side by side add up", nest(maxDepth/2, "(", strings.Repeat("a ", maxDepth/2+1)+"b", ")"), maxDepth/2 + 2*(maxDepth/2+1) + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.query)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse: %v, want a *ParseError", err)
			}
			if pe.Column != tc.column || !strings.Contains(pe.Message, "nests too deeply") || !strings.Contains(pe.Message, "expected at most 1000 levels") {
				t.Errorf("Parse: column %d: %s; want column %d, nesting too deeply, at most 1000 levels", pe.Column, pe.Message, tc.column)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long, want the query elided: %.200s", len(err.Error()), err.Error())
			}
		})
	}
}

// TestDeepQueryAllowed checks that a query at the depth limit parses and
// that everything that walks a parsed query handles it: printing, parsing
// the printed text, comparing, matching and selecting.
func TestDeepQueryAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		query string
		match bool // against a subject tagged a
	}{
		{"parentheses", nest(maxDepth, "(", "a", ")"), true},
		{"nots", nest(maxDepth, "not (", "a", ")"), true},
		{"alternating or and and", nest(maxDepth/2, "x or (y and (", "a", "))"), false},
		{"side by side", strings.Repeat("a ", maxDepth) + "a", true},
		{"side by side then or", strings.Repeat("x a or ", maxDepth-1) + "a", false},
		{"glob of the most segments", strings.Repeat("*/", maxDepth-1) + "*", false},
	}
	subjects := []Subject{{Tags: []string{"a"}, Dir: "d"}, {Tags: []string{"x", "y"}, Dir: "d/e"}}
	ix := NewIndex(subjects)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Parse(tc.query)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			text := q.String()
			back, err := Parse(text)
			if err != nil {
				t.Fatalf("its text does not parse: %v", err)
			}
			if !back.Equal(q) {
				t.Errorf("its text parses to another query")
			}
			if got := q.Match(subjects[0]); got != tc.match {
				t.Errorf("Match(a) = %v, want %v", got, tc.match)
			}
			checkSelect(t, q, ix, subjects)
		})
	}
}

// TestParseIsLinear checks that long queries of one level build flat
// trees, and that and/or operands nested in groups or side by side are
// merged once, not copied at every level.
func TestParseIsLinear(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		kind  nodeKind
		kids  int
	}{
		{strings.Repeat("a and ", 100_000) + "a", kindAnd, 100_001},
		{strings.Repeat("a or ", 100_000) + "a", kindOr, 100_001},
		{nest(maxDepth-1, "a and (", strings.Repeat("b and ", 10_000)+"b", ")"), kindAnd, maxDepth - 1 + 10_001},
		{strings.Repeat("a ", maxDepth) + strings.Repeat("b and ", 10_000) + "b", kindAnd, maxDepth + 10_001},
	}
	for _, tc := range tests {
		q := MustParse(tc.query)
		if q.root.kind != tc.kind || len(q.root.kids) != tc.kids {
			t.Errorf("Parse(%.40q…) has a root of kind %d with %d operands, want kind %d with %d", tc.query, q.root.kind, len(q.root.kids), tc.kind, tc.kids)
		}
		for _, k := range q.root.kids {
			if k.kind == tc.kind {
				t.Fatalf("Parse(%.40q…) is not flat", tc.query)
			}
		}
	}
}

// TestWarningsBounded checks that a query with many warnings keeps a few,
// each short, and says how many more there were.
func TestWarningsBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		query   string
		dropped int
	}{
		{"deprecated spellings", strings.Repeat("dir~a or ", 100_000) + "b", 100_000 - maxWarnings},
		{"or after side by side", strings.Repeat("a b or ", maxDepth-1) + "b" + strings.Repeat(" or c", 100_000), maxDepth - 1 - maxWarnings},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := MustParse(tc.query).Warnings()
			if len(ws) != maxWarnings+1 {
				t.Fatalf("%d warnings, want %d", len(ws), maxWarnings+1)
			}
			for _, w := range ws {
				if len(w) > 600 {
					t.Errorf("warning is %d bytes long: %.200s", len(w), w)
				}
			}
			if last := ws[maxWarnings]; !strings.HasSuffix(last, ": "+strconv.Itoa(tc.dropped)+" more warnings like these") {
				t.Errorf("last warning %q, want %d more", last, tc.dropped)
			}
		})
	}
}

func TestGlobSegmentLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		err   string
	}{
		{strings.Repeat("*/", maxDepth-1) + "*", ""},
		{strings.Repeat("**/", maxDepth) + "x", "has 1001 segments; expected at most 1000"},
		{"a and " + strings.Repeat("dir:x/", 100_000) + "*", "has 100001 segments; expected at most 1000"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.query)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Parse(%.40q…): %v", tc.query, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Parse(%.40q…) = %v, want an error saying %q", tc.query, err, tc.err)
		}
	}
	var pe *ParseError
	if _, err := Parse("a and " + strings.Repeat("**/", maxDepth) + "x"); !errors.As(err, &pe) || pe.Column != len("a and ")+1 {
		t.Errorf("error %v, want one at the glob's column %d", err, len("a and ")+1)
	}
}

// TestDeepTags checks that tags of more segments than the glob trie holds
// are still found by globs, and that indexing them builds no level per
// segment.
func TestDeepTags(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("a/", 100_000) + "b"
	subjects := []Subject{
		{Tags: []string{deep}, Dir: "d"},
		{Tags: []string{strings.Repeat("a/", maxDepth-1) + "b"}, Dir: "d"},
		{Tags: []string{"a/b", "x"}, Dir: "e"},
		{Tags: []string{strings.Repeat("a//", maxDepth) + "c"}, Dir: "f"},
	}
	ix := NewIndex(subjects)
	if len(ix.deepTags) != 2 {
		t.Errorf("%d tags kept out of the trie, want 2", len(ix.deepTags))
	}
	depth := 0
	for n := ix.tagTrie; len(n.children) > 0; n = n.children[0] {
		depth++
	}
	if depth > maxDepth {
		t.Errorf("the trie is %d levels deep, want at most %d", depth, maxDepth)
	}
	for _, q := range []string{"**/b", "a/**", "a/*/a/**/b", "*/**/*/**/b", "a/*", "**/c", "a/**/c", "a/{a,b}/**", "x or **/b"} {
		checkSelect(t, MustParse(q), ix, subjects)
	}
}
