// Package textbudget bounds the text strata copies from what it does not
// control, an engine's output and errors above all, into what it shows or
// keeps: the console, the report, the summary, the pull request comment
// and the state dir (docs/behaviour.md#text-budgets). A text over its
// budget keeps its start, cut on a character boundary, and says how much
// was cut.
package textbudget

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line is the most of one line of an engine's output that strata shows or
// keeps, and Error the most of an error text it copies into a reason, a
// warning or a report's error: a few KiB say what went wrong; the rest of
// a 200 MB line is a value nobody reads, which every copy would hold in
// memory again.
const (
	Line  = 4 << 10
	Error = 4 << 10
)

// Cut keeps at most limit bytes of s, then a note of how many were cut.
func Cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	end := CutPoint(s, limit)
	return s[:end] + Note(len(s)-end)
}

// Marker starts every note of a cut: a masker looks for it, since a cut
// may fall inside a secret and leave its start just before the note.
const Marker = " … cut: "

// Note says that n bytes were cut.
func Note(n int) string {
	if n == 1 {
		return Marker + "1 more byte"
	}
	return Marker + strconv.Itoa(n) + " more bytes"
}

// CutPoint is the largest end of at most limit bytes of s (limit <
// len(s)) that does not split a character.
func CutPoint(s string, limit int) int {
	end := limit
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return end
}

// Dropped is s, the start of a text of which n more bytes were dropped,
// with a note of how many: an unfinished character at its end is dropped
// too. With n 0 it is s.
func Dropped(s string, n int) string {
	if n == 0 {
		return s
	}
	end := len(s)
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				end = i
			}
			break
		}
	}
	return s[:end] + Note(n+len(s)-end)
}

// Lines cuts each line of s to limit bytes, as Cut does; s itself when no
// line is longer.
func Lines(s string, limit int) string {
	long := false
	for rest := s; rest != ""; {
		line, next, _ := strings.Cut(rest, "\n")
		if len(line) > limit {
			long = true
			break
		}
		rest = next
	}
	if !long {
		return s
	}
	var b strings.Builder
	for rest, first := s, true; ; first = false {
		line, next, more := strings.Cut(rest, "\n")
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(Cut(line, limit))
		if !more {
			return b.String()
		}
		rest = next
	}
}
