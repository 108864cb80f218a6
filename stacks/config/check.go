package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/spell"
	"github.com/strata-iac/strata/stacks/tagquery"
)

// checkConfig runs the checks that need only the config itself: references
// between stacks, tag queries, patterns, variables, engines. Checks that need
// the repository's dirs run when the project is built.
func checkConfig(cfg *Config, c *Collector) {
	if cfg.WhenModified != nil {
		checkWhenModified(cfg.WhenModified, "when_modified", c)
	}
	if cfg.Dirs != nil {
		for _, e := range cfg.Dirs.Entries {
			key := "dirs." + e.Key
			if e.Key == "" || strings.HasPrefix(e.Key, "/") {
				c.Errorf(e.KeyPos, key, "found %q; expected a dir relative to the repository root", e.Key)
			} else if !doublestar.ValidatePattern(e.Key) {
				c.Errorf(e.KeyPos, key, "found %q; expected a dir or a valid glob", e.Key)
			}
			if e.Value.WhenModified != nil {
				checkWhenModified(e.Value.WhenModified, key+".when_modified", c)
			}
			if e.Value.Workspaces != nil {
				for _, w := range e.Value.Workspaces.Entries {
					if why := unsafeName(w.Key); why != "" {
						c.Errorf(w.KeyPos, key+".workspaces", "found workspace name %q: %s; %s", w.Key, why, expectedName)
					}
					if w.Value.WhenModified != nil {
						checkWhenModified(w.Value.WhenModified, key+".workspaces."+w.Key+".when_modified", c)
					}
				}
			}
		}
	}
	for i, w := range cfg.Workflows {
		key := fmt.Sprintf("workflows[%d]", i)
		checkQuery(w.TagQuery, key+".tag_query", c)
		if w.Engine != nil {
			checkEngine(w.Engine, key+".engine", c)
		}
		checkStepArgs(w, key, c)
	}
	if cfg.Engine != nil {
		checkEngine(cfg.Engine, "engine", c)
	}
	checkLockPlatforms(cfg, c)
	if cfg.DefaultTFVersion.Set {
		checkVersion("terraform", cfg.DefaultTFVersion, "default_tf_version", c)
	}
	if cfg.ParallelRuns.Set && cfg.ParallelRuns.Value < 0 {
		c.Errorf(cfg.ParallelRuns.Pos, "parallel_runs", "found %d; expected a count of units, at least 0 (0: every ready unit at once)", cfg.ParallelRuns.Value)
	}
	if h := cfg.History; h != nil && h.Keep.Set && (h.Keep.Value < 1 || h.Keep.Value > 10000) {
		c.Errorf(h.Keep.Pos, "history.keep", "found %d; expected a count of runs from 1 to 10000", h.Keep.Value)
	}
	if cfg.Stacks != nil && cfg.Stacks.Names != nil {
		checkStacks(cfg.Stacks.Names, c)
	}
	checkControls(cfg, c)
	checkDestinations(cfg, c)
	checkHooks(cfg, c)
	checkDrift(cfg, c)
	checkGates(cfg, c)
}

func checkQuery(s String, key string, c *Collector) *tagquery.Query {
	q, err := tagquery.Parse(s.Value)
	if err != nil {
		c.Errorf(queryErrorPos(s, err), key, "%s", err)
		return nil
	}
	for _, w := range q.Warnings() {
		c.Warnf(s.Pos, key, "%s", w)
	}
	return q
}

// queryErrorPos points at the column of the error inside the query when the
// query is written on one line as a plain or quoted scalar.
func queryErrorPos(s String, err error) Pos {
	pe, ok := err.(*tagquery.ParseError)
	if !ok || s.Pos.IsZero() || strings.Contains(s.Value, "\n") || pe.Column < 1 {
		return s.Pos
	}
	switch s.style {
	case 0:
		return Pos{Line: s.Pos.Line, Col: s.Pos.Col + pe.Column - 1}
	case yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle:
		if !strings.ContainsAny(s.Value, "\\'\"") {
			return Pos{Line: s.Pos.Line, Col: s.Pos.Col + pe.Column}
		}
	}
	return s.Pos
}

