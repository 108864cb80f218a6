// Package reads finds the files a Terraform module reads through its file
// functions (file, filebase64, file*sha*, filemd5, templatefile,
// fileexists and fileset), by parsing its native and JSON syntax files
// without evaluating them, so that a change to such a file modifies the
// units that read it (docs/behaviour.md#files-a-unit-reads).
package reads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// MaxFileSize is the largest source file parsed; a larger one is skipped
// with a problem.
const MaxFileSize = 1 << 20

// maxNesting bounds how deep brackets may nest in a parsed file or string:
// the parser recurses once per level.
const maxNesting = 200

// fileFuncs are the functions whose first argument names a file to read.
var fileFuncs = map[string]bool{
	"file": true, "filebase64": true, "filemd5": true, "filesha1": true,
	"filesha256": true, "filesha512": true, "filebase64sha256": true,
	"filebase64sha512": true, "templatefile": true,
	"fileexists": true, "fileset": true,
}

// Pos is where a call is: a file (as given to Parse, joined to the dir)
// and a 1-based line and column.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Call is one call of a file function in a module's source, not yet
// resolved.
type Call struct {
	Func string
	Pos  Pos
	args []hcl.Expression
}

// Module is what a module dir's files say of the files it reads.
type Module struct {
	Dir   string // repo-relative, "/"-separated, "." for the root
	Calls []Call
	// Skipped are the files not parsed (too large, too deeply nested,
	// not valid syntax), each a problem at the file.
	Skipped []Problem
}

// ProblemKind says why a read is not followed.
type ProblemKind int

const (
	// Unresolved: the path needs evaluation (a variable, a resource
	// attribute, a function other than format and join).
	Unresolved ProblemKind = iota
	// Outside: the path resolves outside the repository; it is never
	// read.
	Outside
	// Unparsed: a file was not parsed.
	Unparsed
)

// Problem is a read, or a file, that change detection cannot follow.
type Problem struct {
	Kind ProblemKind
	Pos  Pos
	Func string // the function called; "" for an unparsed file
	Msg  string
}

// Read is one file, or for fileset one glob, that a module reads.
type Read struct {
	Func string
	// Path is repo-relative: a file, or for fileset a doublestar pattern
	// (its dir part escaped).
	Path string
	Glob bool
	Pos  Pos
}

// Parse reads the named files (*.tf, *.tf.json, *.tofu) of a module dir
// under root and collects its file function calls. Only files that may
// call one are parsed.
func Parse(root, dir string, files []string) *Module {
	m := &Module{Dir: dir}
	for _, name := range files {
		rel := name
		if dir != "." {
			rel = dir + "/" + name
		}
		src, err := readLimited(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			m.Skipped = append(m.Skipped, Problem{Kind: Unparsed, Pos: Pos{File: rel}, Msg: err.Error()})
			continue
		}
		calls, prob := ParseFile(rel, src)
		m.Calls = append(m.Calls, calls...)
		if prob != nil {
			m.Skipped = append(m.Skipped, *prob)
		}
	}
	return m
}

func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("larger than %d bytes, not parsed", MaxFileSize)
	}
	return b, nil
}

// ParseFile collects the file function calls of one source file, named
// file (its suffix says the syntax: .tf.json is JSON). A file that cannot
// be parsed yields a problem and no calls.
func ParseFile(file string, src []byte) ([]Call, *Problem) {
	if len(src) > MaxFileSize {
		return nil, &Problem{Kind: Unparsed, Pos: Pos{File: file}, Msg: fmt.Sprintf("larger than %d bytes, not parsed", MaxFileSize)}
	}
	if !MayCall(src) {
		return nil, nil
	}
	if strings.HasSuffix(file, ".json") {
		return parseJSON(file, src)
	}
	if nesting(src) > maxNesting {
		return nil, &Problem{Kind: Unparsed, Pos: Pos{File: file}, Msg: fmt.Sprintf("brackets nest deeper than %d, not parsed", maxNesting)}
	}
	f, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, &Problem{Kind: Unparsed, Pos: diagPos(file, diags), Msg: "not valid syntax, not parsed: " + firstError(diags)}
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil, nil
	}
	return collect(body), nil
}

