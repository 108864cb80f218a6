package tagquery

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

const (
	// maxDepth bounds how deeply a query nests: parentheses (with or without
	// "not") and operands side by side, whose right side is a level of its
	// own. The parser recurses once per level, and so do matching, selecting
	// and printing over the parsed query, whose depth is at most the
	// parser's; unbounded, a query of a million "(" exhausts the stack. No
	// query written by hand comes near a thousand levels, which cost the
	// parser well under a megabyte of stack.
	maxDepth = 1000
	// maxWarnings bounds the warnings kept for one query. Each quotes part
	// of the query and the juxtaposition warning re-parses a span of it, so
	// without a bound a long query would cost time and memory quadratic in
	// its length for messages nobody reads past the first few.
	maxWarnings = 10
	// maxQuoted is how many characters of a query or of a part of one a
	// message quotes before eliding the rest.
	maxQuoted = 100
)

// ParseError is a tag query that does not parse: where, and what was expected.
type ParseError struct {
	Query   string
	Column  int // 1-based, in runes; one past the last rune for an error at the end
	Message string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("tag query %s: column %d: %s", quoteQuery(e.Query), e.Column, e.Message)
}

// quoteQuery quotes a query for a message, eliding all but its first
// maxQuoted characters when it is longer.
func quoteQuery(src string) string {
	if len(src) <= maxQuoted {
		return strconv.Quote(src)
	}
	head := truncate(src, maxQuoted)
	if len(head) == len(src) {
		return strconv.Quote(src)
	}
	return fmt.Sprintf("%s… (%d characters)", strconv.Quote(head), utf8.RuneCountInString(src))
}

// elide shortens text for a message to its first maxQuoted characters.
func elide(text string) string {
	if head := truncate(text, maxQuoted); len(head) < len(text) {
		return head + "…"
	}
	return text
}

// truncate returns the first n runes of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Parse parses a tag query. The empty query, or one of only whitespace,
// matches every subject.
func Parse(src string) (*Query, error) {
	p := newParser(src)
	q := &Query{src: src}
	if p.peek().kind == tokEOF {
		return q, nil
	}
	root, err := p.parseQuery()
	if err != nil {
		return nil, err
	}
	root.flatten()
	q.root = root
	q.warnings = p.warnings
	if p.dropped > 0 {
		q.warnings = append(q.warnings, fmt.Sprintf("tag query %s: %d more warnings like these", quoteQuery(src), p.dropped))
	}
	return q, nil
}

// MustParse is Parse for queries known to be valid, such as literals in code
// and tests; it panics on an error.
func MustParse(src string) *Query {
	q, err := Parse(src)
	if err != nil {
		panic(err)
	}
	return q
}

// parser is a recursive-descent parser reproducing the grammar Terrateam
// generates with Menhir:
//
//	or   := and {"or" and}
//	and  := unit {"and" unit}
//	unit := operand [or]    (operands side by side: the right one starts all the rest)
//
// Terrateam's juxtaposition rule has no precedence, so Menhir shifts on every
// conflict: after `a b`, an `and`, an `or` or another operand extends b, never
// closes `a b`. The effect is that a juxtaposition takes everything to its
// right, up to the closing parenthesis, as its right operand, which is what
// unit does: `a b or c` is a and (b or c), while `a and b or c` is
// (a and b) or c.
type parser struct {
	src  string
	lx   *lexer
	tok  token // the next token, peeked
	prev token // the token consumed last
	// depth is how many groups and juxtapositions enclose the operand being
	// parsed; see maxDepth.
	depth int
	// juxtaposeAsAnd parses operands side by side as if "and" were written
	// between them; it gives the other reading of a query for warnings.
	juxtaposeAsAnd bool
	warnings       []string
	dropped        int // warnings past maxWarnings, counted only
}

func newParser(src string) *parser {
	lx := newLexer(src)
	return &parser{src: src, lx: lx, tok: lx.next()}
}

func (p *parser) peek() token { return p.tok }

func (p *parser) next() token {
	t := p.tok
	if t.kind != tokEOF {
		p.prev = t
		p.tok = p.lx.next()
	}
	return t
}

// descend enters one more level of nesting at t, a "(" or the operand that
// starts the right side of a juxtaposition, or reports that the query nests
// deeper than maxDepth. The caller calls p.ascend when the level is parsed.
func (p *parser) descend(t token) error {
	if p.depth >= maxDepth {
		return p.errorAt(t, `query nests too deeply: expected at most %d levels of parentheses and tags side by side`, maxDepth)
	}
	p.depth++
	return nil
}

func (p *parser) ascend() { p.depth-- }

// full reports whether the query has all the warnings it keeps, counting
// one more that it drops.
func (p *parser) full() bool {
	if len(p.warnings) < maxWarnings {
		return false
	}
	p.dropped++
	return true
}