func checkWhenModified(w *WhenModified, key string, c *Collector) {
	if w.FilePatterns != nil {
		for i, p := range *w.FilePatterns {
			pat := strings.TrimPrefix(p.Value, "!")
			pat = strings.NewReplacer("${DIR}", "d", "${WORKSPACE}", "w").Replace(pat)
			if pat == "" || !doublestar.ValidatePattern(pat) {
				c.Errorf(p.Pos, fmt.Sprintf("%s.file_patterns[%d]", key, i), "found %q; expected a glob pattern (** * ? [..] {a,b}), optionally starting with !", p.Value)
			}
		}
	}
	if w.DependsOn != nil && w.DependsOn.TagQuery.Set {
		checkQuery(w.DependsOn.TagQuery, key+".depends_on", c)
	}
}

func checkEngine(e *Engine, key string, c *Collector) {
	if e.Version.Set && e.TFVersion.Set {
		c.Errorf(e.TFVersion.Pos, key+".tf_version", "both version and tf_version are set; expected one (tf_version is the old name of version)")
	}
	if e.TFVersion.Set && (e.Name.Value == "terraform" || e.Name.Value == "tofu") {
		c.WarnOnce("deprecated:tf_version", e.TFVersion.Pos, key+".tf_version", "deprecated: write version instead of tf_version")
	}
	if e.Supported() {
		if v := e.VersionString(); v.Set {
			checkVersion(e.Name.Value, v, key+".version", c)
		}
	}
}

// checkLockPlatforms checks lock_platforms' platforms.
func checkLockPlatforms(cfg *Config, c *Collector) {
	if cfg.LockPlatforms == nil {
		return
	}
	for i, p := range *cfg.LockPlatforms {
		if !engineargs.ValidPlatform(p.Value) {
			c.Errorf(p.Pos, fmt.Sprintf("lock_platforms[%d]", i), "found %q; expected a platform as the engines name it, OS_ARCH such as linux_amd64 or darwin_arm64", p.Value)
		}
	}
}

// VersionString is the engine's version, written as version or tf_version.
func (e *Engine) VersionString() String {
	if e.Version.Set {
		return e.Version
	}
	return e.TFVersion
}

// checkVersion accepts what the engines package resolves: an exact
// version, a go-version constraint or `latest`; a value using ${var} is
// checked once substituted.
func checkVersion(name string, v String, key string, c *Collector) {
	if strings.Contains(v.Value, "$") {
		return
	}
	if _, err := engines.ParseSpec(name, v.Value); err != nil {
		var se *engines.SpecError
		if errors.As(err, &se) && se.Field == "version" {
			if strings.HasPrefix(se.Reason, "is ") {
				c.Errorf(v.Pos, key, "%q %s", v.Value, se.Reason)
			} else {
				c.Errorf(v.Pos, key, "%q: %s", v.Value, se.Reason)
			}
			return
		}
		c.Errorf(v.Pos, key, "found %q: %v", v.Value, err)
	}
}

var variableNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedVariable says why a stack variable name cannot be used, or "".
func reservedVariable(name string) string {
	upper := strings.ToUpper(name)
	switch {
	case name == "TF_VAR_":
		return "it names no input variable"
	case strings.HasPrefix(name, "TF_CLI_ARGS"), strings.HasPrefix(name, "TF_LOG"):
		return "terraform-exec reserves it"
	case name == "TF_INPUT", name == "TF_IN_AUTOMATION", name == "TF_REATTACH_PROVIDERS",
		name == "TF_APPEND_USER_AGENT", name == "TF_WORKSPACE", name == "TF_DISABLE_PLUGIN_TLS",
		name == "TF_SKIP_PROVIDER_VERIFY":
		return "terraform-exec reserves it"
	case name == "PATH", name == "HOME":
		return "it would replace the process's own " + name
	case strings.HasPrefix(upper, "STRATA_"), strings.HasPrefix(upper, "TERRATEAM_"):
		return "the STRATA_ and TERRATEAM_ prefixes are strata's own"
	}
	return ""
}

// expectedName says what a stack or workspace name may be.
const expectedName = "expected a name usable as one path segment: letters, digits and - _ . ~ $ & + : = @, not starting with -, and not . or .."

