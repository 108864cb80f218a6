package console

import (
	"bytes"
	"strings"

	"github.com/strata-iac/strata/internal/ansi"
	"github.com/strata-iac/strata/internal/diagnostics"
	"github.com/strata-iac/strata/internal/textbudget"
)

// Engine output as lines: split as it comes, warnings boxed once, secrets
// masked line by line.

// lineSplitter turns one stream's writes into whole lines. It holds a
// terraform box (╷ … ╵), with the line ending in ":" that may introduce
// it, until the box is whole: a repeated warning can only be recognised
// whole, and the other stream's lines must not land inside it.
//
// Each line it emits stands alone in colour (ansi.Lines): a line shown
// with a prefix, or dropped, leaves its neighbours' colour as it was.
type lineSplitter struct {
	partial lineBuf
	held    []string
	inBox   bool
	colour  ansi.Lines
}

func (ls *lineSplitter) write(p []byte, emit func([]string)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			ls.partial.add(p)
			return
		}
		ls.partial.add(p[:i])
		p = p[i+1:]
		ls.line(ls.partial.take(), emit)
	}
}

// lineBuf collects one line of an engine's output, up to
// textbudget.Line bytes: what comes past that is counted, not kept, so a
// line of 200 MB costs 4 KiB (docs/behaviour.md#text-budgets). Every line
// is masked whole, so it must be held whole: the budget is what bounds
// the memory a unit's output takes.
type lineBuf struct {
	b       []byte
	dropped int
}

func (lb *lineBuf) add(p []byte) {
	room := max(textbudget.Line-len(lb.b), 0)
	if len(p) > room {
		lb.dropped += len(p) - room
		p = p[:room]
	}
	lb.b = append(lb.b, p...)
}

func (lb *lineBuf) empty() bool { return len(lb.b) == 0 && lb.dropped == 0 }

// take returns the line collected, with a note of what was cut, and
// starts the next. A cut line loses its colour: the cut may fall inside a
// colour code.
func (lb *lineBuf) take() string {
	l := string(lb.b)
	if lb.dropped > 0 {
		l = textbudget.Dropped(ansi.Strip(l), lb.dropped)
	}
	lb.b, lb.dropped = lb.b[:0], 0
	return l
}

func (ls *lineSplitter) line(l string, emit func([]string)) {
	l = ls.colour.Line(strings.TrimRight(l, "\r"))
	t := strings.TrimSpace(ansi.Strip(l))
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
	if !ls.partial.empty() {
		ls.line(ls.partial.take(), emit)
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

// shown is a line of the engine's as people see it: masked with mask, in
// colour when the console shows colour. Masking only sees a secret whole
// where no colour splits it: when the coloured line, masked, does not
// read as the plain line masked, the plain line is shown.
func (c *Console) shown(l string, mask func(string) string) string {
	plain := ansi.Strip(l)
	if !c.Colour || plain == l {
		return mask(plain)
	}
	want := mask(plain)
	if masked := mask(l); ansi.Strip(masked) == want {
		return masked
	}
	return want
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
