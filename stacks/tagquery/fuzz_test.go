package tagquery

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics, that its errors point inside the
// query, and that a query's canonical text parses back to the same query,
// which matches and selects the same subjects.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.query)
	}
	for _, q := range []string{
		"a and (b", ")", "a and", "not", "()", `"abc`, `a "b\`, "a in bar", "in dir",
		"not a in dir", "dir:[a*", "relative_dir:*", "a b or c or d", "dir~a b or c",
		"x or a b OR c", "(a b or c) d", "a\x00b", "\xff and \xfe", `"\` + "\xff" + `"`,
	} {
		f.Add(q)
	}
	// Hostile depth and length, at and past the limits: the parser must
	// stop at the level that goes too deep, and keep few warnings.
	for _, q := range []string{
		nest(maxDepth, "(", "a", ")"), nest(maxDepth+1, "(", "a", ")"),
		nest(maxDepth, "not (", "a", ")"), nest(maxDepth+1, "not (", "a", ")"),
		strings.Repeat("a ", maxDepth) + "b", strings.Repeat("a ", maxDepth+1) + "b",
		strings.Repeat("a b or ", maxDepth) + "c", strings.Repeat("not ", 10_000) + "a",
		strings.Repeat("dir~a or ", 1000) + "b", strings.Repeat("*/", maxDepth) + "*",
	} {
		f.Add(q)
	}
	subjects := randomSubjects(rand.New(rand.NewPCG(3, 5)), 70)
	ix := NewIndex(subjects)

	f.Fuzz(func(t *testing.T, src string) {
		q, err := Parse(src)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T, want *ParseError", src, err)
			}
			if pe.Query != src || pe.Column < 1 || pe.Column > utf8.RuneCountInString(src)+1 || pe.Message == "" {
				t.Fatalf("Parse(%q) error %+v points outside the query", src, pe)
			}
			return
		}
		text := q.String()
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", src, text, err)
		}
		if !back.Equal(q) {
			t.Fatalf("Parse(%q) = %s, but its text %q parses to %s", src, tree(q), text, tree(back))
		}
		if again := back.String(); again != text {
			t.Fatalf("String() is not stable: %q, then %q", text, again)
		}
		for i, s := range subjects[:8] {
			if q.Match(s) != back.Match(s) || q.MatchFrom(s, "a") != back.MatchFrom(s, "a") {
				t.Fatalf("Parse(%q) and Parse(%q) disagree on subject %d %+v", src, text, i, s)
			}
		}
		checkSelect(t, q, ix, subjects)
	})
}