// unsafeName says why a stack or workspace name cannot be used, or "".
// Both names become file and directory names (run state, saved plans, var
// files, data dirs), so a name must stay one path element: terraform's own
// rule for workspace names (the name is a URL path segment that needs no
// escaping) rules out /, \, NUL, # and every other character outside a small
// set; "." and ".." are path segments of their own meaning. A leading - would
// read as a flag where the name is an argument of its own, as in `terraform
// workspace select NAME`. '#' separates the workspace from the stack in
// file names and unit IDs, so it must not occur in either name; '@' may, as
// terraform allows it in workspace names and a unit ID is only ever built,
// never split.
func unsafeName(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case name == "." || name == "..":
		return "it names a directory of its own"
	case strings.HasPrefix(name, "-"):
		return "it starts with -"
	case url.PathEscape(name) != name:
		for _, r := range name {
			if s := string(r); url.PathEscape(s) != s {
				return fmt.Sprintf("it contains %q", r)
			}
		}
	}
	return ""
}

// SafeName reports whether a stack or workspace name is one a config may
// use: a name read back from a file name is checked with it.
// An instance's name (`net[us]`) is one too
// (docs/behaviour.md#stack-instances).
func SafeName(name string) bool {
	if base, key, ok := SplitInstance(name); ok && key != "" {
		return unsafeName(base) == "" && ValidInstanceKey(key)
	}
	return unsafeName(name) == ""
}

// checkStacks reports stack definitions that are malformed or name stacks
// that are not defined.
func checkStacks(names *Map[StackDef], c *Collector) {
	r := newStackRefs(names, c)
	for _, e := range names.Entries {
		if why := unsafeName(e.Key); why != "" {
			c.Errorf(e.KeyPos, "stacks.names", "found stack name %q: %s; %s", e.Key, why, expectedName)
		}
		key := "stacks.names." + e.Key
		s := e.Value
		checkStackKind(&s, e.KeyPos, key, c)
		r.refs(s.Stacks, key+".stacks")
		if s.Stacks != nil {
			for i, ref := range *s.Stacks {
				if _, inst, ok := SplitInstance(ref.Value); ok && inst != "" {
					c.Errorf(ref.Pos, fmt.Sprintf("%s.stacks[%d]", key, i), "nests %s, one instance of a stack; expected a stack's name: a nested stack holds every instance of a stack, or, with for_each of its own, the instance of each of its keys", ref.Value)
				}
			}
		}
		if s.Stacks != nil && len(*s.Stacks) == 0 {
			c.Warnf(s.Pos, key+".stacks", "nests no stack: it has no units")
		}
		if s.Variables != nil {
			checkStackVariables(s.Variables, key, c)
		}
		if s.Engine != nil {
			checkEngine(s.Engine, key+".engine", c)
		}
		if s.ForEach != nil && e.Key == "default" {
			c.Errorf(s.ForEach.Pos, key+".for_each", "the default stack holds the dirspaces no other stack matches, once; expected for_each on another stack")
		}
		if s.ForEach != nil {
			for _, e := range s.ForEach.Instances {
				ikey := key + ".for_each." + e.Key
				if e.Value.Variables != nil {
					checkStackVariables(e.Value.Variables, ikey, c)
				}
				if e.Value.Engine != nil {
					checkEngine(e.Value.Engine, ikey+".engine", c)
				}
			}
		}
		if s.Rules != nil {
			checkStackRules(&s, key, r, c)
		}
		if s.Inputs != nil {
			for _, in := range s.Inputs.Entries {
				if in.Value.Stack.Set {
					r.ref(in.Value.Stack, key+".inputs."+in.Key)
				}
			}
		}
		if s.OnChange != nil {
			oc := s.OnChange
			c.WarnOnce("deprecated:on_change", oc.Pos, key+".on_change", "deprecated: on_change is the first stacks design; write rules (apply_after) instead")
			r.refs(oc.CanApplyAfter, key+".on_change.can_apply_after")
			r.refs(oc.ApplyAfter, key+".on_change.apply_after")
		}
	}
}

// stackRefs checks references to stacks against the stacks defined.
type stackRefs struct {
	defined map[string]*StackDef
	// list is the defined names, sorted, for error messages.
	list []string
	c    *Collector
}

// newStackRefs returns a checker of references to the stacks in names.
func newStackRefs(names *Map[StackDef], c *Collector) stackRefs {
	defined := map[string]*StackDef{}
	for i := range names.Entries {
		defined[names.Entries[i].Key] = &names.Entries[i].Value
	}
	list := make([]string, 0, len(defined))
	for n := range defined {
		list = append(list, n)
	}
	sort.Strings(list)
	return stackRefs{defined: defined, list: list, c: c}
}

