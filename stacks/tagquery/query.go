// Package tagquery parses and evaluates tag queries, Terrateam's language for
// choosing dirspaces and units by their tags and dirs (`dir:aws/** and not
// workspace:prod`, `network in dir`, `relative_dir:../vpc`): a stack's
// tag_query, a workflow's, a depends_on, and --query all go through it. A
// query is parsed once into an immutable Query that matches one Subject at a
// time, or every subject of an Index at once by bitset algebra, which is how
// thousands of dirspaces are sorted into hundreds of stacks quickly.
package tagquery

import (
	"path"
	"strings"
)

const (
	// relativeDirPrefix starts a tag that names a dir relative to the unit a
	// depends_on is evaluated for.
	relativeDirPrefix = "relative_dir:"
	// deprecatedDirInPrefix is Terrateam's old spelling of `X in dir`: dir~X.
	deprecatedDirInPrefix = "dir~"
)

// Query is a parsed tag query. It is immutable and safe for concurrent use.
// A nil *Query is the empty query.
type Query struct {
	src      string
	root     *node // nil for the empty query
	warnings []string
}

// Subject is what a query is matched against: a dirspace or a unit.
type Subject struct {
	Tags []string
	Dir  string // repo-relative, '/'-separated, "." for the root
}

// Source returns the text the query was parsed from.
func (q *Query) Source() string {
	if q == nil {
		return ""
	}
	return q.src
}

// String returns the query's canonical text: every "and" written out,
// parentheses only where needed, tags quoted only where needed. Parsing it
// gives an equal query.
func (q *Query) String() string {
	if q.IsEmpty() {
		return ""
	}
	return q.root.String()
}

// IsEmpty reports whether the query is empty, and so matches everything.
func (q *Query) IsEmpty() bool { return q == nil || q.root == nil }

// Equal reports whether two queries have the same structure, whatever their
// spelling: `a b` equals `a AND (b)`.
func (q *Query) Equal(other *Query) bool {
	if q.IsEmpty() || other.IsEmpty() {
		return q.IsEmpty() == other.IsEmpty()
	}
	return q.root.equal(other.root)
}

// Warnings returns sentences about what the query may not say as meant:
// operands side by side followed by an unparenthesised "or" (`a b or c` reads
// as a and (b or c), unlike `a and b or c`), and the deprecated dir~X
// spelling. A query with warnings still parses and matches as described.
func (q *Query) Warnings() []string {
	if q == nil || len(q.warnings) == 0 {
		return nil
	}
	return append([]string(nil), q.warnings...)
}

// UsesTag reports whether the query names a tag, glob or relative_dir: tag
// written with the given prefix, such as "stack_name:" or "relative_dir:".
func (q *Query) UsesTag(prefix string) bool {
	if q.IsEmpty() {
		return false
	}
	return q.root.any(func(n *node) bool {
		switch n.kind {
		case kindTag, kindGlob, kindRelativeDir:
			return strings.HasPrefix(n.text, prefix)
		}
		return false
	})
}

// Match reports whether the subject satisfies the query. relative_dir: tags
// match nothing here; see MatchFrom.
func (q *Query) Match(s Subject) bool {
	if q.IsEmpty() {
		return true
	}
	return q.root.match(newSubjectView(s), evaluation{})
}

// MatchFrom matches the subject as a depends_on of the unit in fromDir does:
// relative_dir:P matches the subjects whose dir is fromDir/P, cleaned.
func (q *Query) MatchFrom(s Subject, fromDir string) bool {
	if q.IsEmpty() {
		return true
	}
	return q.root.match(newSubjectView(s), evaluation{relative: true, fromDir: cleanDir(fromDir)})
}

// evaluation says whether relative_dir: tags are live, and from which dir.
type evaluation struct {
	relative bool
	fromDir  string
}

// relativeTarget returns the dir a relative_dir: tag names in this evaluation,
// or false when it names none: outside a relative evaluation, or above the
// repository root.
func (e evaluation) relativeTarget(tag string) (string, bool) {
	if !e.relative {
		return "", false
	}
	dir := path.Join(e.fromDir, strings.TrimPrefix(tag, relativeDirPrefix))
	if dir == ".." || strings.HasPrefix(dir, "../") {
		return "", false
	}
	return dir, true
}

// cleanDir puts a dir in the form subjects use: cleaned, "." for the root.
func cleanDir(dir string) string { return path.Clean(dir) }

// dirSegments splits a clean dir into its segments; the root has none.
func dirSegments(dir string) []string {
	if dir == "." {
		return nil
	}
	return strings.Split(dir, "/")
}

// containsRun reports whether run occurs as consecutive whole segments of
// segs. A run with an empty segment never does.
func containsRun(segs, run []string) bool {
	for _, s := range run {
		if s == "" {
			return false
		}
	}
	for i := 0; i+len(run) <= len(segs); i++ {
		if equalSegments(segs[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

func equalSegments(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
