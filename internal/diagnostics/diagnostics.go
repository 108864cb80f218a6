package diagnostics

import (
	"regexp"
	"strconv"
	"strings"
)

// Diagnostic is one of the engine's diagnostics as terraform and tofu print
// them without colour:
//
//	Error: <summary>
//
//	  on main.tf line 3, in resource "x" "y":
//	   3:   ...
//
//	<detail>
//
// either bare or inside a box (╷ │ … ╵).
type Diagnostic struct {
	Severity string // "Error" or "Warning"
	Summary  string
	// File and Line are the position the engine gave, File as it printed
	// it: relative to the unit's dir.
	File   string
	Line   int
	Detail string
}

// diagnosticPosition is the line naming where a Diagnostic points.
var diagnosticPosition = regexp.MustCompile(`^on (.+) line (\d+)(?:, in .*)?:$`)

// diagnosticSource is a quoted source line ("  3:   default = 1") or the
// underline and value lines the engine draws below it.
var diagnosticSource = regexp.MustCompile(`^(\d+:|├|│|╵)`)

// Unboxed is a line without the box's left border, trimmed.
func Unboxed(line string) string {
	t := strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(t, "│"); ok {
		t = strings.TrimSpace(rest)
	}
	return t
}

// diagnosticHead reads "Error: summary" or "Warning: summary".
func diagnosticHead(t string) (severity, summary string, ok bool) {
	for _, sev := range []string{"Error", "Warning"} {
		if rest, found := strings.CutPrefix(t, sev+": "); found && strings.TrimSpace(rest) != "" {
			return sev, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// maxSummaryLines bounds how many lines a summary may take: without a
// terminal the engine wraps long ones at about 78 columns.
const maxSummaryLines = 3

// Parse finds the engine's diagnostics in a step's output.
func Parse(text string) []Diagnostic {
	lines := strings.Split(text, "\n")
	var (
		out    []Diagnostic
		cur    *Diagnostic
		detail []string
	)
	finish := func() {
		if cur != nil {
			cur.Detail = strings.TrimSpace(strings.Join(detail, "\n"))
			out = append(out, *cur)
		}
		cur, detail = nil, nil
	}
	for i := 0; i < len(lines); i++ {
		raw := strings.TrimSpace(lines[i])
		if raw == "╷" || raw == "╵" {
			// A box holds one Diagnostic; its end ends it.
			if raw == "╵" {
				finish()
			}
			continue
		}
		t := Unboxed(lines[i])
		if sev, summary, ok := diagnosticHead(t); ok {
			finish()
			cur = &Diagnostic{Severity: sev, Summary: summary}
			// A wrapped summary goes on until the blank line under it.
			for n := 1; n < maxSummaryLines && i+1 < len(lines); n++ {
				next := Unboxed(lines[i+1])
				if _, _, head := diagnosticHead(next); next == "" || next == "╵" || head {
					break
				}
				cur.Summary += " " + next
				i++
			}
			continue
		}
		if cur == nil {
			continue
		}
		if m := diagnosticPosition.FindStringSubmatch(t); m != nil && cur.File == "" {
			cur.File = m[1]
			cur.Line, _ = strconv.Atoi(m[2])
			continue
		}
		if strings.HasPrefix(t, "with ") && strings.HasSuffix(t, ",") && cur.File == "" {
			continue // "with aws_instance.x," stands above the position
		}
		if diagnosticSource.MatchString(t) {
			continue
		}
		detail = append(detail, t)
	}
	finish()
	return out
}

// FailureReason is why a step failed, from the error the engine call
// returned: the summary of its first Error Diagnostic, else the first
// line that says anything. Warnings the engine prints first (a missing
// CLI config file warns on every call) are not the reason.
func FailureReason(s string) string {
	for _, d := range Parse(s) {
		if d.Severity == "Error" {
			return d.Summary
		}
	}
	return FirstLine(s)
}

// FirstLine is the first line of s that says anything: not blank, not
// a box border, not "exit status N".
func FirstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "│"))
		if line != "" && !strings.HasPrefix(line, "exit status") && line != "╷" {
			return line
		}
	}
	return ""
}
