package config

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/strata-iac/strata/internal/spell"
)

// The config decoder walks a yaml.Node tree into the config types by
// reflection. yaml's own decoder stops at the first structural surprise and
// reports lines without columns; strata must report every error of a file at
// once, each at line:col and naming its key, so it decodes the tree itself.
//
// Struct tags drive it, and the JSON Schema and the README reference are
// generated from the same tags, so the three cannot drift apart:
//
//	yaml:"name"        the key
//	cfg:"required"     the key must be present
//	cfg:"ignored"      a Terrateam key strata accepts and does not act on
//	cfg:"unenforced"   a key strata validates fully and does not act on yet
//	cfg:"deprecated"   accepted with a deprecation warning (doc says instead)
//	cfg:"ext"          a strata extension of Terrateam's schema
//	enum:"a,b"         allowed values of a string
//	doc:"…"            one line for the reference and the schema
//
// A field named Pos of type Pos receives the position of the value's node.

// nodeDecoder is implemented by config types that decode themselves
// (scalars with positions, ordered maps, tagged unions).
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, key string)
}

type decoder struct {
	*Collector
	// aliased counts the nodes decoded through aliases; aliasDepth is how
	// many aliases enclose the node being decoded, alias the outermost,
	// which the config uses where it is decoded, and aliasKey its key.
	aliased    int
	aliasDepth int
	alias      *yaml.Node
	aliasKey   string
	// exhausted is set once aliased passes maxAliasedNodes: decoding stops,
	// and the diagnostics after the first exhaustedAt, which would be about
	// values left undecoded, are dropped.
	exhausted   bool
	exhaustedAt int
}

// maxAliasedNodes bounds the nodes the decoder visits through aliases and
// merge keys. A YAML file is small but its aliases can name one another, each
// standing for the whole of the one before, so that a few kilobytes stand
// for billions of nodes ("billion laughs"). yaml's own guard applies only
// when yaml decodes into Go values, not to the node tree strata walks
// itself. Two hundred thousand nodes is far more than any config shares
// through anchors, and decoding them costs a few megabytes.
const maxAliasedNodes = 200_000

// enter accounts for decoding n, following it when it is an alias. It
// returns the node to decode and a function to call when done with it, or
// ok false when the alias budget is spent and decoding must stop.
func (d *decoder) enter(n *yaml.Node, key string) (resolved *yaml.Node, leave func(), ok bool) {
	if d.exhausted {
		return nil, nil, false
	}
	isAlias := n != nil && n.Kind == yaml.AliasNode
	if isAlias || d.aliasDepth > 0 {
		d.aliased++
		if d.aliased > maxAliasedNodes {
			at, atKey := d.alias, d.aliasKey
			if d.aliasDepth == 0 {
				at, atKey = n, key
			}
			d.exhausted, d.exhaustedAt = true, len(d.Diags)+1
			d.Errorf(posOf(at), atKey, "too many alias expansions: at alias *%s, the config's aliases have expanded to more than %d values; expected anchors and aliases that share parts of the config, not ones that multiply it", at.Value, maxAliasedNodes)
			return nil, nil, false
		}
	}
	if !isAlias {
		return n, func() {}, true
	}
	if d.aliasDepth == 0 {
		d.alias, d.aliasKey = n, key
	}
	d.aliasDepth++
	return resolve(n), func() { d.aliasDepth-- }, true
}

func posOf(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// kindName says what a node is, in the words of an error message.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!int":
			return "a number (" + n.Value + ")"
		case "!!float":
			return "a number (" + n.Value + ")"
		}
		return strconv.Quote(n.Value)
	}
	return "an empty document"
}

