package stacks

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/strata-iac/strata/internal/reads"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/stacks/config"
)

// UnitRead is one file, or fileset glob, that a root module reads, itself
// or through a local module it calls (docs/behaviour.md#files-a-unit-reads).
type UnitRead struct {
	reads.Read
	// Module is the dir of the module whose source holds the read: the
	// root module's own dir, or a local module's.
	Module string
}

// readsInfo is a dir's file function calls, parsed once.
type readsInfo struct {
	once sync.Once
	mod  *reads.Module
}

// moduleReads parses a dir's Terraform files for file function calls,
// once per project: change detection and each unit's content digest
// share it.
func (p *Project) moduleReads(dir string) *reads.Module {
	p.readsMu.Lock()
	if p.reads == nil {
		p.reads = map[string]*readsInfo{}
	}
	ri, ok := p.reads[dir]
	if !ok {
		ri = &readsInfo{}
		p.reads[dir] = ri
	}
	p.readsMu.Unlock()
	ri.once.Do(func() {
		sd := p.sourceDir(dir)
		if sd == nil || sd.noFileCalls {
			ri.mod = &reads.Module{Dir: dir}
			return
		}
		ri.mod = reads.Parse(p.Root, dir, sd.files)
	})
	return ri.mod
}

// sourceDir returns a dir as the scan found it, or nil.
func (p *Project) sourceDir(dir string) *sourceDir {
	i := sort.Search(len(p.sds), func(i int) bool { return p.sds[i].dir >= dir })
	if i < len(p.sds) && p.sds[i].dir == dir {
		return &p.sds[i]
	}
	return nil
}

// parseReads parses many dirs at once, four at a time.
func (p *Project) parseReads(dirs []string) {
	work := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				p.moduleReads(d)
			}
		}()
	}
	for _, d := range dirs {
		work <- d
	}
	close(work)
	wg.Wait()
}

// Reads returns what a root module dir reads, itself and through the
// local modules it calls, transitively, each read resolved as the engine
// in dir would open it; and the reads it cannot follow.
func (p *Project) Reads(dir string) ([]UnitRead, []reads.Problem) {
	var out []UnitRead
	var probs []reads.Problem
	for _, m := range append([]string{dir}, p.LocalModules(dir)...) {
		rs, ps := p.moduleReads(m).Resolve(p.Root, dir)
		for _, r := range rs {
			out = append(out, UnitRead{Read: r, Module: m})
		}
		probs = append(probs, ps...)
	}
	return out, probs
}