// collect walks a syntax tree for calls of file functions.
func collect(n hclsyntax.Node) []Call {
	var out []Call
	hclsyntax.VisitAll(n, func(n hclsyntax.Node) hcl.Diagnostics {
		fc, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || !fileFuncs[fc.Name] || len(fc.Args) == 0 {
			return nil
		}
		c := Call{Func: fc.Name, Pos: Pos{File: fc.NameRange.Filename, Line: fc.NameRange.Start.Line, Col: fc.NameRange.Start.Column}}
		nargs := 1
		if fc.Name == "fileset" {
			nargs = 2
		}
		if fc.ExpandFinal || len(fc.Args) < nargs {
			c.args = nil // an expanded or short argument list is not read
		} else {
			for _, a := range fc.Args[:nargs] {
				c.args = append(c.args, a)
			}
		}
		out = append(out, c)
		return nil
	})
	// A body's attributes are a map: visited in no fixed order.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return out
}

// MayCall reports whether src mentions a file function followed by a
// parenthesis: files that cannot call one are not parsed.
func MayCall(src []byte) bool {
	for i := 0; ; {
		j := bytes.Index(src[i:], []byte("file"))
		if j < 0 {
			return false
		}
		k := i + j + 4
		for k < len(src) && (src[k] >= 'a' && src[k] <= 'z' || src[k] >= '0' && src[k] <= '9') {
			k++
		}
		for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\n' || src[k] == '\r') {
			k++
		}
		if k < len(src) && src[k] == '(' {
			return true
		}
		i += j + 4
	}
}

// nesting returns how deep brackets nest in src, counting every bracket
// (those in strings and comments too: an upper bound).
func nesting(src []byte) int {
	depth, most := 0, 0
	for _, c := range src {
		switch c {
		case '(', '[', '{':
			depth++
			if depth > most {
				most = depth
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return most
}

func diagPos(file string, diags hcl.Diagnostics) Pos {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil {
			return Pos{File: file, Line: d.Subject.Start.Line, Col: d.Subject.Start.Column}
		}
	}
	return Pos{File: file}
}

func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			if d.Detail != "" {
				return d.Summary + ": " + d.Detail
			}
			return d.Summary
		}
	}
	return ""
}

// parseJSON collects the calls of a JSON syntax file: every string value
// is a template there, so each one that holds an interpolation is parsed
// as one, at its place in the file.
func parseJSON(file string, src []byte) ([]Call, *Problem) {
	lines := lineStarts(src)
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var out []Call
	// stack holds the open containers; an object's key flag says the
	// next string is a key.
	type container struct{ obj, key bool }
	var stack []container
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].key = true
		}
	}
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &Problem{Kind: Unparsed, Pos: Pos{File: file}, Msg: "not valid JSON, not parsed: " + err.Error()}
		}
		end := dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, container{obj: true, key: true})
			case '[':
				stack = append(stack, container{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
			if len(stack) > maxNesting {
				return nil, &Problem{Kind: Unparsed, Pos: Pos{File: file}, Msg: fmt.Sprintf("brackets nest deeper than %d, not parsed", maxNesting)}
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].key {
				stack[n-1].key = false
				break
			}
			valueDone()
			if strings.Contains(t, "${") && MayCall([]byte(t)) && nesting([]byte(t)) <= maxNesting {
				start := stringStart(src, prev)
				line, col := lineCol(lines, start+1)
				expr, diags := hclsyntax.ParseTemplate([]byte(t), file, hcl.Pos{Line: line, Column: col, Byte: start + 1})
				if !diags.HasErrors() {
					out = append(out, collect(expr)...)
				}
			}
		default:
			valueDone()
		}
		prev = end
	}
}

// stringStart finds the opening quote of the string token read after
// offset prev, skipping the separators the decoder consumed.
func stringStart(src []byte, prev int64) int {
	i := int(prev)
	for i < len(src) && src[i] != '"' {
		i++
	}
	return i
}

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func lineCol(starts []int, off int) (int, int) {
	i := sort.Search(len(starts), func(i int) bool { return starts[i] > off }) - 1
	return i + 1, off - starts[i] + 1
}

// evalFuncs are the only functions a path may be built with.
var evalFuncs = map[string]function.Function{"format": stdlib.FormatFunc, "join": stdlib.JoinFunc}

// Resolve evaluates the module's calls as called from the root module in
// rootDir (repo-relative) of the repository at root (absolute): path.module
// is the module's dir relative to rootDir, path.root ".", path.cwd the
// absolute rootDir, as the engine sets them when it runs in rootDir. A
// relative path is taken from rootDir. Reads inside the repository are
// returned, sorted by position; the others are problems.
func (m *Module) Resolve(root, rootDir string) ([]Read, []Problem) {
	absRoot := filepath.ToSlash(filepath.Clean(root))
	cwd := absRoot
	if rootDir != "." {
		cwd = absRoot + "/" + rootDir
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"path": cty.ObjectVal(map[string]cty.Value{
			"module": cty.StringVal(relPath(rootDir, m.Dir)),
			"root":   cty.StringVal("."),
			"cwd":    cty.StringVal(cwd),
		})},
		Functions: evalFuncs,
	}
	var out []Read
	var probs []Problem
	for _, c := range m.Calls {
		r, p := resolveCall(c, ctx, absRoot, rootDir)
		if p != nil {
			probs = append(probs, *p)
			continue
		}
		out = append(out, r)
	}
	return out, probs
}