func joinKey(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

func indexKey(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// resolve follows aliases so anchors and merges behave as YAML users expect.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

var (
	posType         = reflect.TypeOf(Pos{})
	nodeDecoderType = reflect.TypeOf((*nodeDecoder)(nil)).Elem()
)

func (d *decoder) decode(n *yaml.Node, v reflect.Value, key string) {
	n, leave, ok := d.enter(n, key)
	if !ok {
		return
	}
	defer leave()
	if v.CanAddr() && decodesItself(v.Type()) {
		if isNull(n) {
			if r, ok := v.Addr().Interface().(interface{ nullError() string }); ok && n != nil {
				d.Errorf(posOf(n), key, "%s", r.nullError())
			}
			return
		}
		v.Addr().Interface().(nodeDecoder).decodeNode(d, n, key)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), key)
	case reflect.Struct:
		d.decodeStruct(n, v, key, nil)
	case reflect.Slice:
		d.decodeSlice(n, v, key)
	default:
		panic("stacks: no decoder for config type " + v.Type().String())
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, key string) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.Errorf(posOf(n), key, "expected a list, found %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, s.Index(i), indexKey(key, i))
	}
	v.Set(s)
}

// field describes one config key of a struct.
type field struct {
	name       string
	index      int
	required   bool
	ignored    bool
	unenforced bool
	deprecated bool
	ext        bool
	enum       []string
	doc        string
}

// structInfo is what the decoder knows of one struct type: its config
// keys, by name and in name order, and where its Pos field is.
type structInfo struct {
	fields []field
	byName map[string]int // key -> index in fields
	names  []string       // the keys, sorted, for "expected one of"
	sorted []int          // indexes in fields, ordered by key
	pos    []int          // index of the Pos field, or nil
}

// The decoder's caches, by type: a config decodes thousands of values of a
// few types.
var (
	structInfos  sync.Map // reflect.Type -> *structInfo
	selfDecoders sync.Map // reflect.Type -> bool: whether *T is a nodeDecoder
)

func structInfoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{fields: readFields(t), byName: map[string]int{}}
	for i, f := range si.fields {
		// Variants of a union may share a key; without a variant chosen,
		// the last field of a key decodes it.
		si.byName[f.name] = i
		si.sorted = append(si.sorted, i)
	}
	sort.SliceStable(si.sorted, func(a, b int) bool { return si.fields[si.sorted[a]].name < si.fields[si.sorted[b]].name })
	for _, i := range si.sorted {
		if name := si.fields[i].name; len(si.names) == 0 || si.names[len(si.names)-1] != name {
			si.names = append(si.names, name)
		}
	}
	if f, ok := t.FieldByName("Pos"); ok && f.Type == posType {
		si.pos = f.Index
	}
	structInfos.Store(t, si)
	return si
}

// structFields are a struct type's config fields, in declaration order:
// the decoder's own, to read and never reorder.
func structFields(t reflect.Type) []field { return structInfoOf(t).fields }

// decodesItself reports whether values of type t decode through their
// pointer's decodeNode.
func decodesItself(t reflect.Type) bool {
	if ok, found := selfDecoders.Load(t); found {
		return ok.(bool)
	}
	ok := reflect.PointerTo(t).Implements(nodeDecoderType)
	selfDecoders.Store(t, ok)
	return ok
}

func readFields(t reflect.Type) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name := sf.Tag.Get("yaml")
		if name == "" || name == "-" {
			continue
		}
		f := field{name: name, index: i, doc: sf.Tag.Get("doc")}
		for _, opt := range strings.Split(sf.Tag.Get("cfg"), ",") {
			switch opt {
			case "required":
				f.required = true
			case "ignored":
				f.ignored = true
			case "unenforced":
				f.unenforced = true
			case "deprecated":
				f.deprecated = true
			case "ext":
				f.ext = true
			}
		}
		if e := sf.Tag.Get("enum"); e != "" {
			f.enum = strings.Split(e, ",")
		}
		fs = append(fs, f)
	}
	return fs
}