// ReadPatterns returns what a root module dir reads as repo-relative
// doublestar patterns, for its content digest: a file's path quoted, a
// fileset's glob as it is.
func (p *Project) ReadPatterns(dir string) []string {
	rs, _ := p.Reads(dir)
	rs, _ = p.readsInside(rs)
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		q := r.Path
		if !r.Glob {
			q = quoteMeta(q)
		}
		if strings.HasPrefix(q, "!") {
			q = `\` + q // a file named "!…", not a negation
		}
		out = append(out, q)
	}
	return out
}

// readsInside keeps the reads whose literal part, symbolic links
// resolved, stays in the repository, and makes the others problems: a
// link must not take the digest out of it.
func (p *Project) readsInside(rs []UnitRead) ([]UnitRead, []reads.Problem) {
	base, err := safepath.NewBase(p.Root)
	if err != nil {
		return nil, nil
	}
	var in []UnitRead
	var out []reads.Problem
	for _, r := range rs {
		lit := r.Path
		if r.Glob {
			lit = parentKey(literalPrefix(r.Path) + "x")
		}
		if lit == "" {
			lit = "."
		}
		if _, err := base.Join(filepath.FromSlash(lit)); err != nil {
			out = append(out, reads.Problem{Kind: reads.Outside, Pos: r.Pos, Func: r.Func, Msg: fmt.Sprintf("%s resolves through a symbolic link outside the repository", r.Path)})
			continue
		}
		in = append(in, r)
	}
	return in, out
}

// ReadDiagnostics are the check warnings about reads change detection
// cannot follow (docs/behaviour.md#files-a-unit-reads), of every root module
// and the local modules they call, each at the read's file:line:col,
// once.
func (p *Project) ReadDiagnostics() config.Diagnostics {
	dirs := p.readDirs()
	p.parseReads(dirs)
	seen := map[string]bool{}
	var out config.Diagnostics
	add := func(pr reads.Problem) {
		d := config.Diagnostic{Severity: config.SeverityWarning, File: pr.Pos.File, Pos: config.Pos{Line: pr.Pos.Line, Col: pr.Pos.Col}, Message: readProblemText(pr)}
		if k := d.String(); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	roots := map[string]bool{}
	for _, ds := range p.Dirspaces {
		if roots[ds.Dir] {
			continue
		}
		roots[ds.Dir] = true
		rs, probs := p.Reads(ds.Dir)
		_, outside := p.readsInside(rs)
		for _, pr := range append(probs, outside...) {
			add(pr)
		}
	}
	out.Sort()
	return out
}

func readProblemText(pr reads.Problem) string {
	switch pr.Kind {
	case reads.Unresolved:
		return fmt.Sprintf("%s() reads a path strata cannot know without evaluating it (%s), so a change to that file modifies no unit; name the file in when_modified.file_patterns", pr.Func, pr.Msg)
	case reads.Outside:
		return fmt.Sprintf("%s() reads a path outside the repository (%s); strata does not follow it", pr.Func, pr.Msg)
	default:
		return fmt.Sprintf("strata does not look for the files this file reads: %s; name them in when_modified.file_patterns", pr.Msg)
	}
}

// readDirs returns the dirs of the root modules and of every local module
// they call, sorted.
func (p *Project) readDirs() []string {
	set := map[string]bool{}
	for _, ds := range p.Dirspaces {
		if !set[ds.Dir] {
			set[ds.Dir] = true
			for _, m := range p.LocalModules(ds.Dir) {
				set[m] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// readRef is one read by one dirspace.
type readRef struct {
	ds *Dirspace
	r  UnitRead
}

// readIndex finds the dirspaces that read a changed file: literal paths
// by the path, fileset globs filed under the literal dir they start with.
type readIndex struct {
	exact map[string][]readRef
	globs map[string][]readRef
}

// newReadIndex parses and resolves the reads of the dirspaces with
// autoplan on.
func (p *Project) newReadIndex(autoplan map[string][]*Dirspace) *readIndex {
	ix := &readIndex{exact: map[string][]readRef{}, globs: map[string][]readRef{}}
	dirs := make([]string, 0, len(autoplan))
	for d := range autoplan {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	need := map[string]bool{}
	for _, d := range dirs {
		need[d] = true
		for _, m := range p.LocalModules(d) {
			need[m] = true
		}
	}
	all := make([]string, 0, len(need))
	for d := range need {
		all = append(all, d)
	}
	p.parseReads(all)
	for _, d := range dirs {
		rs, _ := p.Reads(d)
		for _, r := range rs {
			for _, ds := range autoplan[d] {
				ref := readRef{ds: ds, r: r}
				if r.Glob {
					k := parentKey(literalPrefix(r.Path) + "x")
					ix.globs[k] = append(ix.globs[k], ref)
				} else {
					ix.exact[r.Path] = append(ix.exact[r.Path], ref)
				}
			}
		}
	}
	return ix
}

// readers calls fn with each read of file.
func (ix *readIndex) readers(file string, fn func(readRef)) {
	for _, ref := range ix.exact[file] {
		fn(ref)
	}
	for key := file; ; key = parentKey(key) {
		for _, ref := range ix.globs[key] {
			if ref.r.Match(file) {
				fn(ref)
			}
		}
		if key == "" {
			return
		}
	}
}

// readWhy is the reason a read gives a unit: `read by <file>:<line>` for
// the root module's own read, `module <name> of <dir>` for a local
// module's (docs/behaviour.md#files-a-unit-reads).
func (p *Project) readWhy(ref readRef) string {
	if ref.r.Module == ref.ds.Dir {
		return fmt.Sprintf("read by %s:%d", ref.r.Pos.File, ref.r.Pos.Line)
	}
	return fmt.Sprintf("module %s of %s", p.callPath(ref.ds.Dir, ref.r.Module), ref.ds.Dir)
}

// callPath names the chain of module calls from a root module dir to a
// local module dir it calls, "a.b" for module "b" called by module "a";
// the module dir when no call names it.
func (p *Project) callPath(root, target string) string {
	type step struct{ dir, name string }
	seen := map[string]bool{root: true}
	queue := []step{{dir: root}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		mod := p.module(s.dir)
		if mod == nil {
			continue
		}
		names := make([]string, 0, len(mod.ModuleCalls))
		for name := range mod.ModuleCalls {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			src := mod.ModuleCalls[name].Source
			if !strings.HasPrefix(src, "./") && !strings.HasPrefix(src, "../") {
				continue
			}
			d := path.Clean(path.Join(s.dir, src))
			if seen[d] {
				continue
			}
			seen[d] = true
			full := name
			if s.name != "" {
				full = s.name + "." + name
			}
			if d == target {
				return full
			}
			queue = append(queue, step{dir: d, name: full})
		}
	}
	return target
}
