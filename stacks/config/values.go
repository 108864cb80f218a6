package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The config value types below keep the position of what they decode, so
// that every diagnostic can point at its line and column.

// String is a config string with its position. Numbers and booleans written
// where a string is expected keep their source text (`version: 1.50` is
// "1.50"), as a YAML user would expect.
type String struct {
	Value string
	Pos   Pos
	Set   bool
	style yaml.Style
}

func (s *String) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind != yaml.ScalarNode {
		d.Errorf(posOf(n), key, "expected a string, found %s", kindName(n))
		return
	}
	*s = String{Value: n.Value, Pos: posOf(n), Set: true, style: n.Style}
}

// Bool is a config boolean with its position.
type Bool struct {
	Value bool
	Pos   Pos
	Set   bool
}

func (b *Bool) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.Errorf(posOf(n), key, "expected true or false, found %s", kindName(n))
		return
	}
	v, _ := strconv.ParseBool(strings.ToLower(n.Value))
	*b = Bool{Value: v, Pos: posOf(n), Set: true}
}

// Get returns the value, or def when the key was not written.
func (b Bool) Get(def bool) bool {
	if !b.Set {
		return def
	}
	return b.Value
}

// Int is a config integer with its position.
type Int struct {
	Value int
	Pos   Pos
	Set   bool
}

func (i *Int) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.Errorf(posOf(n), key, "expected a whole number, found %s", kindName(n))
		return
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		d.Errorf(posOf(n), key, "expected a whole number, found %s", kindName(n))
		return
	}
	*i = Int{Value: v, Pos: posOf(n), Set: true}
}

// Float is a config number with its position.
type Float struct {
	Value float64
	Pos   Pos
	Set   bool
}

func (f *Float) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		d.Errorf(posOf(n), key, "expected a number, found %s", kindName(n))
		return
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		d.Errorf(posOf(n), key, "expected a number, found %s", kindName(n))
		return
	}
	*f = Float{Value: v, Pos: posOf(n), Set: true}
}

// Ignored holds a Terrateam section strata accepts without acting on it; its
// content is not validated, only its presence recorded.
type Ignored struct {
	Pos Pos
	Set bool
}

func (i *Ignored) decodeNode(_ *decoder, n *yaml.Node, _ string) {
	*i = Ignored{Pos: posOf(n), Set: true}
}

// Map is a YAML mapping that keeps its keys' order and positions, so that
// listings are stable and errors can point at a key.
type Map[T any] struct {
	Pos     Pos
	Set     bool
	Entries []MapEntry[T]
}

// MapEntry is one key of a Map.
type MapEntry[T any] struct {
	Key    string
	KeyPos Pos
	Value  T
}

// Len returns the number of entries.
func (m *Map[T]) Len() int {
	if m == nil {
		return 0
	}
	return len(m.Entries)
}

// Lookup returns the entry for key.
func (m *Map[T]) Lookup(key string) (*MapEntry[T], bool) {
	if m == nil {
		return nil, false
	}
	for i := range m.Entries {
		if m.Entries[i].Key == key {
			return &m.Entries[i], true
		}
	}
	return nil, false
}

func (m *Map[T]) decodeNode(d *decoder, n *yaml.Node, key string) {
	m.Pos, m.Set = posOf(n), true
	if n.Kind != yaml.MappingNode {
		d.Errorf(posOf(n), key, "expected a map, found %s", kindName(n))
		return
	}
	seen := make(map[string]bool, len(n.Content)/2)
	m.Entries = slices.Grow(m.Entries, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content) && !d.exhausted; i += 2 {
		kn := resolve(n.Content[i])
		if kn.Kind != yaml.ScalarNode {
			d.Errorf(posOf(kn), key, "expected a name as key, found %s", kindName(kn))
			continue
		}
		if seen[kn.Value] {
			d.Errorf(posOf(kn), joinKey(key, kn.Value), "key %q appears twice; expected each key once", kn.Value)
			continue
		}
		seen[kn.Value] = true
		e := MapEntry[T]{Key: kn.Value, KeyPos: posOf(kn)}
		d.decode(n.Content[i+1], reflect.ValueOf(&e.Value).Elem(), joinKey(key, kn.Value))
		m.Entries = append(m.Entries, e)
	}
}

// Scalar is a value that must be a YAML scalar and keeps its source text:
// stack variables (`1.50` stays "1.50", `true` stays "true").
type Scalar struct {
	Value string
	Pos   Pos
}

func (s *Scalar) nullError() string {
	return "expected a string, number or boolean, found null; write '' for an empty value"
}

func (s *Scalar) decodeNode(d *decoder, n *yaml.Node, key string) {
	if n.Kind != yaml.ScalarNode {
		d.Errorf(posOf(n), key, "expected a string, number or boolean, found %s; variables are environment variables and hold scalars only", kindName(n))
		return
	}
	*s = Scalar{Value: n.Value, Pos: posOf(n)}
}

// Strings is the values of a list of Strings, positions dropped.
func Strings(ss []String) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Value
	}
	return out
}
