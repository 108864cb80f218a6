package report

import (
	"fmt"
	"html"
	"sort"
	"strings"
)

// sharedWarning is an engine warning that several units' logs print the
// same, with the units.
type sharedWarning struct {
	text  string
	units []string
}

// warningBlocks are the engine's warning boxes in a log: from a line "╷"
// to a line "╵", the second line "│ Warning: …".
func warningBlocks(log string) []string {
	var out []string
	lines := strings.Split(log, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "╷" || i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "│ Warning:") {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "╵" {
				out = append(out, strings.Join(lines[i:j+1], "\n"))
				i = j
				break
			}
		}
	}
	return out
}

// sharedWarnings are the engine warnings that two or more units print
// alike, in the order first met (docs/behaviour.md#summary): the summary
// and the comment show each once, and leave them out of the units' logs.
func (rep *Report) sharedWarnings() []sharedWarning {
	byText := map[string]*sharedWarning{}
	var order []string
	for _, u := range rep.Units {
		seen := map[string]bool{}
		for _, w := range warningBlocks(u.Log) {
			if seen[w] {
				continue
			}
			seen[w] = true
			sw := byText[w]
			if sw == nil {
				sw = &sharedWarning{text: w}
				byText[w] = sw
				order = append(order, w)
			}
			sw.units = append(sw.units, u.Name())
		}
	}
	var out []sharedWarning
	for _, w := range order {
		if sw := byText[w]; len(sw.units) > 1 {
			sort.Strings(sw.units)
			out = append(out, *sw)
		}
	}
	return out
}

// withoutShared is a unit's log with the shared warnings taken out.
func withoutShared(log string, shared []sharedWarning) string {
	for _, w := range shared {
		log = strings.ReplaceAll(log, w.text+"\n", "")
		log = strings.ReplaceAll(log, w.text, "")
	}
	return log
}

// warningsBlock shows the shared warnings once, each with how many units
// and which print it; "" when there are none.
func warningsBlock(shared []sharedWarning) string {
	if len(shared) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>%s printed by several units, shown once</summary>\n\n", CountOf(len(shared), "warning"))
	for _, w := range shared {
		fmt.Fprintf(&b, "%s: %s\n\n```\n%s\n```\n\n", CountOf(len(w.units), "unit"), html.EscapeString(strings.Join(w.units, ", ")), fence(w.text))
	}
	b.WriteString("</details>\n\n")
	return b.String()
}
