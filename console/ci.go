package console

import (
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/diagnostics"
	"github.com/strata-iac/strata/report"
)

// What the console does in a CI service: folded groups, and failures as
// annotations (docs/behaviour.md#console-output).

// openGroup starts a collapsible group for a step's lines. Callers hold
// c.mu.
func (c *Console) openGroup(sw *StepWriter) {
	title := sw.ur.Name + " " + sw.step
	if sw.groups > 0 {
		title += " (continued)"
	}
	sw.groups++
	switch sw.ci {
	case ciplatform.GitHub:
		io.WriteString(c.w, githubCommand(func(a *githubactions.Action) { a.Group(title) }))
	case ciplatform.GitLab:
		c.sections++
		sw.section = fmt.Sprintf("strata_%d_%s", c.sections, sectionName.ReplaceAllString(sw.ur.Name+"_"+sw.step, "_"))
		fmt.Fprintf(c.w, "\x1b[0Ksection_start:%d:%s[collapsed=true]\r\x1b[0K%s\n", c.Now().Unix(), sw.section, title)
	default:
		return
	}
	c.open = sw
}

// closeGroup ends the open group, if any. Callers hold c.mu.
func (c *Console) closeGroup() {
	sw := c.open
	if sw == nil {
		return
	}
	c.open = nil
	switch sw.ci {
	case ciplatform.GitHub:
		io.WriteString(c.w, githubCommand(func(a *githubactions.Action) { a.EndGroup() }))
	case ciplatform.GitLab:
		fmt.Fprintf(c.w, "\x1b[0Ksection_end:%d:%s\r\x1b[0K\n", c.Now().Unix(), sw.section)
	}
}

// githubCommand renders workflow commands. They are rendered into a
// string, not written straight to the console: the library panics when
// its writer fails, and a closed stdout must not crash a run.
func githubCommand(issue func(*githubactions.Action)) string {
	var b strings.Builder
	issue(githubactions.New(githubactions.WithWriter(&b)))
	return b.String()
}

// Annotate turns a failed unit into GitHub annotations: one per Error
// diagnostic of the step that failed, at its file and line (relative to
// the repository) when the engine gave one; a plain one with the reason
// when it gave none.
func (c *Console) Annotate(ur *Unit, rep *report.UnitReport, root, workspace string) {
	failedStep := ""
	for i := len(rep.Steps) - 1; i >= 0; i-- {
		if !rep.Steps[i].OK {
			failedStep = rep.Steps[i].Name
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	n := 0
	seen := map[string]bool{}
	if failedStep != "" {
		for _, d := range diagnostics.Parse(c.failures[ur][failedStep]) {
			if d.Severity != "Error" || n == maxAnnotations {
				continue
			}
			msg := d.Summary
			if d.Detail != "" {
				msg += "\n\n" + d.Detail
			}
			fields := map[string]string{"title": rep.Name() + " " + failedStep + " failed"}
			if d.File != "" {
				fields["file"] = annotationFile(root, rep.Dir, d.File, workspace)
				fields["line"] = strconv.Itoa(d.Line)
			}
			cmd := githubCommand(func(a *githubactions.Action) { a.WithFieldsMap(fields).Errorf("%s", msg) })
			if !seen[cmd] {
				seen[cmd] = true
				b.WriteString(cmd)
				n++
			}
		}
	}
	if n == 0 {
		b.WriteString(githubCommand(func(a *githubactions.Action) { a.Errorf("%s: %s", rep.Name(), rep.Reason) }))
	}
	c.clearStatus()
	c.closeGroup()
	io.WriteString(c.w, b.String())
	c.drawStatus()
}

// annotationFile is a diagnostic's file as GitHub wants it: relative to
// the checkout ($GITHUB_WORKSPACE) when strata's root is inside it, else
// to strata's root. The engine prints it relative to the unit's dir.
func annotationFile(root, dir, file, workspace string) string {
	abs := filepath.FromSlash(file)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, filepath.FromSlash(dir), abs)
	}
	for _, base := range []string{workspace, root} {
		if base == "" {
			continue
		}
		if rel, err := filepath.Rel(base, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return path.Join(dir, filepath.ToSlash(file))
}
