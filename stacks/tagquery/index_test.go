package tagquery

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// operandPool holds operands that exercise every kind of leaf, with tags that
// the subjects below do and do not carry.
var operandPool = []string{
	"a", "b", "c", "d", `"and"`, "workspace:prod", "stack_name:x",
	"dir:aws/*", "dir:aws/**", "dir:*", "*", "workspace:*", "team-{a,b}*", "dir:aws/prod/**", "*/vpc",
	"a in dir", "a/b in dir", "b in dir", "prod in dir", "abs/a in dir", `"" in dir`, "dir~x",
	"**", "**/**", "*/x", "**/vpc", "dir:aws/**/vpc", "dir:a*/**", "dir:[a]*/**", "a/**/", "/**",
	"relative_dir:..", "relative_dir:../b", "relative_dir:.", "relative_dir:b/c", "relative_dir:../../x",
}

var dirPool = []string{".", "a", "a/b", "a/b/c", "x", "x/a", "b/a/x", "aws", "aws/prod", "aws/prod/vpc", "awsx/prod", "./a//b/", "/abs/a"}

var tagPool = []string{
	"a", "b", "c", "and", "workspace:default", "workspace:prod", "stack_name:x", "stack_name:y",
	"team-a1", "team-c", "dir:aws", "dir:aws/prod", "dir:aws/prod/vpc", "dir:awsx", "dir:aws/prod-x",
	"", "/x", "dir:aws/", "a//b", "dir:aws/prod//vpc",
}

// randomQuery writes a random valid query of at most the given depth.
func randomQuery(r *rand.Rand, depth int) string {
	if depth == 0 || r.IntN(3) == 0 {
		return operandPool[r.IntN(len(operandPool))]
	}
	switch r.IntN(6) {
	case 0:
		return randomQuery(r, depth-1) + " and " + randomQuery(r, depth-1)
	case 1:
		return randomQuery(r, depth-1) + " OR " + randomQuery(r, depth-1)
	case 2:
		return randomQuery(r, depth-1) + "\n" + randomQuery(r, depth-1)
	case 3:
		if op := operandPool[r.IntN(len(operandPool))]; !strings.Contains(op, " in ") {
			return "not " + op
		}
		return "Not (" + randomQuery(r, depth-1) + ")"
	case 4:
		return "not (" + randomQuery(r, depth-1) + ")"
	}
	return "(" + randomQuery(r, depth-1) + ")"
}

func randomSubjects(r *rand.Rand, n int) []Subject {
	subjects := make([]Subject, n)
	for i := range subjects {
		dir := dirPool[r.IntN(len(dirPool))]
		tags := []string{"dir:" + dir}
		for _, t := range tagPool {
			if r.IntN(3) == 0 {
				tags = append(tags, t)
			}
		}
		subjects[i] = Subject{Tags: tags, Dir: dir}
	}
	return subjects
}

// TestSelectAgreesWithMatch is the property Select rests on: for every query
// and subject, the set says what Match says, and SelectFrom what MatchFrom says.
func TestSelectAgreesWithMatch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	queries := []string{"", "not *", "not (a or not a)", "a b or c", "dir:aws/** and not dir:aws/*"}
	for _, tc := range parseCases {
		queries = append(queries, tc.query)
	}
	for range 300 {
		queries = append(queries, randomQuery(r, 4))
	}
	// Sizes around word boundaries, so that complements meet the tail mask.
	for _, n := range []int{0, 1, 63, 64, 65, 300} {
		subjects := randomSubjects(r, n)
		ix := NewIndex(subjects)
		for _, src := range queries {
			q, err := Parse(src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", src, err)
			}
			checkSelect(t, q, ix, subjects)
		}
	}
}

