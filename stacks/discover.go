package stacks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/reads"
	"github.com/strata-iac/strata/stacks/config"
)

// DefaultFilePatterns are the global file_patterns when the config sets none.
var DefaultFilePatterns = []string{
	"**/*.tf", "**/*.tf.json", "**/*.tofu", "**/*.tfvars", "**/*.tfvars.json", "**/.terraform.lock.hcl",
}

// sourceDir is one directory of the repository holding Terraform files.
type sourceDir struct {
	dir   string   // repo-relative, "/"-separated, "." for the root
	files []string // names of its *.tf, *.tf.json and *.tofu files
	// localSource: a file mentions a local path ("./…", "../…"), so the
	// dir may call a local module and is worth parsing.
	localSource bool
	// noFileCalls: the scan read every file and none may call a file
	// function; false when unknown (a tree from ci start).
	noFileCalls bool
}

func isTerraformFile(name string) bool {
	return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json") || strings.HasSuffix(name, ".tofu")
}

// skipDir reports whether discovery stays out of a directory: hidden ones
// (.git, .terraform, .strata, …) and the state dir of workspaces.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "terraform.tfstate.d"
}

// scanTree lists every directory under root that holds Terraform files,
// sorted by dir. Each directory is read once; subtrees are read in
// parallel. Symbolic links to directories are not followed: what one links
// to is either elsewhere in the repository, found there, or outside it,
// where strata never runs (a dir the config names is checked by
// resolvesInside).
func scanTree(root string) ([]sourceDir, error) {
	if _, err := os.ReadDir(root); err != nil {
		return nil, err
	}
	var (
		mu  sync.Mutex
		out []sourceDir
		wg  sync.WaitGroup
	)
	sem := make(chan struct{}, 8)
	var walk func(rel string)
	walk = func(rel string) {
		defer wg.Done()
		sem <- struct{}{}
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		<-sem
		if err != nil {
			return
		}
		var files []string
		for _, e := range entries {
			name := e.Name()
			switch {
			case e.IsDir():
				if !skipDir(name) {
					child := name
					if rel != "." {
						child = rel + "/" + name
					}
					wg.Add(1)
					go walk(child)
				}
			case isTerraformFile(name):
				files = append(files, name)
			}
		}
		if len(files) > 0 {
			sd := sourceDir{dir: rel, files: files}
			sd.localSource, sd.noFileCalls = scanSources(filepath.Join(root, filepath.FromSlash(rel)), files)
			mu.Lock()
			out = append(out, sd)
			mu.Unlock()
		}
	}
	wg.Add(1)
	walk(".")
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out, nil
}

// expandPattern rewrites a global file pattern for one dir as Terrateam
// does: `**/x` and `*x` are relative to the dir, ${DIR} and ${WORKSPACE}
// are substituted. The result is a repo-relative doublestar pattern; neg
// reports a leading `!`.
func expandPattern(p, dir, workspace string, global bool) (pattern string, neg bool) {
	if strings.HasPrefix(p, "!") {
		neg, p = true, p[1:]
	}
	if global {
		switch {
		case strings.HasPrefix(p, "**/"):
			p = "${DIR}/" + p[3:]
		case strings.HasPrefix(p, "*"):
			p = "${DIR}/" + p
		}
	}
	d := quoteMeta(dir)
	if dir == "." {
		d = ""
	}
	p = substituteVars(p, d, quoteMeta(workspace))
	p = strings.TrimPrefix(p, "/")
	return p, neg
}

// substituteVars replaces ${DIR} and ${WORKSPACE} in p in one pass, so a
// dir named `x${WORKSPACE}` stays that dir. Every unit's patterns pass
// here at load, so it builds no strings.Replacer (a trie of its own each
// time).
func substituteVars(p, dir, workspace string) string {
	i := strings.Index(p, "${")
	if i < 0 {
		return p
	}
	var b strings.Builder
	for ; i >= 0; i = strings.Index(p, "${") {
		b.WriteString(p[:i])
		p = p[i:]
		switch {
		case strings.HasPrefix(p, "${DIR}"):
			b.WriteString(dir)
			p = p[len("${DIR}"):]
		case strings.HasPrefix(p, "${WORKSPACE}"):
			b.WriteString(workspace)
			p = p[len("${WORKSPACE}"):]
		default:
			b.WriteString("${")
			p = p[2:]
		}
	}
	b.WriteString(p)
	return b.String()
}

