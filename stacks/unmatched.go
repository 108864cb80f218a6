package stacks

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/strata-iac/strata/internal/spell"
	"github.com/strata-iac/strata/stacks/config"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// A typo in a stack's tag_query or in a dirs key fails silently: the units
// it meant go to the default stack, or keep no dirs settings. These
// warnings name what was written and, when one is close, what was meant.

// maxSuggestions bounds the words a check looks up a near spelling for: a
// config with thousands of unmatched queries still checks in linear time,
// and past that many the suggestions would not be read anyway.
const maxSuggestions = 200

// speller proposes near spellings from a fixed vocabulary, remembering the
// words it was asked about.
type speller struct {
	vocabulary []string // sorted
	memo       map[string]string
}

func newSpeller(words map[string]bool) *speller {
	s := &speller{vocabulary: make([]string, 0, len(words)), memo: map[string]string{}}
	for w := range words {
		s.vocabulary = append(s.vocabulary, w)
	}
	sort.Strings(s.vocabulary)
	return s
}

// nearest returns the word of the vocabulary closest to w by edit
// distance, or "" when none is within a third of w's length (at most 2
// edits), not counting a prefix up to a colon: every dir:… tag shares
// "dir:", which would make dir:vpc look close to dir:app. Ties go to the
// first in sorted order.
func (s *speller) nearest(w string) string {
	if best, ok := s.memo[w]; ok {
		return best
	}
	if len(s.memo) >= maxSuggestions {
		return ""
	}
	core := len(w) - strings.Index(w, ":") - 1
	best := spell.Nearest(w, s.vocabulary, min(3, core/3+1))
	s.memo[w] = best
	return best
}

// warnUnmatchedQueries warns about each defined leaf stack whose tag_query
// matches no dirspace: a stack that holds nothing is a typo or a leftover,
// even when it is only nested or named by rules. selects says whether a
// stack's query selected any dirspace.
func (p *Project) warnUnmatchedQueries(ix *tagquery.Index, selects map[*Stack]bool, c *config.Collector) {
	var spell *speller
	for _, s := range p.Stacks {
		if s.Def == nil || !s.Leaf || s.Query == nil || s.Def.TagQuery == nil || selects[s] {
			continue
		}
		if spell == nil {
			spell = p.tagSpeller()
		}
		notes := queryNotes(s.Def.TagQuery.Value, ix, spell)
		msg := fmt.Sprintf("tag query %q matches no dirspace", s.Def.TagQuery.Value)
		if len(notes) > 0 {
			msg += ": " + strings.Join(notes, "; ")
		}
		c.Warnf(s.Def.TagQuery.Pos, "stacks.names."+s.Name+".tag_query", "%s", msg)
	}
}

// tagSpeller spells from every tag of the dirspaces.
func (p *Project) tagSpeller() *speller {
	tags := map[string]bool{}
	for _, ds := range p.Dirspaces {
		for _, t := range ds.Tags {
			tags[t] = true
		}
	}
	return newSpeller(tags)
}

// queryNotes says which tags and globs of a tag query no dirspace has,
// each with the nearest tag when one is close; globs are looked up only
// with an index.
func queryNotes(src string, ix *tagquery.Index, spell *speller) []string {
	var notes []string
	seen := map[string]bool{}
	for _, tag := range queryTags(src) {
		if seen[tag] {
			continue
		}
		seen[tag] = true
		if strings.Contains(tag, "*") {
			if q, err := tagquery.Parse(tag); err == nil && ix != nil && q.Select(ix).IsEmpty() {
				notes = append(notes, "no dirspace has a tag matching "+tag)
			}
			continue
		}
		if spell.has(tag) {
			continue
		}
		note := "no dirspace has the tag " + tag
		if near := spell.nearest(tag); near != "" {
			note += " (did you mean " + near + "?)"
		}
		notes = append(notes, note)
	}
	return notes
}