func checkSelect(t *testing.T, q *Query, ix *Index, subjects []Subject) {
	t.Helper()
	selected := q.Select(ix)
	for i, s := range subjects {
		if got, want := selected.Has(i), q.Match(s); got != want {
			t.Fatalf("Parse(%q): Select has subject %d %+v = %v, Match = %v", q.Source(), i, s, got, want)
		}
	}
	if selected.Has(len(subjects)) || selected.Len() > len(subjects) {
		t.Fatalf("Parse(%q): Select holds ids past the %d subjects", q.Source(), len(subjects))
	}
	for _, from := range []string{".", "a", "a/b", "x/a"} {
		selected := q.SelectFrom(ix, from)
		for i, s := range subjects {
			if got, want := selected.Has(i), q.MatchFrom(s, from); got != want {
				t.Fatalf("Parse(%q) from %q: SelectFrom has subject %d %+v = %v, MatchFrom = %v", q.Source(), from, i, s, got, want)
			}
		}
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	subjects := []Subject{
		{Tags: []string{"dir:aws/prod", "workspace:default", "prod"}, Dir: "aws/prod"},
		{Tags: []string{"dir:aws/prod/vpc", "workspace:default", "prod"}, Dir: "aws/prod/vpc"},
		{Tags: []string{"dir:aws/dev", "workspace:default"}, Dir: "aws/dev"},
		{Tags: []string{"dir:gcp/prod", "workspace:default", "prod"}, Dir: "gcp/prod"},
		{Tags: []string{"dir:.", "workspace:default"}, Dir: "."},
	}
	ix := NewIndex(subjects)
	tests := []struct {
		query string
		want  []int
	}{
		{"", []int{0, 1, 2, 3, 4}},
		{"dir:aws/*", []int{0, 2}},
		{"dir:aws/**", []int{0, 1, 2}},
		{"prod in dir", []int{0, 1, 3}},
		{"prod not (aws in dir)", []int{3}},
		{"not prod", []int{2, 4}},
		{"nothing", []int{}},
		{"dir:azure/*", []int{}},
	}
	for _, tc := range tests {
		got := MustParse(tc.query).Select(ix).Members()
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Parse(%q).Select = %v, want %v", tc.query, got, tc.want)
		}
	}
	if got := MustParse("relative_dir:../dev").SelectFrom(ix, "aws/prod").Members(); fmt.Sprint(got) != "[2]" {
		t.Errorf("relative_dir:../dev from aws/prod selects %v, want [2]", got)
	}
	if got := ix.Vocabulary(); len(got) != 7 || got[0] != "dir:." {
		t.Errorf("Vocabulary() = %q, want 7 sorted tags", got)
	}
	if ix.Len() != 5 || ix.All().Len() != 5 {
		t.Errorf("Len() = %d, All().Len() = %d, want 5", ix.Len(), ix.All().Len())
	}
}

func TestSet(t *testing.T) {
	t.Parallel()
	ix := NewIndex(make([]Subject, 130))
	all := ix.All()
	evens := Set{words: make([]uint64, 3)}
	for i := 0; i < 130; i += 2 {
		evens.words[i/64] |= 1 << (uint(i) % 64)
	}
	short := Set{words: []uint64{0b1111}} // 0..3, shorter than the others

	if all.Len() != 130 || !all.Has(129) || all.Has(130) || all.Has(-1) {
		t.Errorf("All() = %d members, Has(129) %v, Has(130) %v", all.Len(), all.Has(129), all.Has(130))
	}
	if got := all.AndNot(evens); got.Len() != 65 || got.Has(0) || !got.Has(1) {
		t.Errorf("odds = %v", got.Members())
	}
	if got := evens.And(short).Members(); fmt.Sprint(got) != "[0 2]" {
		t.Errorf("evens and 0..3 = %v", got)
	}
	if got := short.Or(evens); got.Len() != 67 || !got.Has(3) || !got.Has(128) {
		t.Errorf("evens or 0..3 has %d members", got.Len())
	}
	if got := short.AndNot(evens).Members(); fmt.Sprint(got) != "[1 3]" {
		t.Errorf("0..3 and not evens = %v", got)
	}
	if !short.Equal(Set{words: []uint64{0b1111, 0, 0}}) || short.Equal(evens) {
		t.Error("Equal does not ignore trailing empty words, or equates different sets")
	}
	if !(Set{}).IsEmpty() || (Set{}).Len() != 0 || short.IsEmpty() {
		t.Error("IsEmpty is wrong")
	}
	var seen []int
	evens.And(short).Each(func(i int) { seen = append(seen, i) })
	if fmt.Sprint(seen) != "[0 2]" {
		t.Errorf("Each visited %v", seen)
	}
	if evens.Len() != 65 {
		t.Error("And, Or or AndNot changed an operand")
	}
}

