package tagquery

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// nodeKind is the kind of a node of a parsed query.
type nodeKind uint8

const (
	kindTag         nodeKind = iota // exact membership of text in the tags
	kindGlob                        // text is a doublestar pattern over the tags
	kindInDir                       // text is a run of whole segments of the dir
	kindRelativeDir                 // text is relative_dir:P
	kindNot                         // kids[0]
	kindAnd                         // all kids; never directly holds another and
	kindOr                          // any kid; never directly holds another or
)

// node is one node of a parsed query. And and or are n-ary and kept flat, so
// that equal queries have equal trees however they were grouped.
type node struct {
	kind nodeKind
	text string
	kids []*node
}

// join makes an and or an or of kids, or returns the one kid. The parser
// builds the tree without merging an and into an and (or an or into an or)
// as it goes, since merging at every level would copy the same operands
// once per level; flatten merges them once the whole query is parsed.
func join(kind nodeKind, kids []*node) *node {
	if len(kids) == 1 {
		return kids[0]
	}
	return &node{kind: kind, kids: kids}
}

// flatten merges every and held directly by an and, and every or held
// directly by an or, into it, top down, so that each node is moved once.
func (n *node) flatten() {
	if n.kind == kindAnd || n.kind == kindOr {
		var kids []*node
		n.gatherInto(n.kind, &kids)
		n.kids = kids
	}
	for _, k := range n.kids {
		k.flatten()
	}
}

// gatherInto appends n's operands to out, looking through the nodes of the
// same kind as n.
func (n *node) gatherInto(kind nodeKind, out *[]*node) {
	for _, k := range n.kids {
		if k.kind == kind {
			k.gatherInto(kind, out)
		} else {
			*out = append(*out, k)
		}
	}
}

// isTagLike reports whether the node is written as a single tag.
func (n *node) isTagLike() bool {
	return n.kind == kindTag || n.kind == kindGlob || n.kind == kindRelativeDir
}

func (n *node) String() string {
	var b strings.Builder
	n.write(&b, false)
	return b.String()
}

// explicitString is String with every "and" inside an "or" parenthesised too,
// for messages that contrast two groupings.
func (n *node) explicitString() string {
	var b strings.Builder
	n.write(&b, true)
	return b.String()
}

func (n *node) write(b *strings.Builder, explicit bool) {
	switch n.kind {
	case kindTag, kindGlob, kindRelativeDir:
		b.WriteString(quoteTag(n.text))
	case kindInDir:
		b.WriteString(quoteTag(n.text))
		b.WriteString(" in dir")
	case kindNot:
		b.WriteString("not ")
		n.kids[0].writeGrouped(b, !n.kids[0].isTagLike(), explicit)
	case kindAnd:
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(" and ")
			}
			k.writeGrouped(b, k.kind == kindOr, explicit)
		}
	case kindOr:
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(" or ")
			}
			k.writeGrouped(b, explicit && k.kind == kindAnd, explicit)
		}
	}
}

func (n *node) writeGrouped(b *strings.Builder, parens, explicit bool) {
	if parens {
		b.WriteByte('(')
	}
	n.write(b, explicit)
	if parens {
		b.WriteByte(')')
	}
}

func (n *node) equal(o *node) bool {
	if n.kind != o.kind || n.text != o.text || len(n.kids) != len(o.kids) {
		return false
	}
	for i := range n.kids {
		if !n.kids[i].equal(o.kids[i]) {
			return false
		}
	}
	return true
}

// any reports whether pred holds for n or a node below it.
func (n *node) any(pred func(*node) bool) bool {
	if pred(n) {
		return true
	}
	for _, k := range n.kids {
		if k.any(pred) {
			return true
		}
	}
	return false
}

// subjectView is a subject prepared for matching: its dir cleaned, and split
// into segments the first time an `in dir` asks.
type subjectView struct {
	tags     []string
	dir      string
	segments []string
	split    bool
}

func newSubjectView(s Subject) *subjectView {
	return &subjectView{tags: s.Tags, dir: cleanDir(s.Dir)}
}

func (v *subjectView) dirSegments() []string {
	if !v.split {
		v.segments, v.split = dirSegments(v.dir), true
	}
	return v.segments
}

func (n *node) match(v *subjectView, e evaluation) bool {
	switch n.kind {
	case kindTag:
		for _, t := range v.tags {
			if t == n.text {
				return true
			}
		}
		return false
	case kindGlob:
		for _, t := range v.tags {
			if doublestar.MatchUnvalidated(n.text, t) {
				return true
			}
		}
		return false
	case kindInDir:
		return containsRun(v.dirSegments(), strings.Split(n.text, "/"))
	case kindRelativeDir:
		dir, ok := e.relativeTarget(n.text)
		return ok && v.dir == dir
	case kindNot:
		return !n.kids[0].match(v, e)
	case kindAnd:
		for _, k := range n.kids {
			if !k.match(v, e) {
				return false
			}
		}
		return true
	case kindOr:
		for _, k := range n.kids {
			if k.match(v, e) {
				return true
			}
		}
		return false
	}
	return false
}