// QueryNotes says, of a tag query that selects nothing, which of its tags
// no dirspace has, with the nearest tag when one is close: what `--query`
// meant (docs/behaviour.md#selection).
func (p *Project) QueryNotes(query string) []string {
	return queryNotes(query, nil, p.tagSpeller())
}

func (s *speller) has(w string) bool {
	i := sort.SearchStrings(s.vocabulary, w)
	return i < len(s.vocabulary) && s.vocabulary[i] == w
}

// queryTags returns the plain tags and globs a tag query names, in order,
// leaving out keywords, the operand of `X in dir`, dir~X and relative_dir:
// tags (which name dirs, not tags). It reads the query's words as the
// parser does but needs no more: it only picks words to look up.
func queryTags(src string) []string {
	var words []string
	quoted := []bool{}
	for i := 0; i < len(src); {
		ch := src[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '(' || ch == ')':
			i++
		case ch == '\'' || ch == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != ch; j++ {
				if src[j] == '\\' && j+1 < len(src) {
					j++
				}
				b.WriteByte(src[j])
			}
			words = append(words, b.String())
			quoted = append(quoted, true)
			i = j + 1
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \t\n\r()'\"", rune(src[j])) {
				j++
			}
			words = append(words, src[i:j])
			quoted = append(quoted, false)
			i = j
		}
	}
	var out []string
	took := false // the previous word went to out
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !quoted[i] {
			switch strings.ToLower(w) {
			case "and", "or", "not":
				took = false
				continue
			case "in":
				// `X in dir`: X names dirs, not a tag; dir is a keyword.
				if took {
					out = out[:len(out)-1]
				}
				i++
				took = false
				continue
			}
		}
		took = false
		if w == "" || strings.HasPrefix(w, "dir~") || strings.HasPrefix(w, "relative_dir:") || strings.HasPrefix(w, "stack_name:") {
			continue
		}
		out = append(out, w)
		took = true
	}
	return out
}

// warnUnmatchedDirKeys warns about a dirs glob that matches no root module
// dir, naming a near spelling that would. (An exact key makes its dir a
// root, so only one naming no dir at all is warned about, where roots are
// found.) roots are the root dirs, sorted.
func (p *Project) warnUnmatchedDirKeys(globs []*config.MapEntry[config.Dir], used map[*config.MapEntry[config.Dir]]bool, roots []string, dirs *speller, c *config.Collector) {
	for _, g := range globs {
		if used[g] || globMatchesAny(g.Key, roots) {
			continue
		}
		msg := fmt.Sprintf("glob %q matches no root module dir", g.Key)
		if near := nearGlob(g.Key, roots, dirs); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		c.Warnf(g.KeyPos, "dirs."+g.Key, "%s", msg)
	}
}

func globMatchesAny(key string, roots []string) bool {
	pattern := strings.TrimSuffix(key, "/")
	prefix := literalPrefix(key)
	for _, d := range roots {
		if strings.HasPrefix(d+"/", prefix) && matchPath(pattern, d) {
			return true
		}
	}
	return false
}

// nearGlob respells the dirs before a glob's first wildcard as the nearest
// existing dir, when the glob so respelt matches a root.
func nearGlob(key string, roots []string, dirs *speller) string {
	prefix := literalPrefix(key)
	i := strings.LastIndex(prefix, "/")
	if i <= 0 || dirs == nil {
		return ""
	}
	near := dirs.nearest(prefix[:i])
	if near == "" {
		return ""
	}
	cand := near + key[i:]
	if globMatchesAny(cand, roots) {
		return cand
	}
	return ""
}

// dirSpeller spells from the dirs that hold Terraform files and their
// parents.
func dirSpeller(sds []sourceDir) *speller {
	dirs := map[string]bool{}
	for _, sd := range sds {
		for d := sd.dir; d != "." && d != "/" && d != "" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	return newSpeller(dirs)
}