// benchmarkRepo builds a repository of 10,000 dirspaces and 500 stack-style
// queries over them.
func benchmarkRepo() ([]Subject, []*Query) {
	r := rand.New(rand.NewPCG(7, 11))
	clouds := []string{"aws", "gcp", "azure"}
	envs := []string{"prod", "staging", "dev"}
	regions := []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1"}
	var subjects []Subject
	for i := 0; len(subjects) < 10000; i++ {
		cloud, env, region := clouds[i%3], envs[(i/3)%3], regions[(i/9)%6]
		dir := fmt.Sprintf("%s/%s/%s/svc-%d", cloud, env, region, i)
		for _, ws := range []string{"default", "blue"} {
			subjects = append(subjects, Subject{Dir: dir, Tags: []string{
				"dir:" + dir, "workspace:" + ws, cloud, env,
				fmt.Sprintf("team-%d", r.IntN(40)), fmt.Sprintf("tier-%d", r.IntN(4)),
			}})
		}
	}
	templates := []func(i int) string{
		func(i int) string { return fmt.Sprintf("dir:%s/%s/**", clouds[i%3], envs[i%3]) },
		func(i int) string { return fmt.Sprintf("dir:%s/*/%s/*", clouds[i%3], regions[i%6]) },
		func(i int) string { return fmt.Sprintf("team-%d and not workspace:blue", i%40) },
		func(i int) string { return fmt.Sprintf("svc-%d in dir", i*17) },
		func(i int) string { return fmt.Sprintf("%s/%s in dir and tier-%d", envs[i%3], regions[i%6], i%4) },
		func(i int) string { return fmt.Sprintf("%s %s or tier-%d", clouds[i%3], envs[i%3], i%4) },
		func(i int) string {
			return fmt.Sprintf("(team-%d or team-%d) and %s and not (dir:*/dev/**)", i%40, (i+1)%40, clouds[i%3])
		},
		func(i int) string { return fmt.Sprintf("dir:*/%s/*/svc-%d*", envs[i%3], i%10) },
		func(i int) string { return fmt.Sprintf("workspace:default %s in dir", regions[i%6]) },
		func(i int) string { return fmt.Sprintf("dir:aws/prod/us-east-1/svc-%d", i*9) },
	}
	queries := make([]*Query, 500)
	for i := range queries {
		queries[i] = MustParse(templates[i%len(templates)](i))
	}
	return subjects, queries
}

// BenchmarkSelect is one membership pass: 500 queries, half of them globs or
// `in dir`, over 10,000 dirspaces.
func BenchmarkSelect(b *testing.B) {
	subjects, queries := benchmarkRepo()
	ix := NewIndex(subjects)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, q := range queries {
			q.Select(ix)
		}
	}
}

func BenchmarkNewIndex(b *testing.B) {
	subjects, _ := benchmarkRepo()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		NewIndex(subjects)
	}
}

// BenchmarkMatchEach is the same pass as BenchmarkSelect done one Match at a
// time, for comparison.
func BenchmarkMatchEach(b *testing.B) {
	subjects, queries := benchmarkRepo()
	b.ResetTimer()
	for b.Loop() {
		for _, q := range queries {
			for _, s := range subjects {
				q.Match(s)
			}
		}
	}
}

func TestBenchmarkRepoAgrees(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("checks the benchmark's 10,000 subjects")
	}
	subjects, queries := benchmarkRepo()
	ix := NewIndex(subjects)
	for _, q := range queries[:50] {
		selected := q.Select(ix)
		for i, s := range subjects {
			if selected.Has(i) != q.Match(s) {
				t.Fatalf("Parse(%q): Select and Match disagree on %+v", q.Source(), s)
			}
		}
	}
}

// TestGlobWalkAgreesWithDoublestar checks the trie walk that expands globs in
// Select against doublestar.Match, the reference Match uses, on patterns and
// tags with empty segments, leading and trailing '/', and "**" everywhere.
func TestGlobWalkAgreesWithDoublestar(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 8))
	join := func(parts []string, n int) string {
		segs := make([]string, n)
		for i := range segs {
			segs[i] = parts[r.IntN(len(parts))]
		}
		return strings.Join(segs, "/")
	}
	tagSet := map[string]bool{}
	for range 300 {
		tagSet[join([]string{"", "a", "b", "ab", "x", "a-b", "a.b", "..", "é", "a,b"}, 1+r.IntN(4))] = true
	}
	var subjects []Subject
	for tag := range tagSet {
		subjects = append(subjects, Subject{Tags: []string{tag}})
	}
	ix := NewIndex(subjects)
	segments := []string{
		"", "a", "b", "x", "*", "**", "?", "?*", "a*", "*b", "*a*", "a**", "**b", "*é",
		"{a,b}", "{a,x}*", "{a,{b,x}}", "{,a}", "{**,a}", "{a/b,x}", "[ab]", "[!a]*", "[/]", `\a`,
	}
	for range 3000 {
		pattern := join(segments, 1+r.IntN(4))
		if !doublestar.ValidatePattern(pattern) {
			continue
		}
		acc := make([]uint64, ix.words)
		ix.globOrInto(acc, pattern)
		got := Set{words: acc}
		for i, s := range subjects {
			want, _ := doublestar.Match(pattern, s.Tags[0])
			if got.Has(i) != want {
				_, walked := splitGlob(pattern)
				t.Fatalf("glob %q on tag %q: Select says %v, doublestar %v (trie walk used: %v)", pattern, s.Tags[0], got.Has(i), want, walked)
			}
		}
	}
}
