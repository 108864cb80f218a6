// Package ansi reads the colour an engine prints at a terminal: it strips
// it where output is stored or parsed, and makes each coloured line stand
// alone where lines are shown apart from their neighbours
// (docs/behaviour.md#colour).
//
// Terraform and OpenTofu colour their output with SGR sequences only
// (ESC [ params m); a colour may open on one line and close on a later
// one. Strip also removes any other CSI sequence, so no cursor movement
// an engine or a provider prints reaches a report.
package ansi

import (
	"regexp"
	"strings"
)

// esc starts every sequence.
const esc = "\x1b"

// csi is a control sequence: ESC [, parameter and intermediate bytes, a
// final byte (ECMA-48 5.4).
var csi = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]")

// Reset ends every colour.
const Reset = "\x1b[0m"

// Strip returns s without its control sequences. A lone ESC that starts
// no sequence is removed too, so what is left is plain text.
func Strip(s string) string {
	if !strings.Contains(s, esc) {
		return s
	}
	return strings.ReplaceAll(csi.ReplaceAllString(s, ""), esc, "")
}

// Has reports whether s holds an escape.
func Has(s string) bool { return strings.Contains(s, esc) }

// Lines makes coloured lines stand alone: each line starts with the
// colour its predecessors left open and ends with a reset when it leaves
// one open. A line shown with a prefix, or dropped (a blank line, a
// repeated warning), then neither colours its neighbours nor loses its
// own colour. Lines holds the colour left open between calls.
type Lines struct {
	open string // the SGR sequences since the last reset
}

// Line returns l standing alone, and remembers the colour it leaves open.
func (c *Lines) Line(l string) string {
	if c.open == "" && !Has(l) {
		return l
	}
	start := c.open
	c.open = Open(c.open + l)
	out := start + l
	if c.open != "" {
		out += Reset
	}
	return out
}

// sgr is a Select Graphic Rendition sequence.
var sgr = regexp.MustCompile("\x1b\\[([0-9;]*)m")

// Open returns the SGR sequences s leaves in force at its end: those
// after its last reset.
func Open(s string) string {
	if !Has(s) {
		return ""
	}
	var b strings.Builder
	for _, m := range sgr.FindAllStringSubmatchIndex(s, -1) {
		params := s[m[2]:m[3]]
		if params == "" || params == "0" || strings.HasSuffix(params, ";0") {
			b.Reset()
			continue
		}
		b.WriteString(s[m[0]:m[1]])
	}
	return b.String()
}
