package tagquery

import (
	"errors"
	"strings"
	"testing"
)

// tree writes a query's structure with every grouping explicit, so that
// tests state precedence unambiguously: (or (and a b) c).
func tree(q *Query) string {
	if q.IsEmpty() {
		return "<empty>"
	}
	var b strings.Builder
	writeTree(&b, q.root)
	return b.String()
}

func writeTree(b *strings.Builder, n *node) {
	switch n.kind {
	case kindTag:
		b.WriteString(quoteTag(n.text))
		return
	case kindGlob:
		b.WriteString("(glob " + quoteTag(n.text) + ")")
		return
	case kindInDir:
		b.WriteString("(in " + quoteTag(n.text) + ")")
		return
	case kindRelativeDir:
		b.WriteString("(rel " + quoteTag(n.text) + ")")
		return
	}
	b.WriteString("(" + map[nodeKind]string{kindNot: "not", kindAnd: "and", kindOr: "or"}[n.kind])
	for _, k := range n.kids {
		b.WriteByte(' ')
		writeTree(b, k)
	}
	b.WriteByte(')')
}

// parseCases are the queries every table test and the fuzz corpus share.
var parseCases = []struct {
	name  string
	query string
	tree  string
}{
	{"single tag", "a", "a"},
	{"juxtaposition", "a b", "(and a b)"},
	{"juxtaposition chain", "a b c", "(and a b c)"},
	{"juxtaposition takes the or", "a b or c", "(and a (or b c))"},
	{"and before or", "a and b or c", "(or (and a b) c)"},
	{"or before and", "a or b and c", "(or a (and b c))"},
	{"or before juxtaposition", "a or b c", "(or a (and b c))"},
	{"juxtaposition inside or takes the later or", "a or b c or d", "(or a (and b (or c d)))"},
	{"and then juxtaposition", "a and b c or d", "(and a b (or c d))"},
	{"juxtaposition then and then or", "a b and c or d", "(and a (or (and b c) d))"},
	{"or and juxtaposition", "a or b and c d", "(or a (and b c d))"},
	{"or is left-associative and flat", "a or b or c", "(or a b c)"},
	{"parenthesised or flattens", "(a or b) or c", "(or a b c)"},
	{"and is flat", "a and (b and c)", "(and a b c)"},
	{"parentheses keep juxtaposition in", "(a b) or c", "(or (and a b) c)"},
	{"group then juxtaposition", "(a or b) c", "(and (or a b) c)"},
	{"nested parentheses", "((a))", "a"},
	{"not binds to one tag", "not a b", "(and (not a) b)"},
	{"not group then juxtaposition", "not (a or b) c", "(and (not (or a b)) c)"},
	{"not before or", "not a or b", "(or (not a) b)"},
	{"not before and", "not c and a", "(and (not c) a)"},
	{"not of not", "not (not a)", "(not (not a))"},
	{"upper-case keywords", "A AND b", "(and A b)"},
	{"mixed-case keywords", "Not x Or y", "(or (not x) y)"},
	{"keyword case in in", "a In dir", "(in a)"},
	{"quoted keyword is a tag", `"and"`, `"and"`},
	{"quoted keywords side by side", `"not" "and" 'or'`, `(and "not" "and" "or")`},
	{"single-quoted space", `'a b'`, `"a b"`},
	{"escaped double quote", `"x\"y"`, `"x\"y"`},
	{"escaped single quote", `'it\'s'`, `"it's"`},
	{"other quote inside", `"a'b" 'c"d'`, `(and "a'b" "c\"d")`},
	{"escaped backslash", `"a\\b"`, `a\b`},
	{"escaped letter", `"a\b"`, `ab`},
	{"bare backslash is literal", `a\b`, `a\b`},
	{"empty quoted tag", `""`, `""`},
	{"quote ends a bare tag", `ab"cd"`, "(and ab cd)"},
	{"quoted group", `('not')`, `"not"`},
	{"in dir", "bar/baz in dir", "(in bar/baz)"},
	{"quoted in dir", `"my dir" in "dir"`, `(in "my dir")`},
	{"in dir juxtaposed", "a in dir b", "(and (in a) b)"},
	{"not in dir", "not (a in dir)", "(not (in a))"},
	{"in dirs with and", "bar in dir and zoom in dir and not (foo in dir)", "(and (in bar) (in zoom) (not (in foo)))"},
	{"deprecated dir~", "dir~foo", "(in foo)"},
	{"dir~ left of in stays a tag", "dir~foo in dir", `(in dir~foo)`},
	{"glob", "dir:aws/*", "(glob dir:aws/*)"},
	{"double-star glob", "dir:aws/** and not workspace:prod", "(and (glob dir:aws/**) (not workspace:prod))"},
	{"relative dir", "relative_dir:../vpc", "(rel relative_dir:../vpc)"},
	{"stack name", "stack_name:prod or stack_name:dev", "(or stack_name:prod stack_name:dev)"},
	{"newlines and tabs are spaces", "a\nand\tb\r\n  or\n\nc", "(or (and a b) c)"},
	{"newline juxtaposition", "a\nb", "(and a b)"},
	{"unicode tags", "ünïcode and 日本", "(and ünïcode 日本)"},
	{"extra spaces", "a                  b   bar/baz in dir", "(and a b (in bar/baz))"},
	{"empty", "", "<empty>"},
	{"whitespace only", " \n\t ", "<empty>"},
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Parse(tc.query)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.query, err)
			}
			if got := tree(q); got != tc.tree {
				t.Errorf("Parse(%q) = %s, want %s", tc.query, got, tc.tree)
			}
			if q.Source() != tc.query {
				t.Errorf("Source() = %q, want %q", q.Source(), tc.query)
			}
		})
	}
}

func TestStringRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			q := MustParse(tc.query)
			s := q.String()
			back, err := Parse(s)
			if err != nil {
				t.Fatalf("Parse(%q.String() = %q): %v", tc.query, s, err)
			}
			if !back.Equal(q) {
				t.Errorf("Parse(%q) = %s, want %s", s, tree(back), tree(q))
			}
			if back.String() != s {
				t.Errorf("String() is not stable: %q, then %q", s, back.String())
			}
			if len(back.Warnings()) != 0 {
				t.Errorf("canonical text %q has warnings: %q", s, back.Warnings())
			}
		})
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct{ query, want string }{
		{"a b or c", "a and (b or c)"},
		{"a and b or c", "a and b or c"},
		{"NOT (a OR b) c", "not (a or b) and c"},
		{`"and" 'x y'`, `"and" and "x y"`},
		{"dir~foo", "foo in dir"},
		{`"in" in dir`, `"in" in dir`},
		{"not (a in dir)", "not (a in dir)"},
		{`"x\"y"`, `"x\"y"`},
		{"", ""},
	}
	for _, tc := range tests {
		if got := MustParse(tc.query).String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query   string
		column  int
		message string
	}{
		{"a and (b", 9, "missing closing parenthesis"},
		{"(a", 3, "missing closing parenthesis"},
		{"not (a or b", 12, "missing closing parenthesis"},
		{"é and (b", 9, "missing closing parenthesis"},
		{")", 1, `unexpected ")"`},
		{"a b)", 4, `unexpected ")"`},
		{"(a) )", 5, `unexpected ")"`},
		{"a and", 6, `expected a tag or "(" after "and"`},
		{"a AND )", 7, `expected a tag or "(" after "and"`},
		{"(a and)", 7, `expected a tag or "(" after "and"`},
		{"a or", 5, `expected a tag or "(" after "or"`},
		{"a or or b", 6, `expected a tag or "(" after "or"`},
		{"and a", 1, `expected a tag or "(" before "and"`},
		{"OR a", 1, `expected a tag or "(" before "or"`},
		{"(or a)", 2, `expected a tag or "(" before "or"`},
		{"a (and b)", 4, `expected a tag or "(" before "and"`},
		{"not", 4, `expected a tag or "(" after "not"`},
		{"not)", 4, `expected a tag or "(" after "not"`},
		{"NOT not a", 5, `expected a tag or "(" after "not"`},
		{"a and not or b", 11, `expected a tag or "(" after "not"`},
		{"()", 2, `empty parentheses: expected a tag or "("`},
		{"not ()", 6, `empty parentheses: expected a tag or "("`},
		{"a (", 4, `expected a tag or "(" after "("`},
		{`"abc`, 1, "unterminated quoted string"},
		{`a 'b\'`, 3, "unterminated quoted string"},
		{`a "b\`, 3, "unterminated quoted string"},
		{`a "b`, 3, "unterminated quoted string"},
		{`not "b`, 5, "unterminated quoted string"},
		{`a in "dir`, 6, "unterminated quoted string"},
		{`) "b`, 1, `unexpected ")"`},
		{"a in bar", 6, "the in operator only accepts dir on the right"},
		{"a in", 5, "the in operator only accepts dir on the right"},
		{"a in DIR", 6, "the in operator only accepts dir on the right"},
		{"a in (dir)", 6, "the in operator only accepts dir on the right"},
		{"a in dir/x", 6, "the in operator only accepts dir on the right"},
		{"in dir", 1, `expected a tag before "in"`},
		{"a and in dir", 7, `expected a tag or "(" after "and"`},
		{"(a) in dir", 5, `expected a tag before "in": only a single tag can be in dir`},
		{"a in dir in dir", 10, `expected a tag before "in": only a single tag can be in dir`},
		{"not a in dir", 7, `"not" takes one tag or a parenthesised group: write not (a in dir)`},
		{"dir:[a*", 1, `invalid glob pattern "dir:[a*": a tag holding "*" is a glob, so its "[", "{" and "\" must be well formed`},
		{"x and {a*", 7, `invalid glob pattern "{a*": a tag holding "*" is a glob, so its "[", "{" and "\" must be well formed`},
		{"relative_dir:*", 1, `relative_dir: takes a path, not a glob pattern: "relative_dir:*"`},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			q, err := Parse(tc.query)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", tc.query, tree(q))
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T, want *ParseError", tc.query, err)
			}
			if pe.Query != tc.query || pe.Column != tc.column || pe.Message != tc.message {
				t.Errorf("Parse(%q) error = {%q, %d, %q}, want {%q, %d, %q}",
					tc.query, pe.Query, pe.Column, pe.Message, tc.query, tc.column, tc.message)
			}
		})
	}
}

