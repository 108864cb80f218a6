package report

import (
	"fmt"
	"html"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/strata-iac/strata/internal/textbudget"
)

// CommentMarker opens every pull request comment strata writes, so that
// the next run updates it instead of adding another.
const CommentMarker = "<!-- strata:comment -->"

// CommentLimit is the most bytes a pull request comment has: GitHub
// refuses a body over 65,536 characters, and a body's bytes are never
// fewer than its characters.
const CommentLimit = 65536

// commentErrorLimit caps the error of a run that stopped before any unit ran.
const commentErrorLimit = 4000

// Comment is the pull request comment of a run's report: the marker line
// that finds it again, the verdict, the change totals, then one folded
// block per stack (a failed stack's block open) with its units and their
// plan output. It stays within CommentLimit: over it, the outputs are cut
// first (a failed unit keeps the end of its output, where the error is,
// the others the start); then the stacks that did not fail are one line
// each, then every stack, then the list itself is cut. The comment says
// what was left out and links the full summary (link, else the report's
// CI run).
func Comment(rep *Report, link string) string {
	if link == "" && rep.CI != nil {
		link = rep.CI.RunURL
	}
	v := newCommentView(rep, link)
	for fold := foldNone; fold <= foldPassed; fold++ {
		if s := v.render(commentCut{logs: -1, fold: fold, stacks: -1}); len(s) <= CommentLimit {
			return s
		}
		// The longest cut of every output that fits.
		lo, hi, best := 0, v.longestLog, ""
		for lo <= hi {
			mid := (lo + hi) / 2
			if s := v.render(commentCut{logs: mid, fold: fold, stacks: -1}); len(s) <= CommentLimit {
				best, lo = s, mid+1
			} else {
				hi = mid - 1
			}
		}
		if best != "" {
			return best
		}
	}
	if s := v.render(commentCut{logs: 0, fold: foldAll, stacks: -1}); len(s) <= CommentLimit {
		return s
	}
	lo, hi, best := 0, len(v.stacks), v.render(commentCut{logs: 0, fold: foldAll, stacks: 0})
	for lo <= hi {
		mid := (lo + hi) / 2
		if s := v.render(commentCut{logs: 0, fold: foldAll, stacks: mid}); len(s) <= CommentLimit {
			best, lo = s, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best
}

// Folding levels: every stack a block; the stacks that did not fail one
// line each; every stack one line.
const (
	foldNone = iota
	foldPassed
	foldAll
)

// commentCut is how much of the report a rendering leaves out.
type commentCut struct {
	logs   int // bytes of each output kept; -1: all
	fold   int
	stacks int // stacks listed; -1: all
}

type commentStack struct {
	path   string
	status Status
	units  []*UnitReport
}

type commentView struct {
	rep        *Report
	link       string
	stacks     []commentStack
	longestLog int
	// shared are the engine warnings several units print, shown once.
	shared []sharedWarning
}

func newCommentView(rep *Report, link string) *commentView {
	v := &commentView{rep: rep, link: link, shared: rep.sharedWarnings()}
	index := map[string]int{}
	for _, s := range rep.Stacks {
		path := strings.Join(s.Path, " / ")
		if path == "" {
			path = s.Name
		}
		index[s.Name] = len(v.stacks)
		v.stacks = append(v.stacks, commentStack{path: path, status: s.Status})
	}
	for _, u := range rep.Units {
		i, ok := index[u.Stack]
		if !ok {
			i = len(v.stacks)
			index[u.Stack] = i
			v.stacks = append(v.stacks, commentStack{path: u.Stack, status: u.Status})
		}
		v.stacks[i].units = append(v.stacks[i].units, u)
		for _, o := range unitOutputs(u, v.shared) {
			v.longestLog = max(v.longestLog, len(o.text))
		}
	}
	// Failures first, then what changes, then the rest.
	sort.SliceStable(v.stacks, func(i, j int) bool {
		return rank(v.stacks[i].status) < rank(v.stacks[j].status)
	})
	return v
}

func (v *commentView) render(cut commentCut) string {
	var b strings.Builder
	rep := v.rep
	b.WriteString(CommentMarker + "\n")
	fmt.Fprintf(&b, "### strata %s: %s\n\n", htmlText(rep.Command), rep.Verdict())
	if line := rep.ContextLine(func(s string) string { return "<code>" + htmlText(s) + "</code>" }, mdLink); line != "" {
		b.WriteString(line + "\n\n")
	}
	if line := rep.NotReviewedLine(func(s string) string { return "<code>" + htmlText(s) + "</code>" }); line != "" {
		b.WriteString(line + "\n\n")
	}
	if rep.Error != "" {
		e, _ := cutText(rep.Error, commentErrorLimit, false)
		fmt.Fprintf(&b, "**Stopped before any unit ran.**\n\n```\n%s\n```\n\n", fence(e))
	}
	b.WriteString(rep.hookFailure(commentErrorLimit))
	b.WriteString(rep.costBlock())
	if cut.fold != foldAll {
		// The picture and the shared warnings go last of all when the
		// comment must shrink.
		b.WriteString(rep.dagBlock())
		b.WriteString(warningsBlock(v.shared))
	}
	var left []string
	listed := len(v.stacks)
	if cut.stacks >= 0 && cut.stacks < listed {
		listed = cut.stacks
	}
	cutLogs := false
	folded := 0
	for _, s := range v.stacks[:listed] {
		if cut.fold == foldAll || cut.fold == foldPassed && s.status != StatusFailed {
			fmt.Fprintf(&b, "- %s\n", stackLine(s))
			folded++
			continue
		}
		if folded > 0 {
			// A block after a list needs a blank line between.
			b.WriteString("\n")
			folded = 0
		}
		cutLogs = v.writeStack(&b, s, cut.logs) || cutLogs
	}
	if listed < len(v.stacks) {
		fmt.Fprintf(&b, "- … and %s more\n", CountOf(len(v.stacks)-listed, "stack"))
		left = append(left, fmt.Sprintf("%s not listed", CountOf(len(v.stacks)-listed, "stack")))
	}
	if folded > 0 {
		b.WriteString("\n")
	}
	switch cut.fold {
	case foldPassed:
		left = append([]string{"the stacks that did not fail are one line each"}, left...)
	case foldAll:
		left = append([]string{"every stack is one line"}, left...)
	}
	if cutLogs {
		what := fmt.Sprintf("plan outputs cut to %s each", CountOf(cut.logs, "byte"))
		if cut.logs == 0 {
			what = "plan outputs left out"
		}
		left = append([]string{what}, left...)
	}
	switch {
	case len(left) > 0 && v.link != "":
		fmt.Fprintf(&b, "---\n*Shortened to fit a comment: %s.* The full summary is in the %s.\n", strings.Join(left, "; "), mdLink("CI run", v.link))
	case len(left) > 0:
		fmt.Fprintf(&b, "---\n*Shortened to fit a comment: %s.* The full summary is in the CI run's summary.\n", strings.Join(left, "; "))
	case v.link != "":
		fmt.Fprintf(&b, "%s\n", mdLink("Full summary", v.link))
	}
	return b.String()
}

// writeStack writes a stack's block and reports whether it cut an output.
func (v *commentView) writeStack(b *strings.Builder, s commentStack, logs int) bool {
	open := ""
	if s.status == StatusFailed {
		open = " open"
	}
	fmt.Fprintf(b, "<details%s><summary>%s</summary>\n\n", open, stackLine(s))
	b.WriteString("| unit | status | changes | reason |\n|---|---|---|---|\n")
	for _, u := range s.units {
		fmt.Fprintf(b, "| <code>%s</code> | %s | %s | %s |\n", TableCell(u.Name()), string(u.Status), u.ChangesText(), TableCell(u.Note()))
	}
	b.WriteString("\n")
	cut := false
	for _, u := range s.units {
		for _, o := range unitOutputs(u, v.shared) {
			if logs == 0 {
				cut = true
				continue
			}
			out, c := cutText(o.text, logs, u.Status == StatusFailed)
			cut = cut || c
			open := ""
			if u.Status == StatusFailed {
				open = " open"
			}
			fmt.Fprintf(b, "<details%s><summary><code>%s</code> %s</summary>\n\n%s\n%s\n```\n\n</details>\n\n", open, htmlText(u.Name()), html.EscapeString(o.title), o.fence, fence(out))
		}
	}
	b.WriteString("</details>\n\n")
	return cut
}

// stackLine is a stack in one line: its path, status, units and the
// changes of those whose changes are known.
func stackLine(s commentStack) string {
	line := fmt.Sprintf("<b>%s</b> — %s · %s", htmlText(s.path), html.EscapeString(string(s.status)), CountOf(len(s.units), "unit"))
	if total, ok := TotalChanges(s.units); ok {
		line += " · " + total.String()
	}
	return line
}

type unitOutput struct{ title, text, fence string }

// unitOutputs are what a unit shows below its stack's table: the output
// of each step that captures it, and the engine's output unless the unit
// has no changes (its row says all there is).
func unitOutputs(u *UnitReport, shared []sharedWarning) []unitOutput {
	var out []unitOutput
	for _, st := range u.Steps {
		if t := trimBlank(st.Output); t != "" {
			out = append(out, unitOutput{title: st.Name + " output", text: t, fence: "```"})
		}
	}
	if t := trimBlank(withoutShared(u.Log, shared)); t != "" && u.Status != StatusNoChanges {
		title := string(u.Status)
		if c, ok := u.PlanChanges(); ok {
			title += ", " + c.String()
		}
		fence := "```"
		if u.hasPlan() {
			t, fence = DiffView(t), u.fenceFor()
		}
		out = append(out, unitOutput{title: title, text: t, fence: fence})
	}
	return out
}

// trimBlank trims the blank lines around s, keeping its first line's
// indent.
func trimBlank(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndex(s[:len(s)-len(strings.TrimLeft(s, " \t\r\n"))], "\n"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// cutText keeps at most limit bytes of s, the end when tail, else the
// start, on a character boundary, and says how much it cut.
func cutText(s string, limit int, tail bool) (string, bool) {
	if limit < 0 || len(s) <= limit {
		return s, false
	}
	if tail {
		start := len(s) - limit
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
		return fmt.Sprintf("… %s cut\n", CountOf(start, "byte")) + s[start:], true
	}
	end := textbudget.CutPoint(s, limit)
	return s[:end] + fmt.Sprintf("\n… %s cut", CountOf(len(s)-end, "byte")), true
}

// htmlText is a name or message as HTML text: it can open no tag, comment or
// entity. In a table row or a paragraph Markdown is read inside HTML tags
// too, so the characters that make its code spans, links and emphasis are
// written as entities: a base branch named "ma`in](http://x)" stays text.
func htmlText(s string) string { return markdownPunct.Replace(html.EscapeString(s)) }

var markdownPunct = strings.NewReplacer("`", "&#96;", "[", "&#91;", "]", "&#93;", `\`, "&#92;",
	"*", "&#42;", "_", "&#95;", "~", "&#126;")

// TableCell is text in a table cell: one line, no column break.
func TableCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(htmlText(s), "|", "&#124;")
}

// mdLink is a Markdown link to an http(s) URL; any other URL is shown as
// text.
func mdLink(label, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return label + " (<code>" + htmlText(raw) + "</code>)"
	}
	return "[" + label + "](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E").Replace(u.String()) + ")"
}
