package job

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"
	"google.golang.org/protobuf/encoding/protowire"
)

// Reading a saved plan file itself, so that a plan with changes starts
// the engine once (docs/architecture.md#what-a-command-costs). The file
// is a zip; its `tfplan` entry is terraform's protobuf (the same in
// tofu), whose values are msgpack. The format is internal to the
// engines: anything not as expected is errPlanFormat, and the caller
// reads `show -json` instead, never a guess.

// errPlanFormat says a plan file is not as this reader expects it.
var errPlanFormat = errors.New("not a plan file this reader knows")

// Budgets of what a plan file may make strata read.
const (
	maxPlanFile     = 1 << 30  // the zip itself
	maxTfplan       = 64 << 20 // its tfplan entry, uncompressed
	maxPlanConfig   = 16 << 20 // the root module's files, together
	maxMsgpackDepth = 64       // nesting of a value
	maxPlanSecrets  = 1 << 20  // strings collected to mask
)

// tfplanVersion is the tfplan format every engine strata supports writes.
const tfplanVersion = 3

// changeSetFileForm marks a change set computed from the plan file;
// one computed from `show -json` has no prefix (changeSet).
const changeSetFileForm = "f1:"

// readPlanFile reads the saved plan file at path.
func readPlanFile(file string) (planView, error) {
	f, err := os.Open(file)
	if err != nil {
		return planView{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return planView{}, err
	}
	if st.Size() > maxPlanFile {
		return planView{}, fmt.Errorf("%w: %s is %d bytes, more than %d", errPlanFormat, file, st.Size(), maxPlanFile)
	}
	v, err := readPlanZip(f, st.Size())
	if err != nil {
		return planView{}, fmt.Errorf("%s: %w", file, err)
	}
	return v, nil
}

// readPlanZip reads a plan file's zip from r (size bytes).
func readPlanZip(r io.ReaderAt, size int64) (planView, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return planView{}, fmt.Errorf("%w: %v", errPlanFormat, err)
	}
	var tfplan []byte
	var config []*zip.File
	for _, f := range zr.File {
		switch {
		case f.Name == "tfplan":
			if tfplan, err = readZipEntry(f, maxTfplan); err != nil {
				return planView{}, err
			}
		case path.Dir(f.Name) == "tfconfig/m-" && (strings.HasSuffix(f.Name, ".tf") || strings.HasSuffix(f.Name, ".tf.json") ||
			strings.HasSuffix(f.Name, ".tofu") || strings.HasSuffix(f.Name, ".tofu.json")):
			config = append(config, f)
		}
	}
	if tfplan == nil {
		return planView{}, fmt.Errorf("%w: no tfplan entry", errPlanFormat)
	}
	p, err := decodeTfplan(tfplan)
	if err != nil {
		return planView{}, err
	}
	vars, err := sensitiveVariables(config)
	if err != nil {
		return planView{}, err
	}
	return p.view(vars)
}

// readZipEntry reads one entry of at most budget bytes.
func readZipEntry(f *zip.File, budget int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(budget) {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than %d", errPlanFormat, f.Name, f.UncompressedSize64, budget)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errPlanFormat, f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, budget+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errPlanFormat, f.Name, err)
	}
	if int64(len(b)) > budget {
		return nil, fmt.Errorf("%w: %s is more than %d bytes", errPlanFormat, f.Name, budget)
	}
	return b, nil
}

// Actions of tfplan's Action enum.
const (
	actNoOp             = 0
	actCreate           = 1
	actRead             = 2
	actUpdate           = 3
	actDelete           = 5
	actDeleteThenCreate = 6
	actCreateThenDelete = 7
	actForget           = 8
	actCreateThenForget = 9
)

// tfplan is what strata reads of a tfplan entry.
type tfplan struct {
	version   uint64
	destroy   bool
	resources []resourceChange
	drift     []resourceChange
	outputs   []outputChange
	variables map[string][]byte
}

type resourceChange struct {
	addr, deposed string
	change        change
}

type outputChange struct {
	name      string
	change    change
	sensitive bool
}

