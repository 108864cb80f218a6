package config

import (
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ForEach is a stack's `for_each` as written: its instances, each a key
// with what it adds to the stack, in the order written
// (docs/behaviour.md#stack-instances). A list of keys adds nothing.
type ForEach struct {
	Pos       Pos
	Set       bool
	Instances []MapEntry[Instance]
}

// Instance is what one `for_each` key adds to its stack: its own variables
// over the stack's, and an engine, auto_apply and targets that replace the
// stack's where given.
type Instance struct {
	Pos       Pos
	Variables *Map[Scalar] `yaml:"variables" cfg:"ext" doc:"environment variables of the instance's steps, over the stack's"`
	Engine    *Engine      `yaml:"engine" cfg:"ext" doc:"engine of the instance's units, instead of the stack's"`
	AutoApply AutoApply    `yaml:"auto_apply" cfg:"ext" doc:"auto_apply of the instance, instead of the stack's"`
	Targets   []String     `yaml:"targets" cfg:"ext" doc:"-target addresses of the instance's plans, instead of the stack's"`
}

// Keys are the instance keys, in the order written.
func (f *ForEach) Keys() []string {
	if f == nil {
		return nil
	}
	out := make([]string, len(f.Instances))
	for i, e := range f.Instances {
		out[i] = e.Key
	}
	return out
}

// Lookup returns the instance of key.
func (f *ForEach) Lookup(key string) (*MapEntry[Instance], bool) {
	if f == nil {
		return nil, false
	}
	for i := range f.Instances {
		if f.Instances[i].Key == key {
			return &f.Instances[i], true
		}
	}
	return nil, false
}

// instanceKey is what a key may be: it names a workspace, a part of a
// stack's name and a path element, so letters, digits, '-' and '_', from a
// letter or digit, at most maxInstanceKey characters (checked apart: a
// counted repeat compiles into as many copies at every start).
var instanceKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

const maxInstanceKey = 63

// ValidInstanceKey says key can name an instance.
func ValidInstanceKey(key string) bool {
	return len(key) <= maxInstanceKey && instanceKey.MatchString(key)
}

// maxInstances bounds one stack's instances: each is the stack's units
// once more.
const maxInstances = 1000

func (f *ForEach) decodeNode(d *decoder, n *yaml.Node, key string) {
	*f = ForEach{Pos: posOf(n), Set: true}
	seen := map[string]bool{}
	add := func(kn *yaml.Node, k string) bool {
		switch {
		case kn.Kind != yaml.ScalarNode || kn.Tag == "!!null":
			d.Errorf(posOf(kn), key, "found %s; expected an instance key (letters, digits, '-', '_')", kindName(kn))
		case !ValidInstanceKey(k):
			d.Errorf(posOf(kn), key, "instance key %q; expected letters, digits, '-' and '_', from a letter or digit, at most 63 characters", k)
		case seen[k]:
			d.Errorf(posOf(kn), key, "instance key %q appears twice; expected each key once", k)
		case len(f.Instances) == maxInstances:
			d.Errorf(posOf(kn), key, "more than %d instances; expected at most %d", maxInstances, maxInstances)
		default:
			seen[k] = true
			return true
		}
		return false
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, item := range n.Content {
			item = resolve(item)
			if add(item, item.Value) {
				f.Instances = append(f.Instances, MapEntry[Instance]{Key: item.Value, KeyPos: posOf(item), Value: Instance{Pos: posOf(item)}})
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content) && !d.exhausted; i += 2 {
			kn := resolve(n.Content[i])
			if !add(kn, kn.Value) {
				continue
			}
			e := MapEntry[Instance]{Key: kn.Value, KeyPos: posOf(kn), Value: Instance{Pos: posOf(kn)}}
			if vn := n.Content[i+1]; !isNull(resolve(vn)) {
				d.decode(vn, reflect.ValueOf(&e.Value).Elem(), joinKey(key, kn.Value))
			}
			f.Instances = append(f.Instances, e)
		}
	default:
		d.Errorf(posOf(n), key, "found %s; expected a list of instance keys or a map of keys to what each adds (variables, engine, auto_apply, targets)", kindName(n))
		return
	}
	if len(f.Instances) == 0 && len(n.Content) == 0 {
		d.Errorf(posOf(n), key, "no instances; expected at least one key (leave for_each out for a stack of one instance)")
	}
}

// InstanceName is the name of the instance key of stack: `net[us]`.
func InstanceName(stack, key string) string { return stack + "[" + key + "]" }

// SplitInstance splits a stack name as a reference writes it: `net[eu]`
// is stack net, key eu; `net` has no key. ok is false for a name with
// brackets in any other form.
func SplitInstance(name string) (stack, key string, ok bool) {
	open := strings.IndexByte(name, '[')
	if open < 0 {
		return name, "", !strings.Contains(name, "]")
	}
	if open == 0 || !strings.HasSuffix(name, "]") || strings.Count(name, "[") != 1 || strings.Count(name, "]") != 1 {
		return "", "", false
	}
	return name[:open], name[open+1 : len(name)-1], true
}