func (p *parser) errorAt(t token, format string, args ...any) *ParseError {
	return &ParseError{Query: p.src, Column: t.column, Message: fmt.Sprintf(format, args...)}
}

// parseQuery parses a whole, non-empty query.
func (p *parser) parseQuery() (*node, error) {
	n, _, err := p.parseOr(tokEOF)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.unexpectedAfterOperand(t)
	}
	return n, nil
}

// parseOr parses an or-expression. opener is what the expression follows
// (tokEOF at the start of the query, tokLParen inside parentheses), so an
// operand missing at its start is reported against it. It also returns the
// first "or" it consumed at this level, for warnings.
func (p *parser) parseOr(opener tokenKind) (*node, *token, error) {
	left, err := p.parseAnd(opener)
	if err != nil {
		return nil, nil, err
	}
	kids := []*node{left}
	var firstOr *token
	for p.peek().kind == tokOr {
		t := p.next()
		if firstOr == nil {
			firstOr = &t
		}
		right, err := p.parseAnd(tokOr)
		if err != nil {
			return nil, nil, err
		}
		kids = append(kids, right)
	}
	return join(kindOr, kids), firstOr, nil
}

func (p *parser) parseAnd(opener tokenKind) (*node, error) {
	left, err := p.parseUnit(opener)
	if err != nil {
		return nil, err
	}
	kids := []*node{left}
	for {
		switch t := p.peek(); {
		case t.kind == tokAnd:
			p.next()
		case p.juxtaposeAsAnd && t.startsOperand():
		default:
			return join(kindAnd, kids), nil
		}
		right, err := p.parseUnit(tokAnd)
		if err != nil {
			return nil, err
		}
		kids = append(kids, right)
	}
}

// parseUnit parses an operand and, when another operand follows it directly,
// the juxtaposition whose right side is the rest of the expression.
func (p *parser) parseUnit(opener tokenKind) (*node, error) {
	start := p.peek()
	left, err := p.parseOperand(opener)
	if err != nil {
		return nil, err
	}
	if p.juxtaposeAsAnd || !p.peek().startsOperand() {
		return left, nil
	}
	if err := p.descend(p.peek()); err != nil {
		return nil, err
	}
	right, firstOr, err := p.parseOr(tokAnd)
	p.ascend()
	if err != nil {
		return nil, err
	}
	n := join(kindAnd, []*node{left, right})
	if firstOr != nil {
		p.warnJuxtaposedOr(start, *firstOr, n)
	}
	return n, nil
}

// warnJuxtaposedOr records that operands side by side are followed by an "or"
// at the same level, the one reading of a query that differs from taking
// juxtaposition for "and".
func (p *parser) warnJuxtaposedOr(start, or token, parsed *node) {
	if p.full() {
		return
	}
	kw := strings.ToLower(p.src[or.offset:or.end])
	span := p.src[start.offset:p.prev.end]
	if len(span) > maxQuoted {
		// Showing both readings means printing and re-parsing the span, for
		// a message that could only quote their beginnings.
		p.warnings = append(p.warnings, fmt.Sprintf(
			"tag query %s: column %d: %q after tags side by side groups to the right: the tags from column %d on read as `a and (b or c)`, not `(a and b) or c`; add parentheses to say which is meant",
			quoteQuery(p.src), or.column, kw, start.column))
		return
	}
	other := newParser(span)
	other.juxtaposeAsAnd = true
	alternative, err := other.parseQuery()
	if err != nil {
		// The span parsed once already; it cannot fail the second time.
		panic(fmt.Sprintf("tag query %s: re-parsing %q: %v", quoteQuery(p.src), span, err))
	}
	p.warnings = append(p.warnings, fmt.Sprintf(
		"tag query %s: column %d: %q after tags side by side groups to the right: `%s` reads as `%s`, not `%s`; add parentheses to say which is meant",
		quoteQuery(p.src), or.column, kw, span, parsed.explicitString(), alternative.explicitString()))
}

// parseOperand parses a tag, `tag in dir`, `not tag`, `not (…)` or `(…)`.
func (p *parser) parseOperand(opener tokenKind) (*node, error) {
	t := p.next()
	switch t.kind {
	case tokTag:
		if p.peek().kind == tokIn {
			return p.parseIn(t)
		}
		return p.tagNode(t)
	case tokLParen:
		return p.parseGroup(t)
	case tokNot:
		return p.parseNot(t)
	case tokInvalid:
		return nil, p.errorAt(t, "%s", t.text)
	}
	return nil, p.missingOperand(opener, t)
}

