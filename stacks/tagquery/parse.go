package tagquery

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ParseError is a tag query that does not parse: where, and what was expected.
type ParseError struct {
	Query   string
	Column  int // 1-based, in runes; one past the last rune for an error at the end
	Message string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("tag query %q: column %d: %s", e.Query, e.Column, e.Message)
}

// Parse parses a tag query. The empty query, or one of only whitespace,
// matches every subject.
func Parse(src string) (*Query, error) {
	p := &parser{src: src, toks: lex(src)}
	q := &Query{src: src}
	if p.peek().kind == tokEOF {
		return q, nil
	}
	root, err := p.parseQuery()
	if err != nil {
		return nil, err
	}
	q.root = root
	q.warnings = p.warnings
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
	toks []token
	pos  int
	// juxtaposeAsAnd parses operands side by side as if "and" were written
	// between them; it gives the other reading of a query for warnings.
	juxtaposeAsAnd bool
	warnings       []string
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
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
		left = newOr(left, right)
	}
	return left, firstOr, nil
}

func (p *parser) parseAnd(opener tokenKind) (*node, error) {
	left, err := p.parseUnit(opener)
	if err != nil {
		return nil, err
	}
	for {
		switch t := p.peek(); {
		case t.kind == tokAnd:
			p.next()
		case p.juxtaposeAsAnd && t.startsOperand():
		default:
			return left, nil
		}
		right, err := p.parseUnit(tokAnd)
		if err != nil {
			return nil, err
		}
		left = newAnd(left, right)
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
	right, firstOr, err := p.parseOr(tokAnd)
	if err != nil {
		return nil, err
	}
	n := newAnd(left, right)
	if firstOr != nil {
		p.warnJuxtaposedOr(start, *firstOr, n)
	}
	return n, nil
}

// warnJuxtaposedOr records that operands side by side are followed by an "or"
// at the same level, the one reading of a query that differs from taking
// juxtaposition for "and".
func (p *parser) warnJuxtaposedOr(start, or token, parsed *node) {
	span := p.src[start.offset:p.toks[p.pos-1].end]
	other := &parser{src: span, toks: lex(span), juxtaposeAsAnd: true}
	alternative, err := other.parseQuery()
	if err != nil {
		// The span parsed once already; it cannot fail the second time.
		panic(fmt.Sprintf("tag query %q: re-parsing %q: %v", p.src, span, err))
	}
	p.warnings = append(p.warnings, fmt.Sprintf(
		"tag query %q: column %d: %q after tags side by side groups to the right: `%s` reads as `%s`, not `%s`; add parentheses to say which is meant",
		p.src, or.column, strings.ToLower(p.src[or.offset:or.end]), span, parsed.explicitString(), alternative.explicitString()))
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
	n, _, err := p.parseOr(tokLParen)
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
			return nil, p.errorAt(t, "%s takes a path, not a glob pattern: %q", relativeDirPrefix, t.text)
		}
		return &node{kind: kindRelativeDir, text: t.text}, nil
	case strings.HasPrefix(t.text, deprecatedDirInPrefix):
		n := &node{kind: kindInDir, text: strings.TrimPrefix(t.text, deprecatedDirInPrefix)}
		p.warnings = append(p.warnings, fmt.Sprintf("tag query %q: column %d: %q is the deprecated spelling of %s",
			p.src, t.column, t.text, n.String()))
		return n, nil
	case strings.Contains(t.text, "*"):
		if !doublestar.ValidatePattern(t.text) {
			return nil, p.errorAt(t, `invalid glob pattern %q: a tag holding "*" is a glob, so its "[", "{" and "\" must be well formed`, t.text)
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