func resolveCall(c Call, ctx *hcl.EvalContext, absRoot, rootDir string) (Read, *Problem) {
	unresolved := func(why string) (Read, *Problem) {
		return Read{}, &Problem{Kind: Unresolved, Pos: c.Pos, Func: c.Func, Msg: why}
	}
	if len(c.args) == 0 {
		return unresolved("its arguments are expanded from a list, or missing")
	}
	vals := make([]string, len(c.args))
	for i, a := range c.args {
		if why := foreignRef(a); why != "" {
			return unresolved(why)
		}
		v, diags := a.Value(ctx)
		if diags.HasErrors() {
			return unresolved(firstError(diags))
		}
		s, err := convert.Convert(v, cty.String)
		if err != nil || !s.IsWhollyKnown() || s.IsNull() {
			return unresolved("its path is not a known string")
		}
		vals[i] = s.AsString()
	}
	p, ok := repoPath(vals[0], absRoot, rootDir)
	if !ok {
		return Read{}, &Problem{Kind: Outside, Pos: c.Pos, Func: c.Func, Msg: fmt.Sprintf("%q resolves outside the repository", vals[0])}
	}
	if c.Func != "fileset" {
		return Read{Func: c.Func, Path: p, Pos: c.Pos}, nil
	}
	pattern := vals[1]
	for _, seg := range strings.Split(pattern, "/") {
		if seg == ".." {
			return Read{}, &Problem{Kind: Outside, Pos: c.Pos, Func: c.Func, Msg: fmt.Sprintf("pattern %q has a \"..\" segment", pattern)}
		}
	}
	glob := strings.TrimPrefix(pattern, "/")
	if p != "." {
		glob = quoteMeta(p) + "/" + glob
	}
	if !doublestar.ValidatePattern(glob) {
		return unresolved(fmt.Sprintf("pattern %q is not a valid glob", pattern))
	}
	return Read{Func: c.Func, Path: glob, Glob: true, Pos: c.Pos}, nil
}

// foreignRef names the first reference of an expression to anything but
// path.module, path.root and path.cwd, or returns "".
func foreignRef(e hcl.Expression) string {
	for _, tr := range e.Variables() {
		ok := tr.RootName() == "path" && len(tr) == 2
		if ok {
			a, isAttr := tr[1].(hcl.TraverseAttr)
			ok = isAttr && (a.Name == "module" || a.Name == "root" || a.Name == "cwd")
		}
		if !ok {
			return "it refers to " + traversalString(tr) + ", known only when the engine evaluates it"
		}
	}
	return ""
}

func traversalString(tr hcl.Traversal) string {
	var b strings.Builder
	for i, step := range tr {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		default:
			if i == 0 {
				b.WriteString("?")
			}
			b.WriteString("[…]")
		}
	}
	return b.String()
}

// repoPath turns a path as the engine in rootDir would open it into a
// repo-relative one; ok is false when it leaves the repository.
func repoPath(p, absRoot, rootDir string) (string, bool) {
	if path.IsAbs(p) {
		if p == absRoot {
			return ".", true
		}
		rest, ok := strings.CutPrefix(path.Clean(p), absRoot+"/")
		return rest, ok
	}
	if p == "" {
		p = "."
	}
	q := path.Join(rootDir, p)
	if q == ".." || strings.HasPrefix(q, "../") {
		return "", false
	}
	return q, true
}

// relPath is the "/"-separated path of dir relative to from, both
// repo-relative.
func relPath(from, dir string) string {
	if from == dir {
		return "."
	}
	split := func(s string) []string {
		if s == "." {
			return nil
		}
		return strings.Split(s, "/")
	}
	a, b := split(from), split(dir)
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	parts := make([]string, 0, len(a)-i+len(b)-i)
	for range a[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, b[i:]...)
	return strings.Join(parts, "/")
}

// quoteMeta escapes doublestar's metacharacters.
func quoteMeta(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[]{}`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Match reports whether a read covers a repo-relative file.
func (r Read) Match(file string) bool {
	if !r.Glob {
		return r.Path == file
	}
	return doublestar.MatchUnvalidated(r.Path, file)
}
