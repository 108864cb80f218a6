package config

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a 1-based position in a config file. The zero Pos means "no
// position" (a fact that does not come from one place in the file).
type Pos struct {
	Line, Col int
}

// IsZero reports whether p carries no position.
func (p Pos) IsZero() bool { return p.Line == 0 }

// Severity says whether a diagnostic stops strata or only informs.
type Severity int

const (
	SeverityError Severity = iota
	SeverityWarning
)

// Diagnostic is one finding about a config: where it is, which key it is
// about, and what was found against what was expected.
type Diagnostic struct {
	Severity Severity `json:"-"`
	File     string   `json:"file"`
	Pos      Pos      `json:"-"`
	Key      string   `json:"key,omitempty"`
	Message  string   `json:"message"`
}

// String renders the diagnostic as `file:line:col: key: message`, the form
// editors and CI annotators understand.
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		if !d.Pos.IsZero() {
			fmt.Fprintf(&b, ":%d:%d", d.Pos.Line, d.Pos.Col)
		}
		b.WriteString(": ")
	}
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if d.Key != "" {
		b.WriteString(d.Key)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Diagnostics is every finding of one config load, errors and warnings.
type Diagnostics []Diagnostic

// Errors returns the error diagnostics only.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(SeverityError) }

// Warnings returns the warning diagnostics only.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(SeverityWarning) }

func (ds Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Sort orders diagnostics by file and position, keeping the order of
// findings at the same place.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Pos.Col < b.Pos.Col
	})
}

// Error is returned when a config has errors. It carries every
// diagnostic, so a caller can print them all rather than the first.
type Error struct {
	Diagnostics Diagnostics
}

func (e *Error) Error() string {
	errs := e.Diagnostics.Errors()
	lines := make([]string, len(errs))
	for i, d := range errs {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Collector gathers the diagnostics of one file: the config's checks add
// to it, and so does the model as it resolves the config.
type Collector struct {
	File  string      // the file every diagnostic is about
	Diags Diagnostics // what was found, in the order it was found
	// warned keeps "once per key per run" warnings from repeating.
	warned map[string]bool
}

// Errorf adds an error at p about key.
func (c *Collector) Errorf(p Pos, key, format string, args ...any) {
	c.Diags = append(c.Diags, Diagnostic{Severity: SeverityError, File: c.File, Pos: p, Key: key, Message: fmt.Sprintf(format, args...)})
}

// Warnf adds a warning at p about key.
func (c *Collector) Warnf(p Pos, key, format string, args ...any) {
	c.Diags = append(c.Diags, Diagnostic{Severity: SeverityWarning, File: c.File, Pos: p, Key: key, Message: fmt.Sprintf(format, args...)})
}

// WarnOnce warns about id only the first time it is seen.
func (c *Collector) WarnOnce(id string, p Pos, key, format string, args ...any) {
	if c.warned == nil {
		c.warned = map[string]bool{}
	}
	if c.warned[id] {
		return
	}
	c.warned[id] = true
	c.Warnf(p, key, format, args...)
}

// Dedupe drops repeated identical diagnostics (a fact found once per leaf
// of a nested stack is reported once).
func (ds Diagnostics) Dedupe() Diagnostics {
	seen := make(map[Diagnostic]bool, len(ds))
	out := ds[:0]
	for _, d := range ds {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