func (p *parser) parseNot(not token) (*node, error) {
	t := p.next()
	switch t.kind {
	case tokTag:
		if in := p.peek(); in.kind == tokIn {
			return nil, p.errorAt(in, `"not" takes one tag or a parenthesised group: write not (%s in dir)`, quoteTag(t.text))
		}
		n, err := p.tagNode(t)
		if err != nil {
			return nil, err
		}
		return &node{kind: kindNot, kids: []*node{n}}, nil
	case tokLParen:
		n, err := p.parseGroup(t)
		if err != nil {
			return nil, err
		}
		return &node{kind: kindNot, kids: []*node{n}}, nil
	case tokInvalid:
		return nil, p.errorAt(t, "%s", t.text)
	}
	return nil, p.errorAt(t, `expected a tag or "(" after %q`, strings.ToLower(p.src[not.offset:not.end]))
}

func (p *parser) parseGroup(open token) (*node, error) {
	if t := p.peek(); t.kind == tokRParen {
		return nil, p.errorAt(t, "empty parentheses: expected a tag or %q", "(")
	}
	if err := p.descend(open); err != nil {
		return nil, err
	}
	n, _, err := p.parseOr(tokLParen)
	p.ascend()
	if err != nil {
		return nil, err
	}
	switch t := p.peek(); t.kind {
	case tokRParen:
		p.next()
		return n, nil
	case tokEOF:
		return nil, p.errorAt(t, "missing closing parenthesis")
	default:
		return nil, p.unexpectedAfterOperand(t)
	}
}

// parseIn parses `tag in dir`, the in already peeked.
func (p *parser) parseIn(tag token) (*node, error) {
	p.next()
	if t := p.next(); t.kind == tokInvalid {
		return nil, p.errorAt(t, "%s", t.text)
	} else if !(t.kind == tokTag && t.text == "dir") {
		return nil, p.errorAt(t, "the in operator only accepts dir on the right")
	}
	return &node{kind: kindInDir, text: tag.text}, nil
}

// tagNode classifies a tag: relative_dir:P, the deprecated dir~X spelling of
// X in dir, a glob when it holds '*', else an exact tag.
func (p *parser) tagNode(t token) (*node, error) {
	switch {
	case strings.HasPrefix(t.text, relativeDirPrefix):
		if strings.Contains(t.text, "*") {
			return nil, p.errorAt(t, "%s takes a path, not a glob pattern: %q", relativeDirPrefix, elide(t.text))
		}
		return &node{kind: kindRelativeDir, text: t.text}, nil
	case strings.HasPrefix(t.text, deprecatedDirInPrefix):
		n := &node{kind: kindInDir, text: strings.TrimPrefix(t.text, deprecatedDirInPrefix)}
		if !p.full() {
			p.warnings = append(p.warnings, fmt.Sprintf("tag query %s: column %d: %q is the deprecated spelling of %s",
				quoteQuery(p.src), t.column, elide(t.text), elide(n.String())))
		}
		return n, nil
	case strings.Contains(t.text, "*"):
		if !doublestar.ValidatePattern(t.text) {
			return nil, p.errorAt(t, `invalid glob pattern %q: a tag holding "*" is a glob, so its "[", "{" and "\" must be well formed`, elide(t.text))
		}
		if n := strings.Count(t.text, "/") + 1; n > maxDepth {
			// A glob is matched a segment at a time, recursing once per
			// segment and remembering the pairs of tag-trie node and
			// segment it has tried: its segments are levels too.
			return nil, p.errorAt(t, "glob pattern %q has %d segments; expected at most %d", elide(t.text), n, maxDepth)
		}
		return &node{kind: kindGlob, text: t.text}, nil
	}
	return &node{kind: kindTag, text: t.text}, nil
}

// missingOperand reports a token found where an operand was expected.
func (p *parser) missingOperand(opener tokenKind, t token) *ParseError {
	switch opener {
	case tokAnd, tokOr:
		kw := "and"
		if opener == tokOr {
			kw = "or"
		}
		return p.errorAt(t, `expected a tag or "(" after %q`, kw)
	}
	switch t.kind {
	case tokAnd, tokOr:
		return p.errorAt(t, `expected a tag or "(" before %q`, strings.ToLower(p.src[t.offset:t.end]))
	case tokIn:
		return p.errorAt(t, `expected a tag before "in"`)
	case tokEOF:
		return p.errorAt(t, `expected a tag or "(" after "("`)
	}
	return p.errorAt(t, "unexpected %s", t.describe())
}

// unexpectedAfterOperand reports a token that can neither continue an
// expression nor end it where it stands.
func (p *parser) unexpectedAfterOperand(t token) *ParseError {
	if t.kind == tokIn {
		return p.errorAt(t, `expected a tag before "in": only a single tag can be in dir`)
	}
	return p.errorAt(t, "unexpected %s", t.describe())
}
