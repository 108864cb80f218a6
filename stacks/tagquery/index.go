package tagquery

import (
	"sort"
	"strings"
)

// Index is an inverted index over a list of subjects, for evaluating queries
// against all of them at once: subject ids are positions in that list. It maps
// every tag to the subjects holding it, every distinct dir and every dir
// segment to the subjects in it, and arranges the tags in a trie of their
// '/'-separated segments for globs. It is immutable and safe for concurrent
// use.
type Index struct {
	n     int
	words int

	vocabulary []string // every tag, sorted
	tagIDs     map[string]int32
	tagSubject []posting    // by position in vocabulary
	tagTrie    *segmentTrie // the vocabulary split at '/', for globs
	deepTags   []int32      // the tags too deep for the trie, matched one by one

	dirIDs         map[string]int32
	dirSegs        [][]string
	dirSubject     []posting
	segmentDirs    map[string][]int32 // segment -> the dirs holding it, ascending
	segmentSubject map[string]posting // segment -> the subjects whose dir holds it
}

// NewIndex indexes the subjects; subject i of the index is subjects[i].
func NewIndex(subjects []Subject) *Index {
	words := (len(subjects) + 63) / 64
	ix := &Index{
		n:           len(subjects),
		words:       words,
		tagIDs:      map[string]int32{},
		dirIDs:      map[string]int32{},
		segmentDirs: map[string][]int32{},
	}

	tagBuilders := map[string]*postingBuilder{}
	var dirBuilders []*postingBuilder
	for i, s := range subjects {
		id := int32(i)
		for _, t := range s.Tags {
			b := tagBuilders[t]
			if b == nil {
				b = &postingBuilder{words: words}
				tagBuilders[t] = b
			}
			b.add(id)
		}
		dir := cleanDir(s.Dir)
		d, ok := ix.dirIDs[dir]
		if !ok {
			d = int32(len(dirBuilders))
			ix.dirIDs[dir] = d
			dirBuilders = append(dirBuilders, &postingBuilder{words: words})
			ix.addDirSegments(d, dir)
		}
		dirBuilders[d].add(id)
	}

	ix.vocabulary = make([]string, 0, len(tagBuilders))
	for t := range tagBuilders {
		ix.vocabulary = append(ix.vocabulary, t)
	}
	sort.Strings(ix.vocabulary)
	ix.tagSubject = make([]posting, len(ix.vocabulary))
	for i, t := range ix.vocabulary {
		ix.tagIDs[t] = int32(i)
		ix.tagSubject[i] = tagBuilders[t].posting
	}
	ix.tagTrie, ix.deepTags = newSegmentTrie(ix.vocabulary, ix.tagSubject, words)

	ix.dirSubject = make([]posting, len(dirBuilders))
	for d, b := range dirBuilders {
		ix.dirSubject[d] = b.posting
	}
	ix.segmentSubject = make(map[string]posting, len(ix.segmentDirs))
	for seg, dirs := range ix.segmentDirs {
		parts := make([]posting, len(dirs))
		for i, d := range dirs {
			parts[i] = ix.dirSubject[d]
		}
		ix.segmentSubject[seg] = unionPostings(parts, words)
	}
	return ix
}

func (ix *Index) addDirSegments(d int32, dir string) {
	segs := dirSegments(dir)
	ix.dirSegs = append(ix.dirSegs, segs)
	for i, s := range segs {
		if !containsSegment(segs[:i], s) {
			ix.segmentDirs[s] = append(ix.segmentDirs[s], d)
		}
	}
}

func containsSegment(segs []string, s string) bool {
	for _, t := range segs {
		if t == s {
			return true
		}
	}
	return false
}

// Len returns the number of subjects indexed.
func (ix *Index) Len() int { return ix.n }

// All returns the set of every subject.
func (ix *Index) All() Set { return Set{words: ix.allBits()} }

// Vocabulary returns every tag of the subjects, sorted.
func (ix *Index) Vocabulary() []string { return append([]string(nil), ix.vocabulary...) }

func (ix *Index) allBits() []uint64 {
	acc := make([]uint64, ix.words)
	for i := range acc {
		acc[i] = ^uint64(0)
	}
	ix.clearTail(acc)
	return acc
}

// clearTail clears the bits past the last subject.
func (ix *Index) clearTail(acc []uint64) {
	if r := ix.n % 64; r != 0 {
		acc[len(acc)-1] &= 1<<uint(r) - 1
	}
}

