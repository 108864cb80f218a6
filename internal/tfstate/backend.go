package tfstate

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// maxConfigFile bounds a .tf or backend config file read for the backend.
const maxConfigFile = 4 << 20

// backend is a module's backend as init would configure it: the type of
// its backend block ("local" when there is none) and its arguments, the
// block's merged with init's -backend-config.
type backend struct {
	Type  string
	Block bool
	Args  map[string]cty.Value
}

// backendOf reads the module's backend block and merges backendConfig
// (-backend-config values: KEY=VALUE, or the path of a file of
// arguments) over it, as init does. A cloud block, configuration in JSON,
// or an argument that is not a literal is unsupported.
func backendOf(dir string, backendConfig []string) (backend, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return backend{}, err
	}
	// Override files come last, and a backend block in one replaces the
	// module's, as terraform merges them.
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tf.json") {
			return backend{}, fmt.Errorf("%w: %s is JSON", ErrUnsupported, name)
		}
		if strings.HasSuffix(name, ".tf") && !e.IsDir() {
			names = append(names, name)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return !isOverride(names[i]) && isOverride(names[j]) })
	b := backend{Type: "local", Args: map[string]cty.Value{}}
	found := 0
	parser := hclparse.NewParser()
	for _, name := range names {
		body, err := parseFile(parser, filepath.Join(dir, name))
		if err != nil {
			return backend{}, err
		}
		content, _, _ := body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "terraform"}}})
		for _, tb := range content.Blocks {
			inner, _, _ := tb.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "backend", LabelNames: []string{"type"}}, {Type: "cloud"}}})
			for _, blk := range inner.Blocks {
				if blk.Type == "cloud" {
					return backend{}, fmt.Errorf("%w: a cloud block", ErrUnsupported)
				}
				if found++; found > 1 && !isOverride(name) {
					return backend{}, fmt.Errorf("%w: more than one backend block", ErrUnsupported)
				}
				args, err := literals(blk.Body)
				if err != nil {
					return backend{}, fmt.Errorf("%w: %s: backend %q: %v", ErrUnsupported, name, blk.Labels[0], err)
				}
				b = backend{Type: blk.Labels[0], Block: true, Args: args}
			}
		}
	}
	for _, item := range backendConfig {
		if err := b.merge(parser, item); err != nil {
			return backend{}, fmt.Errorf("%w: -backend-config=%s: %v", ErrUnsupported, item, err)
		}
	}
	return b, nil
}

func isOverride(name string) bool {
	return name == "override.tf" || strings.HasSuffix(name, "_override.tf")
}

// parseFile parses one HCL file, refusing one over maxConfigFile.
func parseFile(parser *hclparse.Parser, path string) (hcl.Body, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Size() > maxConfigFile {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrUnsupported, path, maxConfigFile)
	}
	f, diags := parser.ParseHCLFile(path)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, diags.Error())
	}
	return f.Body, nil
}

// literals evaluates a body's attributes with no variables: a backend's
// arguments are literals.
func literals(body hcl.Body) (map[string]cty.Value, error) {
	attrs, diags := body.JustAttributes()
	if diags.HasErrors() {
		return nil, diags
	}
	out := make(map[string]cty.Value, len(attrs))
	for name, a := range attrs {
		v, d := a.Expr.Value(nil)
		if d.HasErrors() || !v.IsWhollyKnown() {
			return nil, fmt.Errorf("%s is not a literal", name)
		}
		out[name] = v
	}
	return out, nil
}

// merge applies one -backend-config value: a file of arguments, or
// KEY=VALUE, whose value is a string unless it reads as HCL of the kind
// the argument takes (a bool, a number, an object), as init converts it.
func (b *backend) merge(parser *hclparse.Parser, item string) error {
	name, raw, ok := strings.Cut(item, "=")
	if !ok {
		body, err := parseFile(parser, item)
		if err != nil {
			return err
		}
		args, err := literals(body)
		if err != nil {
			return err
		}
		for k, v := range args {
			b.Args[k] = v
		}
		return nil
	}
	v := cty.StringVal(raw)
	if expr, diags := hclsyntax.ParseExpression([]byte(raw), "-backend-config", hcl.InitialPos); !diags.HasErrors() {
		if ev, d := expr.Value(nil); !d.HasErrors() && ev.IsWhollyKnown() && !ev.Type().Equals(cty.String) && (ev.Type().IsObjectType() || ev.Type().IsMapType() || ev.Type().IsPrimitiveType()) {
			v = ev
		}
	}
	b.Args[name] = v
	return nil
}

// str is an argument as a string: "" when unset or null; an error when
// it is not a string (or a bool or number, which convert to one).
func (b backend) str(name string) (string, error) {
	v, ok := b.Args[name]
	if !ok || v.IsNull() {
		return "", nil
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", fmt.Errorf("%w: the %s backend's %s is not a string", ErrUnsupported, b.Type, name)
	}
	return s.AsString(), nil
}

// strs reads the named arguments as strings ("" for unset).
func (b backend) strs(names ...string) (map[string]string, error) {
	out := make(map[string]string, len(names))
	for _, name := range names {
		v, err := b.str(name)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// attr is an object argument's attribute as a string ("" when unset).
func (b backend) attr(name, key string) (string, error) {
	v, ok := b.Args[name]
	if !ok || v.IsNull() {
		return "", nil
	}
	if !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return "", fmt.Errorf("%w: the %s backend's %s is not an object", ErrUnsupported, b.Type, name)
	}
	var inner cty.Value
	switch {
	case v.Type().IsObjectType() && v.Type().HasAttribute(key):
		inner = v.GetAttr(key)
	case v.Type().IsMapType() && v.HasIndex(cty.StringVal(key)).True():
		inner = v.Index(cty.StringVal(key))
	default:
		return "", nil
	}
	if inner.IsNull() {
		return "", nil
	}
	s, err := convert.Convert(inner, cty.String)
	if err != nil {
		return "", fmt.Errorf("%w: the %s backend's %s.%s is not a string", ErrUnsupported, b.Type, name, key)
	}
	return s.AsString(), nil
}