// change is a tfplan Change: its action, its values (msgpack) and the
// sensitive paths into them (each a Path message, as written).
type change struct {
	action                               uint64
	values                               [][]byte
	beforeSensitivePaths, afterSensitive [][]byte
}

// before and after are the change's values as the Change message lays
// them out by action; nil where the action has none.
func (c change) before() []byte {
	switch c.action {
	case actCreate:
		return nil
	}
	if len(c.values) > 0 {
		return c.values[0]
	}
	return nil
}

func (c change) after() []byte {
	switch c.action {
	case actDelete, actForget:
		return nil
	case actCreate, actNoOp:
		if len(c.values) > 0 {
			return c.values[len(c.values)-1]
		}
		return nil
	}
	if len(c.values) > 1 {
		return c.values[1]
	}
	return nil
}

// protoFields calls fn for each field of a protobuf message.
func protoFields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return fmt.Errorf("%w: %v", errPlanFormat, protowire.ParseError(l))
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return fmt.Errorf("%w: %v", errPlanFormat, protowire.ParseError(l))
		}
		b = b[l:]
		if err := fn(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}

// wantType checks a known field's wire type.
func wantType(num protowire.Number, typ, want protowire.Type) error {
	if typ != want {
		return fmt.Errorf("%w: field %d has wire type %d, not %d", errPlanFormat, num, typ, want)
	}
	return nil
}

func decodeTfplan(b []byte) (*tfplan, error) {
	p := &tfplan{variables: map[string][]byte{}}
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		var err error
		switch num {
		case 1:
			err = wantType(num, typ, protowire.VarintType)
			p.version = n
		case 17:
			err = wantType(num, typ, protowire.VarintType)
			p.destroy = n == 1
		case 2:
			if err = wantType(num, typ, protowire.BytesType); err == nil {
				err = p.decodeVariable(v)
			}
		case 3, 18:
			if err = wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			var rc resourceChange
			if rc, err = decodeResourceChange(v); err == nil {
				if num == 3 {
					p.resources = append(p.resources, rc)
				} else {
					p.drift = append(p.drift, rc)
				}
			}
		case 4:
			if err = wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			var oc outputChange
			if oc, err = decodeOutputChange(v); err == nil {
				p.outputs = append(p.outputs, oc)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.version != tfplanVersion {
		return nil, fmt.Errorf("%w: tfplan format version %d, not %d", errPlanFormat, p.version, tfplanVersion)
	}
	return p, nil
}

// decodeVariable reads one entry of the plan's variables map.
func (p *tfplan) decodeVariable(b []byte) error {
	var name string
	var value []byte
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1:
			name = string(v)
			return wantType(num, typ, protowire.BytesType)
		case 2:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			var err error
			value, err = decodeDynamicValue(v)
			return err
		}
		return nil
	})
	p.variables[name] = value
	return err
}

// decodeDynamicValue is a DynamicValue's msgpack, checked to be one
// well-formed value.
func decodeDynamicValue(b []byte) ([]byte, error) {
	var mp []byte
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == 1 {
			mp = v
			return wantType(num, typ, protowire.BytesType)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n, err := mpSkip(mp, 0); err != nil {
		return nil, err
	} else if n != len(mp) {
		return nil, fmt.Errorf("%w: %d bytes after a msgpack value", errPlanFormat, len(mp)-n)
	}
	return mp, nil
}

func decodeResourceChange(b []byte) (resourceChange, error) {
	var rc resourceChange
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 13:
			rc.addr = string(v)
			return wantType(num, typ, protowire.BytesType)
		case 7:
			rc.deposed = string(v)
			return wantType(num, typ, protowire.BytesType)
		case 9:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			var err error
			rc.change, err = decodeChange(v)
			return err
		}
		return nil
	})
	if err == nil && rc.addr == "" {
		err = fmt.Errorf("%w: a resource change without an address", errPlanFormat)
	}
	return rc, err
}

