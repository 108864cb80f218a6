package tagquery

import (
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// globSpecial holds the characters that make part of a glob pattern more than
// literal text.
const globSpecial = `*?[{\`

// segmentTrie is the tag vocabulary as a tree of '/'-separated segments:
// dir:aws/prod/vpc is dir:aws → prod → vpc. Each node also holds the
// subjects of every tag below it, so a final "/**" costs one union.
type segmentTrie struct {
	segment  string
	tag      int32          // vocabulary position of the tag ending here, or -1
	children []*segmentTrie // sorted by segment
	// emptySegment marks a tag with an empty segment ("", "/x", "x/",
	// "x//y"), on which doublestar has quirks ("**" matches "", "**/**" does
	// not), so a glob is always checked against it with doublestar itself.
	emptySegment bool

	below    posting // subjects of the tags strictly below, but those with an empty segment
	oddBelow []int32 // the tags strictly below with an empty segment
}

// newSegmentTrie arranges the vocabulary in a trie, but for the tags of
// more than maxDepth segments, which it returns apart: the trie is built
// and summarised by recursion, one level a segment, and a tag of a million
// segments would take a million levels (and the memory of a node each) for
// a glob, limited to maxDepth segments, that only "**" lets match it.
func newSegmentTrie(vocabulary []string, tagSubject []posting, words int) (trie *segmentTrie, deep []int32) {
	root := &segmentTrie{tag: -1}
	byName := map[*segmentTrie]map[string]*segmentTrie{}
	for i, tag := range vocabulary {
		if strings.Count(tag, "/") >= maxDepth {
			deep = append(deep, int32(i))
			continue
		}
		n := root
		for _, seg := range strings.Split(tag, "/") {
			children := byName[n]
			if children == nil {
				children = map[string]*segmentTrie{}
				byName[n] = children
			}
			child := children[seg]
			if child == nil {
				child = &segmentTrie{segment: seg, tag: -1}
				children[seg] = child
				n.children = append(n.children, child)
			}
			n = child
		}
		n.tag = int32(i)
		n.emptySegment = tag == "" || strings.HasPrefix(tag, "/") || strings.HasSuffix(tag, "/") || strings.Contains(tag, "//")
	}
	root.summarise(tagSubject, words)
	return root, deep
}

// summarise sorts the children and fills in below and oddBelow, bottom up.
func (n *segmentTrie) summarise(tagSubject []posting, words int) {
	sort.Slice(n.children, func(i, j int) bool { return n.children[i].segment < n.children[j].segment })
	var parts []posting
	for _, c := range n.children {
		c.summarise(tagSubject, words)
		if c.tag >= 0 {
			if c.emptySegment {
				n.oddBelow = append(n.oddBelow, c.tag)
			} else {
				parts = append(parts, tagSubject[c.tag])
			}
		}
		parts = append(parts, c.below)
		n.oddBelow = append(n.oddBelow, c.oddBelow...)
	}
	if len(parts) > 0 {
		n.below = unionPostings(parts, words)
	}
}

// childrenWithPrefix returns the children whose segment starts with prefix.
func (n *segmentTrie) childrenWithPrefix(prefix string) []*segmentTrie {
	lo := sort.Search(len(n.children), func(i int) bool { return n.children[i].segment >= prefix })
	hi := lo
	for hi < len(n.children) && strings.HasPrefix(n.children[hi].segment, prefix) {
		hi++
	}
	return n.children[lo:hi]
}

// globOrInto adds to acc the subjects holding a tag the glob matches: by
// walking the trie when the pattern splits into segments, else by matching
// every tag that starts with the pattern's literal prefix.
func (ix *Index) globOrInto(acc []uint64, pattern string) {
	if segs, ok := splitGlob(pattern); ok {
		w := globWalk{ix: ix, acc: acc, pattern: pattern, segs: segs, doubleStar: strings.Contains(pattern, "**")}
		if strings.Count(pattern, "**") > 1 {
			w.seen = map[globVisit]bool{}
		}
		w.walk(ix.tagTrie, 0)
		for _, t := range ix.deepTags {
			if doublestar.MatchUnvalidated(pattern, ix.vocabulary[t]) {
				ix.tagSubject[t].orInto(acc)
			}
		}
		return
	}
	prefix := literalPrefix(pattern)
	for i := sort.SearchStrings(ix.vocabulary, prefix); i < len(ix.vocabulary) && strings.HasPrefix(ix.vocabulary[i], prefix); i++ {
		if doublestar.MatchUnvalidated(pattern, ix.vocabulary[i]) {
			ix.tagSubject[i].orInto(acc)
		}
	}
}

// literalPrefix is the part of a glob pattern before its first special
// character, less a final '/': every tag it matches starts with it. The '/'
// goes because "/**" also matches nothing at all (dir:aws/** matches dir:aws).
func literalPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, globSpecial); i >= 0 {
		pattern = pattern[:i]
	}
	return strings.TrimSuffix(pattern, "/")
}

// splitGlob splits a glob pattern at '/' into segments that can be matched
// one trie level at a time, with "**" standing for any number of segments.
// It refuses the patterns where doublestar.Match does not work segment by
// segment (a '\' escape, a "[…]" class, which can match '/' when negated or a
// range, a '/' inside "{…}", "**" within a segment, an empty segment after
// the first); those are matched tag by tag.
func splitGlob(pattern string) ([]string, bool) {
	if strings.ContainsAny(pattern, `\[`) || strings.Contains(pattern, "//") || strings.HasSuffix(pattern, "/") {
		return nil, false
	}
	depth := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '/':
			if depth > 0 {
				return nil, false
			}
		}
	}
	segs := strings.Split(pattern, "/")
	for _, seg := range segs {
		if seg != "**" && strings.Contains(seg, "**") {
			return nil, false
		}
	}
	return segs, true
}

// globWalk matches a split glob against the trie, one segment per level.
type globWalk struct {
	ix         *Index
	acc        []uint64
	pattern    string
	segs       []string
	doubleStar bool               // the pattern has a "**" segment
	seen       map[globVisit]bool // set when several "**" could reach a node twice
}

type globVisit struct {
	node *segmentTrie
	seg  int
}

func (w *globWalk) walk(n *segmentTrie, k int) {
	if w.seen != nil {
		v := globVisit{n, k}
		if w.seen[v] {
			return
		}
		w.seen[v] = true
	}
	if k == len(w.segs) {
		w.confirm(n.tag, n.emptySegment)
		return
	}
	seg := w.segs[k]
	if seg == "**" {
		if k == len(w.segs)-1 {
			// A final "**": every tag below matches; the tag here and the
			// odd ones below are doublestar's call.
			w.confirm(n.tag, n.emptySegment)
			n.below.orInto(w.acc)
			for _, t := range n.oddBelow {
				w.confirm(t, true)
			}
			return
		}
		w.walk(n, k+1)
		for _, c := range n.children {
			w.walk(c, k)
		}
		return
	}
	prefix := seg
	if i := strings.IndexAny(seg, globSpecial); i >= 0 {
		prefix = seg[:i]
	}
	for _, c := range n.childrenWithPrefix(prefix) {
		if len(prefix) == len(seg) {
			// A literal segment: only an equal child, which sorts first.
			if c.segment == seg {
				w.walk(c, k+1)
			}
			return
		}
		if seg == "*" || doublestar.MatchUnvalidated(seg, c.segment) {
			w.walk(c, k+1)
		}
	}
}

// confirm adds the subjects of a tag the walk reached, if the pattern matches
// it. Segment by segment is how doublestar matches, except around "**" and
// empty segments: whether a final "/**" matches the tag it follows depends on
// what came before it (a/** matches a, a*/** does not), and "**/**" does not
// match "". There doublestar has the last word.
func (w *globWalk) confirm(tag int32, emptySegment bool) {
	if tag < 0 {
		return
	}
	if (w.doubleStar || emptySegment) && !doublestar.MatchUnvalidated(w.pattern, w.ix.vocabulary[tag]) {
		return
	}
	w.ix.tagSubject[tag].orInto(w.acc)
}
