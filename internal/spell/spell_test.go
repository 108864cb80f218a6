package spell

import (
	"fmt"
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"plan", "plan", 0}, {"plna", "plan", 2}, {"aplly", "apply", 1},
		{"prod/netwrok", "prod/network", 2}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	cands := []string{"apply", "plan", "prod/network", "plan"}
	for _, tc := range []struct {
		word  string
		limit int
		want  string
	}{
		{"plna", 3, "plan"},
		{"aplly", 3, "apply"},
		{"plan", 3, ""}, // itself is no suggestion
		{"prod/netwrok", 5, "prod/network"},
		{"xyz", 3, ""},
		{"pla", 1, ""},
		{"pla", 2, "plan"},
	} {
		if got := Nearest(tc.word, cands, tc.limit); got != tc.want {
			t.Errorf("Nearest(%q, %d) = %q, want %q", tc.word, tc.limit, got, tc.want)
		}
	}
}

func TestTypo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ word, want string }{
		{"fundation", "foundation"},
		{"paralellism", "parallelism"},
		{"prd", "prod"},
		{"bb", ""},          // a third of 2 letters is no edit
		{"networkzzzz", ""}, // 4 edits: past the 3-edit cap
		{"prod", ""},        // itself is no typo
	} {
		if got := Typo(tc.word, []string{"foundation", "parallelism", "prod", "network"}); got != tc.want {
			t.Errorf("Typo(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func TestList(t *testing.T) {
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf("k%03d", i)
	}
	for _, tt := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"eu", "us"}, "eu, us"},
		{many[:20], strings.Join(many[:20], ", ")},
		{many[:21], strings.Join(many[:20], ", ") + ", and 1 more"},
		{many, strings.Join(many[:20], ", ") + ", and 980 more"},
	} {
		if got := List(tt.in); got != tt.want {
			t.Errorf("List(%d choices) = %q, want %q", len(tt.in), got, tt.want)
		}
	}
}