func decodeOutputChange(b []byte) (outputChange, error) {
	var oc outputChange
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			oc.name = string(v)
			return wantType(num, typ, protowire.BytesType)
		case 2:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			var err error
			oc.change, err = decodeChange(v)
			return err
		case 3:
			oc.sensitive = n != 0
			return wantType(num, typ, protowire.VarintType)
		}
		return nil
	})
	if err == nil && oc.name == "" {
		err = fmt.Errorf("%w: an output change without a name", errPlanFormat)
	}
	return oc, err
}

func decodeChange(b []byte) (change, error) {
	var c change
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			c.action = n
			if n > actCreateThenForget || n == 4 {
				return fmt.Errorf("%w: unknown action %d", errPlanFormat, n)
			}
			return wantType(num, typ, protowire.VarintType)
		case 2:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			mp, err := decodeDynamicValue(v)
			c.values = append(c.values, mp)
			return err
		case 3, 4:
			if err := wantType(num, typ, protowire.BytesType); err != nil {
				return err
			}
			if num == 3 {
				c.beforeSensitivePaths = append(c.beforeSensitivePaths, v)
			} else {
				c.afterSensitive = append(c.afterSensitive, v)
			}
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	want := 2
	switch c.action {
	case actNoOp, actCreate, actDelete, actForget:
		want = 1
	}
	if len(c.values) != want {
		return c, fmt.Errorf("%w: action %d with %d values", errPlanFormat, c.action, len(c.values))
	}
	return c, nil
}

// pathStep is one step of a tfplan Path: an attribute's name, or an
// element's key (msgpack).
type pathStep struct {
	attr string
	key  []byte
}

func decodePath(b []byte) ([]pathStep, error) {
	var steps []pathStep
	err := protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 {
			return nil
		}
		if err := wantType(num, typ, protowire.BytesType); err != nil {
			return err
		}
		var s pathStep
		err := protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			switch num {
			case 1:
				s.attr = string(v)
				return wantType(num, typ, protowire.BytesType)
			case 2:
				if err := wantType(num, typ, protowire.BytesType); err != nil {
					return err
				}
				var err error
				s.key, err = decodeDynamicValue(v)
				return err
			}
			return nil
		})
		steps = append(steps, s)
		return err
	})
	return steps, err
}

// view is what strata reads from the plan: the same as from its JSON
// (readPlanJSON), but its change set in the file's form. sensitiveVars
// are the root module's variables declared sensitive.
func (p *tfplan) view(sensitiveVars []sensitiveVariable) (planView, error) {
	v := planView{Outputs: map[string]PlannedOutput{}}
	for _, rc := range p.resources {
		switch rc.change.action {
		case actCreate:
			v.Changes.Add++
		case actUpdate:
			v.Changes.Change++
		case actDelete:
			v.Changes.Destroy++
		case actDeleteThenCreate, actCreateThenDelete:
			v.Changes.Add++
			v.Changes.Destroy++
		}
	}
	sec := &secrets{}
	for _, rcs := range [][]resourceChange{p.resources, p.drift} {
		for _, rc := range rcs {
			if err := sec.change(rc.change, false); err != nil {
				return planView{}, err
			}
		}
	}
	for _, oc := range p.outputs {
		if err := sec.change(oc.change, oc.sensitive); err != nil {
			return planView{}, err
		}
		if oc.change.action != actNoOp {
			v.ChangedOutputs = append(v.ChangedOutputs, oc.name)
		}
		if oc.change.action == actDelete {
			continue
		}
		po, err := plannedOutput(oc)
		if err != nil {
			return planView{}, err
		}
		v.Outputs[oc.name] = po
	}
	for _, sv := range sensitiveVars {
		b, ok := p.variables[sv.name]
		if !ok {
			// Not set: its default, which the plan file does not hold.
			for _, str := range sv.defaults {
				if err := sec.add(str); err != nil {
					return planView{}, err
				}
			}
			continue
		}
		if err := sec.all(b); err != nil {
			return planView{}, err
		}
	}
	sort.Strings(v.ChangedOutputs)
	v.Changes.Outputs = len(v.ChangedOutputs)
	v.Secrets = sec.out
	v.ChangeSet = p.changeSet()
	return v, nil
}

