// Package spell finds what a mistyped word was meant to be, for the "did
// you mean …?" of errors about names, tags, dirs and commands.
package spell

import (
	"fmt"
	"strings"
)

// Distance is the Levenshtein distance between a and b: the fewest
// single-byte insertions, deletions and substitutions that turn one into
// the other.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Typo returns the candidate word was most likely meant to be: the
// nearest, when it is within a third of word's length and at most 2
// edits, the rule of strata's every "did you mean" about a name.
func Typo(word string, candidates []string) string {
	return Nearest(word, candidates, min(3, len(word)/3+1))
}

// Nearest returns the candidate nearest to word by Distance, if it is
// under limit edits and not word itself; ties go to the first candidate.
// A candidate whose length alone puts it at limit or beyond is not
// measured.
func Nearest(word string, candidates []string, limit int) string {
	best := ""
	for _, c := range candidates {
		if diff := len(c) - len(word); diff >= limit || -diff >= limit || c == word {
			continue
		}
		if d := Distance(word, c); d < limit {
			best, limit = c, d
		}
	}
	return best
}

// listLimit is how many choices List names before it counts the rest.
const listLimit = 20

// List joins the choices an error offers ("expected one of: …"): all of
// them, or past listLimit the first ones and how many more there are. A
// stack of a thousand instances is found by the suggestion (Typo, over
// every choice), not by reading a thousand names.
func List(choices []string) string {
	if len(choices) <= listLimit {
		return strings.Join(choices, ", ")
	}
	return fmt.Sprintf("%s, and %d more", strings.Join(choices[:listLimit], ", "), len(choices)-listLimit)
}