// ref reports s at key when it names no defined stack, or an instance
// its stack's for_each does not have (docs/behaviour.md#stack-instances).
func (r stackRefs) ref(s String, key string) {
	name, inst, ok := SplitInstance(s.Value)
	if !ok {
		r.c.Errorf(s.Pos, key, "stack name %q; expected a stack (net) or one instance of it (net[eu])", s.Value)
		return
	}
	def, ok := r.defined[name]
	if !ok {
		r.c.Errorf(s.Pos, key, "unknown stack %q; expected one of: %s%s", name, spell.List(r.list), suggest(name, r.list))
		return
	}
	if inst != "" && def.ForEach != nil {
		if _, ok := def.ForEach.Lookup(inst); !ok {
			keys := def.ForEach.Keys()
			r.c.Errorf(s.Pos, key, "stack %s has no instance %q; expected one of its for_each keys: %s%s", name, inst, spell.List(keys), suggest(inst, keys))
		}
	}
}

// refs reports each element of l that names no defined stack.
func (r stackRefs) refs(l *[]String, key string) {
	if l == nil {
		return
	}
	for i, s := range *l {
		r.ref(s, fmt.Sprintf("%s[%d]", key, i))
	}
}

// checkStackKind reports a stack that is not exactly one of a leaf stack
// (tag_query) and a nested one (stacks), and a tag_query it cannot use.
func checkStackKind(s *StackDef, keyPos Pos, key string, c *Collector) {
	switch {
	case s.TagQuery != nil && s.Stacks != nil:
		c.Errorf(s.Pos, key, "has both tag_query and stacks; expected exactly one (tag_query for a leaf stack, stacks for a nested one)")
	case s.TagQuery == nil && s.Stacks == nil:
		c.Errorf(orPos(s.Pos, keyPos), key, "has neither tag_query nor stacks; expected exactly one (tag_query for a leaf stack, stacks for a nested one)")
	}
	if s.TagQuery != nil {
		if q := checkQuery(*s.TagQuery, key+".tag_query", c); q != nil && q.UsesTag("stack_name:") {
			c.Errorf(s.TagQuery.Pos, key+".tag_query", "a stack's tag_query is matched against dirspace tags and cannot use stack_name:")
		}
	}
}

// checkStackVariables reports stack variable names that are not valid
// identifiers or that are reserved.
func checkStackVariables(vars *Map[Scalar], key string, c *Collector) {
	for _, v := range vars.Entries {
		vkey := key + ".variables." + v.Key
		if !variableNameRE.MatchString(v.Key) {
			c.Errorf(v.KeyPos, vkey, "found %q; expected a name of letters, digits and _ not starting with a digit", v.Key)
		} else if why := reservedVariable(v.Key); why != "" {
			c.Errorf(v.KeyPos, vkey, "%q cannot be a stack variable: %s", v.Key, why)
		}
	}
}

// checkStackRules reports rules of s that name undefined stacks, carry a
// bad duration or contradict the stack's own auto_apply.
func checkStackRules(s *StackDef, key string, r stackRefs, c *Collector) {
	r.refs(s.Rules.PlanAfter, key+".rules.plan_after")
	r.refs(s.Rules.ApplyAfter, key+".rules.apply_after")
	r.refs(s.Rules.ModifiedBy, key+".rules.modified_by")
	for i, p := range s.Rules.Prerequisites {
		pkey := fmt.Sprintf("%s.rules.prerequisites[%d]", key, i)
		if p.Stack.Set {
			r.ref(p.Stack, pkey+".stack")
		}
		if p.SucceededWithin.Set {
			if _, err := ParseDuration(p.SucceededWithin.Value); err != nil {
				c.Errorf(p.SucceededWithin.Pos, pkey+".succeeded_within", "found %q; expected a duration such as 90m, 1h30m or 2d", p.SucceededWithin.Value)
			}
		}
	}
	if a, r := s.AutoApply, s.Rules.AutoApply; r.Set() && a.Set() && (a.On() != r.On() || a.Condition() != r.Condition()) {
		c.Errorf(s.AutoApply.Pos, key+".auto_apply", "is %s but rules.auto_apply is %s; expected one value (or only one of the keys)", a, r)
	}
}

func orPos(p, fallback Pos) Pos {
	if p.IsZero() {
		return fallback
	}
	return p
}