// plannedOutput is an output's value after the plan, as show -json
// gives it: its JSON when wholly known.
func plannedOutput(oc outputChange) (PlannedOutput, error) {
	po := PlannedOutput{Sensitive: oc.sensitive || len(oc.change.afterSensitive) > 0}
	val, err := ctymsgpack.Unmarshal(oc.change.after(), cty.DynamicPseudoType)
	if err != nil {
		return po, fmt.Errorf("%w: output %s: %v", errPlanFormat, oc.name, err)
	}
	if !val.IsWhollyKnown() {
		return po, nil
	}
	b, err := ctyjson.Marshal(val, val.Type())
	if err != nil {
		return po, fmt.Errorf("%w: output %s: %v", errPlanFormat, oc.name, err)
	}
	po.Value, po.Known = b, true
	return po, nil
}

// changeSet is a digest of what the plan changes, as changeSet digests
// the plan's JSON: each resource change but no-op and read, by address
// and deposed key, with its action, its value after (unknowns included,
// as msgpack marks them) and the sensitive paths into it; each root
// module output that changes, with its value after and whether it is
// sensitive. What the plan starts from is left out. The engine writes
// these values the same way for the same plan, and every value differs
// in its bytes when it differs.
func (p *tfplan) changeSet() string {
	h := sha256.New()
	n := 0
	write := func(parts ...[]byte) {
		for _, b := range parts {
			var l [binaryLen]byte
			h.Write(putLen(l[:], len(b)))
			h.Write(b)
		}
	}
	type item struct {
		key   string
		parts [][]byte
	}
	var items []item
	for _, rc := range p.resources {
		c := rc.change
		if c.action == actNoOp || c.action == actRead {
			continue
		}
		paths := append([][]byte(nil), c.afterSensitive...)
		sort.Slice(paths, func(i, j int) bool { return bytes.Compare(paths[i], paths[j]) < 0 })
		parts := [][]byte{[]byte("r"), []byte(rc.addr), []byte(rc.deposed), {byte(c.action)}, c.after()}
		items = append(items, item{"r" + rc.addr + "\x00" + rc.deposed, append(parts, paths...)})
	}
	for _, oc := range p.outputs {
		c := oc.change
		if c.action == actNoOp {
			continue
		}
		sens := byte(0)
		if oc.sensitive {
			sens = 1
		}
		items = append(items, item{"o" + oc.name, [][]byte{[]byte("o"), []byte(oc.name), {byte(c.action)}, c.after(), {sens}}})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	for _, it := range items {
		write(it.parts...)
		n++
	}
	if n == 0 {
		return ""
	}
	return changeSetFileForm + hex.EncodeToString(h.Sum(nil))
}

const binaryLen = 8

func putLen(b []byte, n int) []byte {
	for i := range binaryLen {
		b[i] = byte(uint64(n) >> (8 * i))
	}
	return b
}

// changeSetForm names the form of a change set: "file" (from the plan
// file) or "json" (from show -json); "" for none.
func changeSetForm(cs string) string {
	switch {
	case cs == "":
		return ""
	case strings.HasPrefix(cs, changeSetFileForm):
		return "file"
	default:
		return "json"
	}
}

// secrets collects the strings a plan marks sensitive.
type secrets struct {
	out  []string
	size int
}

func (s *secrets) add(str string) error {
	if len(str) < 2 {
		// Too short to mask (console.Masker).
		return nil
	}
	s.size += len(str)
	if s.size > maxPlanSecrets {
		return fmt.Errorf("%w: more than %d bytes of sensitive strings", errPlanFormat, maxPlanSecrets)
	}
	s.out = append(s.out, str)
	return nil
}

// change adds the strings at a change's sensitive paths, before and
// after; whole says both values are sensitive (an output's).
func (s *secrets) change(c change, whole bool) error {
	for _, side := range []struct {
		value []byte
		paths [][]byte
	}{{c.before(), c.beforeSensitivePaths}, {c.after(), c.afterSensitive}} {
		if side.value == nil {
			continue
		}
		if whole {
			if err := s.all(side.value); err != nil {
				return err
			}
			continue
		}
		for _, pb := range side.paths {
			steps, err := decodePath(pb)
			if err != nil {
				return err
			}
			if err := s.at(side.value, steps); err != nil {
				return err
			}
		}
	}
	return nil
}

// at adds the strings of the value at path steps in v; a step it cannot
// follow (into a set, whose elements have no keys) marks everything
// below where it stands.
func (s *secrets) at(v []byte, steps []pathStep) error {
	for _, st := range steps {
		next, res, err := mpStep(v, st)
		if err != nil {
			return err
		}
		switch res {
		case stepAbsent:
			// The path leads to a null, unknown or absent value: no strings.
			return nil
		case stepUnkeyed:
			return s.all(v)
		}
		v = next
	}
	return s.all(v)
}

// all adds every string in msgpack value v: values, not map keys.
func (s *secrets) all(v []byte) error {
	_, err := mpWalk(v, 0, func(str string) error { return s.add(str) })
	return err
}

// sensitiveVariable is a root module variable declared sensitive, with
// the strings of its default.
type sensitiveVariable struct {
	name     string
	defaults []string
}

// sensitiveVariables are the root module's variables declared
// sensitive, from the configuration the plan file holds.
func sensitiveVariables(files []*zip.File) ([]sensitiveVariable, error) {
	var vars []sensitiveVariable
	budget := int64(maxPlanConfig)
	for _, f := range files {
		src, err := readZipEntry(f, budget)
		if err != nil {
			return nil, err
		}
		budget -= int64(len(src))
		json := strings.HasSuffix(f.Name, ".json")
		if !json && !bytes.Contains(src, []byte("sensitive")) {
			// A variable is sensitive only through an attribute of that
			// name, which native syntax writes as is (no character
			// normalizes to its letters); JSON may escape a key's
			// letters, so a JSON file is always read.
			continue
		}
		var file *hcl.File
		var diags hcl.Diagnostics
		if json {
			file, diags = hcljson.Parse(src, f.Name)
		} else {
			file, diags = hclsyntax.ParseConfig(src, f.Name, hcl.InitialPos)
		}
		if diags.HasErrors() {
			return nil, fmt.Errorf("%w: %s: %s", errPlanFormat, f.Name, diags.Error())
		}
		content, _, _ := file.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}}})
		for _, b := range content.Blocks {
			attrs, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "sensitive"}, {Name: "default"}}})
			a, ok := attrs.Attributes["sensitive"]
			if !ok {
				continue
			}
			val, diags := a.Expr.Value(nil)
			if diags.HasErrors() || !val.IsKnown() || val.IsNull() || val.Type() != cty.Bool {
				// A sensitive that is not a literal: terraform would not
				// have planned with it.
				return nil, fmt.Errorf("%w: %s: variable %q: sensitive is not true or false", errPlanFormat, f.Name, b.Labels[0])
			}
			if !val.True() {
				continue
			}
			sv := sensitiveVariable{name: b.Labels[0]}
			if d, ok := attrs.Attributes["default"]; ok {
				// A default is a literal value; one that is not, terraform
				// would not have planned with.
				dv, diags := d.Expr.Value(nil)
				if diags.HasErrors() {
					return nil, fmt.Errorf("%w: %s: variable %q: default: %s", errPlanFormat, f.Name, sv.name, diags.Error())
				}
				sv.defaults = ctyStrings(dv, nil)
			}
			vars = append(vars, sv)
		}
	}
	return vars, nil
}

// ctyStrings adds the known strings in v to out.
func ctyStrings(v cty.Value, out []string) []string {
	switch {
	case !v.IsKnown() || v.IsNull():
	case v.Type() == cty.String:
		out = append(out, v.AsString())
	case v.CanIterateElements():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = ctyStrings(e, out)
		}
	}
	return out
}