func TestParseErrorText(t *testing.T) {
	t.Parallel()
	_, err := Parse("a and (b")
	want := `tag query "a and (b": column 9: missing closing parenthesis`
	if err == nil || err.Error() != want {
		t.Errorf("Parse error = %v, want %s", err, want)
	}
}

func TestMustParsePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("MustParse(\"(\") did not panic")
		}
	}()
	MustParse("(")
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		want  []string
	}{
		{"a b or c", []string{
			`tag query "a b or c": column 5: "or" after tags side by side groups to the right: ` +
				"`a b or c` reads as `a and (b or c)`, not `(a and b) or c`; add parentheses to say which is meant",
		}},
		{"x or a b OR c", []string{
			`tag query "x or a b OR c": column 10: "or" after tags side by side groups to the right: ` +
				"`a b OR c` reads as `a and (b or c)`, not `(a and b) or c`; add parentheses to say which is meant",
		}},
		{"(a b or c) d", []string{
			`tag query "(a b or c) d": column 6: "or" after tags side by side groups to the right: ` +
				"`a b or c` reads as `a and (b or c)`, not `(a and b) or c`; add parentheses to say which is meant",
		}},
		{"a and b c or d", []string{
			`tag query "a and b c or d": column 11: "or" after tags side by side groups to the right: ` +
				"`b c or d` reads as `b and (c or d)`, not `(b and c) or d`; add parentheses to say which is meant",
		}},
		{"dir~foo", []string{`tag query "dir~foo": column 1: "dir~foo" is the deprecated spelling of foo in dir`}},
		{"a b", nil},
		{"a and b or c", nil},
		{"a or b c", nil},
		{"(a b) or c", nil},
		{"a (b or c)", nil},
		{"not a or b", nil},
		{"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := MustParse(tc.query).Warnings()
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Warnings() =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	// One warning per juxtaposition that an "or" follows, even when nested.
	if got := MustParse("a b c or d").Warnings(); len(got) != 1 {
		t.Errorf("Warnings(a b c or d) = %q, want one", got)
	}
}

func TestUsesTag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query  string
		prefix string
		want   bool
	}{
		{"stack_name:prod", "stack_name:", true},
		{"a and not (b or stack_name:*)", "stack_name:", true},
		{"a or b", "stack_name:", false},
		{"stack_name in dir", "stack_name:", false},
		{"relative_dir:..", "relative_dir:", true},
		{"dir:foo", "relative_dir:", false},
		{"", "stack_name:", false},
	}
	for _, tc := range tests {
		if got := MustParse(tc.query).UsesTag(tc.prefix); got != tc.want {
			t.Errorf("Parse(%q).UsesTag(%q) = %v, want %v", tc.query, tc.prefix, got, tc.want)
		}
	}
}

func TestNilQueryIsEmpty(t *testing.T) {
	t.Parallel()
	var q *Query
	if !q.IsEmpty() || !q.Match(Subject{Dir: "a"}) || q.String() != "" || q.Source() != "" || q.UsesTag("") || q.Warnings() != nil {
		t.Error("a nil *Query does not behave as the empty query")
	}
	if !q.Equal(MustParse("  ")) || q.Equal(MustParse("a")) {
		t.Error("a nil *Query does not equal the empty query alone")
	}
}
