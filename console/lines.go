package console

import (
	"bytes"
	"strings"

	"github.com/strata-iac/strata/internal/diagnostics"
)

// Engine output as lines: split as it comes, warnings boxed once, secrets
// masked line by line.

// lineSplitter turns one stream's writes into whole lines. It holds a
// terraform box (╷ … ╵), with the line ending in ":" that may introduce
// it, until the box is whole: a repeated warning can only be recognised
// whole, and the other stream's lines must not land inside it.
type lineSplitter struct {
	partial []byte
	held    []string
	inBox   bool
}

func (ls *lineSplitter) write(p []byte, emit func([]string)) {
	ls.partial = append(ls.partial, p...)
	for {
		i := bytes.IndexByte(ls.partial, '\n')
		if i < 0 {
			return
		}
		line := string(ls.partial[:i])
		ls.partial = ls.partial[i+1:]
		ls.line(line, emit)
	}
}

func (ls *lineSplitter) line(l string, emit func([]string)) {
	t := strings.TrimSpace(l)
	switch {
	case ls.inBox:
		ls.held = append(ls.held, l)
		if t == "╵" {
			ls.inBox = false
			held := ls.held
			ls.held = nil
			emit(held)
		}
	case t == "╷":
		ls.held = append(ls.held, l)
		ls.inBox = true
	default:
		if len(ls.held) > 0 {
			held := ls.held
			ls.held = nil
			emit(held)
		}
		if strings.HasSuffix(t, ":") {
			ls.held = []string{l}
			return
		}
		emit([]string{l})
	}
}

// flush emits what is left when the step ends: an unfinished line, and a
// box that never closed, as it is.
func (ls *lineSplitter) flush(emit func([]string)) {
	if len(ls.partial) > 0 {
		line := string(ls.partial)
		ls.partial = nil
		ls.line(line, emit)
	}
	if len(ls.held) > 0 {
		held := ls.held
		ls.held, ls.inBox = nil, false
		emit(held)
	}
}

// warningBox reports whether lines are a whole warning box (with the line
// introducing it, if any), and the text that identifies it.
func warningBox(lines []string) (string, bool) {
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "╷" {
			start = i
			break
		}
	}
	if start < 0 || strings.TrimSpace(lines[len(lines)-1]) != "╵" {
		return "", false
	}
	for _, l := range lines[start+1:] {
		t := diagnostics.Unboxed(l)
		if t == "" {
			continue
		}
		if !strings.HasPrefix(t, "Warning: ") {
			return "", false
		}
		break
	}
	trimmed := make([]string, len(lines))
	for i, l := range lines {
		trimmed[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(trimmed, "\n"), true
}

// MaskLine masks one line of output. A secret of several lines never
// shows whole on one line, so each of its lines is masked by itself.
func (m *Masker) MaskLine(s string) string {
	if m == nil {
		return s
	}
	s = m.Mask(s)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.secrets {
		if !strings.Contains(v, "\n") {
			continue
		}
		for _, part := range strings.Split(v, "\n") {
			// Short lines ("}", "---") would shred every line they
			// appear in, and give nothing away.
			if p := strings.TrimSpace(part); len(p) > 3 {
				s = strings.ReplaceAll(s, p, "***")
			}
		}
	}
	return s
}