// metaQuoter escapes what doublestar reads as pattern syntax: `\` (its
// escape), `*`, `?`, `[`, `]`, `{`, `}`, and `!`, which a pattern list
// reads as negation when it comes first.
var metaQuoter = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`,
	"{", `\{`, "}", `\}`, "!", `\!`)

// quoteMeta turns a literal path into a doublestar pattern matching only
// itself. A dir is pasted into its file patterns, and a dir named `e[1]`
// or `c{d}` pasted as it is would be a pattern for other names (e1, or
// cd): its own files would never match, and the dir would be no root
// and never modified. doublestar v4 has no exported QuoteMeta.
func quoteMeta(s string) string {
	return metaQuoter.Replace(s)
}

// MatchFilePatterns reports whether file (repo-relative) matches the
// patterns: some positive pattern matches and no `!` pattern does.
func MatchFilePatterns(patterns []string, file, dir, workspace string, global bool) bool {
	return compilePatterns(patterns, dir, workspace, global).match(file)
}

// filePatterns are file patterns expanded for one dirspace, split by sign.
type filePatterns struct {
	pos, neg []string
}

func compilePatterns(patterns []string, dir, workspace string, global bool) filePatterns {
	var f filePatterns
	for _, raw := range patterns {
		p, neg := expandPattern(raw, dir, workspace, global)
		if neg {
			f.neg = append(f.neg, p)
		} else {
			f.pos = append(f.pos, p)
		}
	}
	return f
}

// match: some positive pattern matches the file and no `!` pattern does.
func (f filePatterns) match(file string) bool {
	matched := false
	for _, p := range f.pos {
		if matchPath(p, file) {
			matched = true
			break
		}
	}
	if !matched {
		return false
	}
	for _, p := range f.neg {
		if matchPath(p, file) {
			return false
		}
	}
	return true
}

// scanSources reads a dir's Terraform files while the tree is scanned:
// localSource reports a mention of a local path, so that
// terraform-config-inspect parses only dirs that may call a local module;
// noFileCalls reports that no file may call a file function, so that
// change detection does not read them again (docs/behaviour.md#files-a-unit-reads).
func scanSources(dir string, files []string) (localSource, noFileCalls bool) {
	noFileCalls = true
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			noFileCalls = false
			continue
		}
		if noFileCalls && reads.MayCall(b) {
			noFileCalls = false
		}
		if !strings.HasSuffix(f, ".tofu") && (bytes.Contains(b, []byte(`"./`)) || bytes.Contains(b, []byte(`"../`))) {
			localSource = true
		}
	}
	return localSource, noFileCalls
}

// localModuleDirs returns the repo-relative dirs of the local modules a
// module dir calls (`source = "../modules/x"`).
func (p *Project) localModuleDirs(sd sourceDir) []string {
	if !sd.localSource {
		return nil
	}
	mod := p.module(sd.dir)
	if mod == nil {
		return nil
	}
	var out []string
	for _, call := range mod.ModuleCalls {
		if !strings.HasPrefix(call.Source, "./") && !strings.HasPrefix(call.Source, "../") {
			continue
		}
		target := path.Clean(path.Join(sd.dir, call.Source))
		if target == ".." || strings.HasPrefix(target, "../") {
			continue
		}
		out = append(out, target)
	}
	sort.Strings(out)
	return out
}

// moduleCalls finds local module calls of many dirs in parallel.
func (p *Project) moduleCalls(dirs []sourceDir) map[string][]string {
	out := make(map[string][]string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan sourceDir)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sd := range work {
				if calls := p.localModuleDirs(sd); len(calls) > 0 {
					mu.Lock()
					out[sd.dir] = calls
					mu.Unlock()
				}
			}
		}()
	}
	for _, sd := range dirs {
		if sd.localSource {
			work <- sd
		}
	}
	close(work)
	wg.Wait()
	return out
}

// warnUninspectable warns about each module dir terraform-config-inspect
// could not read. Loading goes on without what strata would have read there
// (local module calls, declared variables and outputs); the engine reports
// what is wrong with the module when it runs there.
func (p *Project) warnUninspectable(c *config.Collector) {
	var dirs []string
	for dir, mi := range p.modules {
		if mi.err != nil {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		// The warning is the module's, not the config's: it names the
		// file it is about, with no line (the library that failed to
		// read it gives none).
		err := p.modules[dir].err
		file, what := dir, err.Error()
		var ie *engines.InspectError
		if errors.As(err, &ie) {
			if ie.File != "" {
				file = relTo(p.Root, ie.File)
			}
			what = fmt.Sprintf("strata cannot read it (%s)", ie.Err)
		}
		c.Diags = append(c.Diags, config.Diagnostic{Severity: config.SeverityWarning, File: file,
			Message: fmt.Sprintf("module %s: %s; strata goes on without its module calls, variables and outputs, and the engine reports the problem when it runs there", dir, what)})
	}
}

// dirKeyInside reports whether a dirs key, exact or glob, stays inside the
// repository, and reports an error at the key when it has a ".." segment.
// Even a ".." that comes back down (a/../b) is refused: the engine would
// read it through whatever a links to, and a dir is named one way only.
func dirKeyInside(e *config.MapEntry[config.Dir], c *config.Collector) bool {
	for _, seg := range strings.Split(strings.TrimSuffix(e.Key, "/"), "/") {
		if seg == ".." {
			c.Errorf(e.KeyPos, "dirs."+e.Key, `found %q, which has a ".." segment; expected a dir inside the repository, relative to its root, without ".."`, e.Key)
			return false
		}
	}
	return true
}

// resolvesInside returns a function reporting whether an existing dir that
// a dirs key names resolves, symbolic links followed, inside the
// repository; when it does not, the function reports an error at the key,
// for the engine would run there and write its state outside.
func (p *Project) resolvesInside(c *config.Collector) func(dir string, e *config.MapEntry[config.Dir]) bool {
	realRoot, err := filepath.EvalSymlinks(p.Root)
	if err != nil {
		realRoot = p.Root
	}
	return func(dir string, e *config.MapEntry[config.Dir]) bool {
		real, err := filepath.EvalSymlinks(absDir(p.Root, dir))
		if err != nil {
			c.Errorf(e.KeyPos, "dirs."+e.Key, "found %q, which cannot be resolved (%v); expected a dir inside the repository", e.Key, err)
			return false
		}
		if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			c.Errorf(e.KeyPos, "dirs."+e.Key, "found %q, which resolves through a symbolic link to %s, outside the repository; expected a dir inside the repository", e.Key, real)
			return false
		}
		return true
	}
}

var statFn = os.Stat

// absDir turns a repo-relative dir into a path under root.
func absDir(root, dir string) string {
	return filepath.Join(root, filepath.FromSlash(dir))
}

// relTo returns p relative to root with '/' separators, or p itself.
func relTo(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// matchPath matches a repo-relative file against a pattern, comparing a
// literal leading dir of the pattern before calling doublestar.
func matchPath(pattern, file string) bool {
	lit := literalPrefix(pattern)
	if !strings.HasPrefix(file, lit) {
		if strings.HasPrefix(file+"/", lit) {
			// `a/**` matches `a` itself.
			ok, _ := doublestar.Match(pattern, file)
			return ok
		}
		return false
	}
	if i := strings.LastIndexByte(lit, '/'); i >= 0 {
		pattern, file = pattern[i+1:], file[i+1:]
	}
	ok, _ := doublestar.Match(pattern, file)
	return ok
}

// literalPrefix is the part of a pattern before its first metacharacter.
func literalPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, "*?[{\\"); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// FilePatterns returns the dirspace's when_modified.file_patterns as
// repo-relative doublestar patterns: ${DIR} and ${WORKSPACE} substituted,
// Terrateam's rewrite of global patterns applied, a leading `!` kept.
func (d *Dirspace) FilePatterns() []string {
	out := make([]string, len(d.WhenModified.FilePatterns))
	for i, raw := range d.WhenModified.FilePatterns {
		p, neg := expandPattern(raw, d.Dir, d.Workspace, d.WhenModified.Global)
		if neg {
			p = "!" + p
		}
		out[i] = p
	}
	return out
}

// LocalModules returns the dirs of the local modules a dir calls,
// transitively, sorted.
func (p *Project) LocalModules(dir string) []string {
	seen := map[string]bool{}
	var visit func(d string)
	visit = func(d string) {
		for _, m := range p.ModuleCalls[d] {
			if !seen[m] && m != dir {
				seen[m] = true
				visit(m)
			}
		}
	}
	visit(dir)
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// RootsBelow returns the dirs of root modules strictly below dir, from the
// sorted dirspaces by binary search: the content digest of every unit
// asks, so it must not scan the whole repository each time.
func (p *Project) RootsBelow(dir string) []string {
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	i := sort.Search(len(p.Dirspaces), func(i int) bool { return p.Dirspaces[i].Dir >= prefix })
	var out []string
	for ; i < len(p.Dirspaces) && strings.HasPrefix(p.Dirspaces[i].Dir, prefix); i++ {
		d := p.Dirspaces[i].Dir
		if d != dir && d != "." && (len(out) == 0 || out[len(out)-1] != d) {
			out = append(out, d)
		}
	}
	return out
}
