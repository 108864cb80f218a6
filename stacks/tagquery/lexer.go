package tagquery

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind is the kind of one lexical token of a tag query.
type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokTag
	tokLParen
	tokRParen
	tokAnd
	tokOr
	tokNot
	tokIn
	// tokInvalid carries a lexical error. The lexer does not stop at it, so the
	// parser reports whichever error comes first in the query.
	tokInvalid
)

// token is one lexical token. offset is its byte offset in the source and
// column its 1-based position in runes; end is the byte offset just past it.
type token struct {
	kind   tokenKind
	text   string // the tag for tokTag (quotes removed, escapes applied); the message for tokInvalid
	quoted bool
	offset int
	end    int
	column int
}

// describe names a token the way an error message quotes it.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the query"
	case tokLParen:
		return `"("`
	case tokRParen:
		return `")"`
	case tokAnd:
		return `"and"`
	case tokOr:
		return `"or"`
	case tokNot:
		return `"not"`
	case tokIn:
		return `"in"`
	}
	return quoteTag(elide(t.text))
}

// startsOperand reports whether the token can begin an operand, which is what
// makes two operands written side by side a juxtaposition. An unterminated
// quoted string begins one too, so that its own error is the one reported.
func (t token) startsOperand() bool {
	return t.kind == tokTag || t.kind == tokLParen || t.kind == tokNot || t.kind == tokInvalid
}

// lexer reads a query's tokens one at a time, as the parser asks for them,
// so that a parse error near the start of a long query costs nothing for the
// rest of it.
type lexer struct {
	src    string
	i      int // byte offset of the next token's search
	column int // 1-based rune column of src[i]
}

func newLexer(src string) *lexer { return &lexer{src: src, column: 1} }

// next returns the next token; at the end of the query it returns tokEOF,
// every time it is called.
func (l *lexer) next() token {
	src := l.src
	for l.i < len(src) {
		r, size := utf8.DecodeRuneInString(src[l.i:])
		switch {
		case unicode.IsSpace(r):
			l.i += size
			l.column++
		case r == '(' || r == ')':
			kind := tokLParen
			if r == ')' {
				kind = tokRParen
			}
			t := token{kind: kind, offset: l.i, end: l.i + 1, column: l.column}
			l.i++
			l.column++
			return t
		case r == '"' || r == '\'':
			tok, width := lexQuoted(src, l.i, l.column)
			l.i = tok.end
			l.column += width
			return tok
		default:
			start, startColumn := l.i, l.column
			for l.i < len(src) {
				r, size := utf8.DecodeRuneInString(src[l.i:])
				if isTagBoundary(r) {
					break
				}
				l.i += size
				l.column++
			}
			word := src[start:l.i]
			return token{kind: keyword(word), text: word, offset: start, end: l.i, column: startColumn}
		}
	}
	return token{kind: tokEOF, offset: len(src), end: len(src), column: l.column}
}

// lexQuoted reads the quoted string opening at src[start] and returns its
// token and its width in runes. A backslash takes the next character as it is.
func lexQuoted(src string, start, column int) (token, int) {
	quote := src[start]
	var b strings.Builder
	width := 1
	i := start + 1
	for i < len(src) {
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case src[i] == quote:
			return token{kind: tokTag, text: b.String(), quoted: true, offset: start, end: i + 1, column: column}, width + 1
		case r == '\\' && i+1 < len(src):
			_, escSize := utf8.DecodeRuneInString(src[i+1:])
			b.WriteString(src[i+1 : i+1+escSize])
			i += 1 + escSize
			width += 2
			continue
		case r == '\\':
			i++
			width++
			continue
		}
		b.WriteString(src[i : i+size])
		i += size
		width++
	}
	return token{kind: tokInvalid, text: "unterminated quoted string", offset: start, end: len(src), column: column}, width
}

// isTagBoundary reports whether r ends an unquoted tag.
func isTagBoundary(r rune) bool {
	return unicode.IsSpace(r) || r == '(' || r == ')' || r == '"' || r == '\''
}

// keyword returns the keyword kind of an unquoted word, or tokTag. Keywords
// are matched without regard to ASCII case, as Terrateam does.
func keyword(word string) tokenKind {
	switch {
	case asciiEqualFold(word, "and"):
		return tokAnd
	case asciiEqualFold(word, "or"):
		return tokOr
	case asciiEqualFold(word, "not"):
		return tokNot
	case asciiEqualFold(word, "in"):
		return tokIn
	}
	return tokTag
}

// asciiEqualFold compares word with the lower-case ASCII keyword kw, folding
// only ASCII letters so that no other script's case rules make a keyword.
func asciiEqualFold(word, kw string) bool {
	if len(word) != len(kw) {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

// quoteTag writes a tag so that the lexer reads it back as the same tag: bare
// when it can be, else in double quotes with '"' and '\' escaped.
func quoteTag(tag string) string {
	if tag != "" && keyword(tag) == tokTag && !strings.ContainsFunc(tag, isTagBoundary) {
		return tag
	}
	var b strings.Builder
	b.Grow(len(tag) + 2)
	b.WriteByte('"')
	for i := 0; i < len(tag); i++ {
		if tag[i] == '"' || tag[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(tag[i])
	}
	b.WriteByte('"')
	return b.String()
}
