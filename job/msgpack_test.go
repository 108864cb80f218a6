package job

import (
	"errors"
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"
	"google.golang.org/protobuf/encoding/protowire"
)

// pathOf is a tfplan Path message: a string step is an attribute, an int
// step an index, a cty.Value step an element key.
func pathOf(t *testing.T, steps ...any) []byte {
	t.Helper()
	var b []byte
	for _, s := range steps {
		var step []byte
		switch s := s.(type) {
		case string:
			step = protowire.AppendTag(step, 1, protowire.BytesType)
			step = protowire.AppendString(step, s)
		case cty.Value:
			mp, err := ctymsgpack.Marshal(s, s.Type())
			if err != nil {
				t.Fatal(err)
			}
			dv := protowire.AppendTag(nil, 1, protowire.BytesType)
			dv = protowire.AppendBytes(dv, mp)
			step = protowire.AppendTag(step, 2, protowire.BytesType)
			step = protowire.AppendBytes(step, dv)
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, step)
	}
	return b
}

// TestSecretsAtPaths: the strings at a change's sensitive paths, read
// from msgpack without the schema: objects, maps, lists, a dynamic
// value's pair of type and value, a set (whose elements have no key:
// all of it), null and unknown values (nothing).
func TestSecretsAtPaths(t *testing.T) {
	ty := cty.Object(map[string]cty.Type{
		"plain": cty.String, "hidden": cty.String, "dyn": cty.DynamicPseudoType,
		"list": cty.List(cty.String), "map": cty.Map(cty.String), "set": cty.Set(cty.String),
		"none": cty.String, "later": cty.String,
	})
	val := cty.ObjectVal(map[string]cty.Value{
		"plain":  cty.StringVal("shown"),
		"hidden": cty.StringVal("s-hidden"),
		"dyn":    cty.ObjectVal(map[string]cty.Value{"k": cty.StringVal("s-dyn"), "o": cty.StringVal("shown-dyn")}),
		"list":   cty.ListVal([]cty.Value{cty.StringVal("shown-0"), cty.StringVal("s-list-1")}),
		"map":    cty.MapVal(map[string]cty.Value{"a": cty.StringVal("shown-a"), "b": cty.StringVal("s-map-b")}),
		"set":    cty.SetVal([]cty.Value{cty.StringVal("s-set-1"), cty.StringVal("s-set-2")}),
		"none":   cty.NullVal(cty.String),
		"later":  cty.UnknownVal(cty.String),
	})
	mp, err := ctymsgpack.Marshal(val, ty)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path []byte
		want []string
	}{
		{"attribute", pathOf(t, "hidden"), []string{"s-hidden"}},
		{"into a dynamic value", pathOf(t, "dyn", "k"), []string{"s-dyn"}},
		{"a dynamic value whole", pathOf(t, "dyn"), []string{"s-dyn", "shown-dyn"}},
		{"list index", pathOf(t, "list", cty.NumberIntVal(1)), []string{"s-list-1"}},
		{"map key", pathOf(t, "map", cty.StringVal("b")), []string{"s-map-b"}},
		{"set element", pathOf(t, "set", cty.StringVal("s-set-1")), []string{"s-set-1", "s-set-2"}},
		{"null", pathOf(t, "none"), nil},
		{"unknown", pathOf(t, "later"), nil},
		{"no such attribute", pathOf(t, "nope"), nil},
		{"index past the end", pathOf(t, "list", cty.NumberIntVal(5)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := decodePath(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			s := &secrets{}
			if err := s.at(mp, steps); err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(slices.Values(s.out))
			if !slices.Equal(got, tc.want) {
				t.Errorf("secrets %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMsgpackLengthsWithinBytes: a length past the value's bytes is an
// error of errPlanFormat before anything is allocated by it.
func TestMsgpackLengthsWithinBytes(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":             nil,
		"array32 of 2^32-1": {0xdd, 0xff, 0xff, 0xff, 0xff},
		"map16 of 2^16-1":   {0xde, 0xff, 0xff, 0x00},
		"str8 past the end": {0xd9, 0x05, 'a'},
		"bin32 of 2^32-1":   {0xc6, 0xff, 0xff, 0xff, 0xff},
		"fixext16 cut":      {0xd8, 0x00, 0x01},
		"float64 cut":       {0xcb, 0x00},
		"never used byte":   {0xc1},
		"fixarray short":    {0x93, 0x01, 0x02},
		"nested too deep":   append(slices.Repeat([]byte{0x91}, maxMsgpackDepth+2), 0x01),
	} {
		if _, err := mpSkip(b, 0); !errors.Is(err, errPlanFormat) {
			t.Errorf("%s: %v, want errPlanFormat", name, err)
		}
	}
	if n, err := mpSkip([]byte{0x92, 0xa1, 'x', 0xc0, 0xff}, 0); err != nil || n != 4 {
		t.Errorf("a well-formed array: %d, %v", n, err)
	}
}