// decodeStruct decodes a mapping into a struct. allowed, when not nil,
// narrows the keys to those of one variant of a tagged union.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, key string, allowed map[string]bool) {
	if isNull(n) {
		return
	}
	si := structInfoOf(v.Type())
	if si.pos != nil {
		v.FieldByIndex(si.pos).Set(reflect.ValueOf(posOf(n)))
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(posOf(n), key, "expected a map, found %s", kindName(n))
		return
	}
	names, byName := si.names, si.byName
	if allowed != nil {
		names, byName = si.variantKeys(allowed)
	}
	// Keys seen: a field's by its index, others (unknown, reported each
	// time) by name.
	var seenBuf [64]bool
	seen := seenBuf[:]
	if len(si.fields) > len(seenBuf) {
		seen = make([]bool, len(si.fields))
	}
	var seenOther map[string]bool
	for i := 0; i+1 < len(n.Content) && !d.exhausted; i += 2 {
		kn, vn := resolve(n.Content[i]), n.Content[i+1]
		if kn.Tag == "!!merge" {
			mn, leave, ok := d.enter(vn, key)
			if !ok {
				return
			}
			d.decodeStruct(mn, v, key, allowed)
			leave()
			continue
		}
		k := kn.Value
		idx, known := byName[k]
		if known && seen[idx] || !known && seenOther[k] {
			d.Errorf(posOf(kn), joinKey(key, k), "key %q appears twice; expected each key once", k)
			continue
		}
		if !known {
			if seenOther == nil {
				seenOther = map[string]bool{}
			}
			seenOther[k] = true
			d.Errorf(posOf(kn), joinKey(key, k), "unknown key %q; expected one of: %s%s", k, strings.Join(names, ", "), suggest(k, names))
			continue
		}
		seen[idx] = true
		f := si.fields[idx]
		fkey := joinKey(key, k)
		if f.ignored {
			d.WarnOnce("ignored:"+genericKey(fkey), posOf(kn), fkey,
				"accepted and ignored: strata does not act on %q", k)
		}
		if f.unenforced {
			d.WarnOnce("unenforced:"+genericKey(fkey), posOf(kn), fkey,
				"checked, not yet enforced: strata validates %q and does not act on it yet", k)
		}
		fv := v.Field(f.index)
		d.decode(vn, fv, fkey)
		if len(f.enum) > 0 {
			d.checkEnum(resolve(vn), fv, fkey, f.enum)
		}
	}
	d.reportMissing(n, si, byName, seen, key)
}

// variantKeys returns the sorted key names and the field index by name of
// the fields one variant of a tagged union allows.
func (si *structInfo) variantKeys(allowed map[string]bool) (names []string, byName map[string]int) {
	// A union's variants may give one key different types: only the
	// allowed variant's fields count.
	byName = map[string]int{}
	for i, f := range si.fields {
		if allowed[f.name] {
			byName[f.name] = i
		}
	}
	for _, name := range si.names {
		if _, ok := byName[name]; ok {
			names = append(names, name)
		}
	}
	return names, byName
}

// reportMissing reports each required key of the mapping n not seen.
func (d *decoder) reportMissing(n *yaml.Node, si *structInfo, byName map[string]int, seen []bool, key string) {
	for _, idx := range si.sorted {
		f := si.fields[idx]
		if j, ok := byName[f.name]; f.required && ok && j == idx && !seen[idx] {
			d.Errorf(posOf(n), key, "missing required key %q", f.name)
		}
	}
}

func (d *decoder) checkEnum(n *yaml.Node, v reflect.Value, key string, enum []string) {
	s, ok := v.Interface().(String)
	if !ok || !s.Set {
		return
	}
	for _, e := range enum {
		if s.Value == e {
			return
		}
	}
	d.Errorf(posOf(n), key, "found %q; expected one of: %s", s.Value, strings.Join(enum, ", "))
}

// genericKey drops list indexes and map names from a key path so that an
// ignored key warns once however many times it occurs
// (workflows[3].lock_policy -> workflows[].lock_policy).
func genericKey(key string) string {
	var b strings.Builder
	skip := false
	for _, r := range key {
		switch {
		case r == '[':
			skip = true
			b.WriteString("[]")
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// suggest proposes the nearest known key for a misspelt one.
func suggest(k string, names []string) string {
	best := spell.Typo(k, names)
	if best == "" {
		return ""
	}
	return " (did you mean " + strconv.Quote(best) + "?)"
}

func reflectValue(ptr any) reflect.Value { return reflect.ValueOf(ptr).Elem() }