// Select returns the subjects of the index that match the query, as Match
// would say for each. relative_dir: tags match nothing; see SelectFrom.
func (q *Query) Select(ix *Index) Set {
	if q.IsEmpty() {
		return ix.All()
	}
	return Set{words: ix.eval(q.root, evaluation{})}
}

// SelectFrom returns the subjects of the index that match the query as
// MatchFrom would say for each, for a depends_on of the unit in fromDir.
func (q *Query) SelectFrom(ix *Index, fromDir string) Set {
	if q.IsEmpty() {
		return ix.All()
	}
	return Set{words: ix.eval(q.root, evaluation{relative: true, fromDir: cleanDir(fromDir)})}
}

// eval returns the subjects matching n in a bitset of its own.
func (ix *Index) eval(n *node, e evaluation) []uint64 {
	switch n.kind {
	case kindNot:
		acc := ix.eval(n.kids[0], e)
		for i := range acc {
			acc[i] = ^acc[i]
		}
		if len(acc) > 0 {
			ix.clearTail(acc)
		}
		return acc
	case kindAnd:
		acc := ix.eval(n.kids[0], e)
		for _, k := range n.kids[1:] {
			if isZero(acc) {
				break
			}
			ix.andInto(acc, k, e)
		}
		return acc
	case kindOr:
		acc := ix.eval(n.kids[0], e)
		for _, k := range n.kids[1:] {
			ix.orInto(acc, k, e)
		}
		return acc
	}
	acc := make([]uint64, ix.words)
	ix.leafOrInto(acc, n, e)
	return acc
}

// andInto narrows acc to the subjects matching n, straight from the index
// when n is a tag or the negation of one.
func (ix *Index) andInto(acc []uint64, n *node, e evaluation) {
	if p, ok := ix.postingOf(n, e); ok {
		p.andInto(acc)
		return
	}
	if n.kind == kindNot {
		if p, ok := ix.postingOf(n.kids[0], e); ok {
			p.andNotInto(acc)
			return
		}
	}
	for i, w := range ix.eval(n, e) {
		acc[i] &= w
	}
}

// orInto adds to acc the subjects matching n.
func (ix *Index) orInto(acc []uint64, n *node, e evaluation) {
	switch n.kind {
	case kindNot, kindAnd, kindOr:
		for i, w := range ix.eval(n, e) {
			acc[i] |= w
		}
	default:
		ix.leafOrInto(acc, n, e)
	}
}

// postingOf returns the subjects of an exact tag or a relative_dir: tag.
func (ix *Index) postingOf(n *node, e evaluation) (posting, bool) {
	switch n.kind {
	case kindTag:
		if t, ok := ix.tagIDs[n.text]; ok {
			return ix.tagSubject[t], true
		}
		return posting{}, true
	case kindRelativeDir:
		if dir, ok := e.relativeTarget(n.text); ok {
			if d, ok := ix.dirIDs[dir]; ok {
				return ix.dirSubject[d], true
			}
		}
		return posting{}, true
	}
	return posting{}, false
}

// leafOrInto adds to acc the subjects matching a leaf node.
func (ix *Index) leafOrInto(acc []uint64, n *node, e evaluation) {
	switch n.kind {
	case kindGlob:
		ix.globOrInto(acc, n.text)
	case kindInDir:
		ix.inDirOrInto(acc, strings.Split(n.text, "/"))
	default:
		if p, ok := ix.postingOf(n, e); ok {
			p.orInto(acc)
		}
	}
}

// inDirOrInto adds to acc the subjects whose dir holds run as whole
// consecutive segments. One segment is a lookup; a longer run is checked
// against the dirs that hold all of its segments.
func (ix *Index) inDirOrInto(acc []uint64, run []string) {
	for _, seg := range run {
		if seg == "" {
			return
		}
	}
	if len(run) == 1 {
		ix.segmentSubject[run[0]].orInto(acc)
		return
	}
	lists := make([][]int32, len(run))
	for i, seg := range run {
		lists[i] = ix.segmentDirs[seg]
	}
	sort.Slice(lists, func(i, j int) bool { return len(lists[i]) < len(lists[j]) })
	candidates := lists[0]
	for _, l := range lists[1:] {
		candidates = intersectSorted(candidates, l)
	}
	for _, d := range candidates {
		if containsRun(ix.dirSegs[d], run) {
			ix.dirSubject[d].orInto(acc)
		}
	}
}

// intersectSorted returns the ids in both ascending lists.
func intersectSorted(a, b []int32) []int32 {
	var out []int32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

func isZero(acc []uint64) bool {
	for _, w := range acc {
		if w != 0 {
			return false
		}
	}
	return true
}
