// Package tfstate reads where a root module's state stands without the
// engine: the serial and lineage of its state, for the backends whose
// state strata can read directly (docs/behaviour.md#outputs-without-init).
package tfstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// Version is where a state stands: terraform bumps Serial on every write
// of one state, whose Lineage never changes.
type Version struct {
	Serial  int64  `json:"serial"`
	Lineage string `json:"lineage"`
}

// ErrUnsupported is a module whose state strata cannot read without the
// engine: a backend other than the local one, a backend configured at
// init, JSON configuration, or an encrypted state.
var ErrUnsupported = errors.New("the state cannot be read without the engine")

// maxStateSize bounds how much of a state file is read.
const maxStateSize = 1 << 30

// Probe reads the version of the state of the root module in dir, in
// workspace: the local backend's state file, as the engine would find it.
func Probe(dir, workspace string) (Version, error) {
	path, err := localStatePath(dir, workspace)
	if err != nil {
		return Version{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Version{}, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	defer f.Close()
	var st struct {
		Version
		Encrypted json.RawMessage `json:"encrypted_data"`
	}
	if err := json.NewDecoder(io.LimitReader(f, maxStateSize)).Decode(&st); err != nil {
		return Version{}, fmt.Errorf("%w: %s: %v", ErrUnsupported, path, err)
	}
	if st.Encrypted != nil || st.Lineage == "" {
		return Version{}, fmt.Errorf("%w: %s holds no plain state", ErrUnsupported, path)
	}
	return st.Version, nil
}

// localStatePath is where the local backend keeps the workspace's state:
// terraform.tfstate, or terraform.tfstate.d/WORKSPACE/terraform.tfstate,
// or what a local backend block's literal path and workspace_dir say.
func localStatePath(dir, workspace string) (string, error) {
	backend, attrs, err := backendOf(dir)
	if err != nil {
		return "", err
	}
	if backend != "" && backend != "local" {
		return "", fmt.Errorf("%w: backend %q", ErrUnsupported, backend)
	}
	path, wsDir := "terraform.tfstate", "terraform.tfstate.d"
	for name, dst := range map[string]*string{"path": &path, "workspace_dir": &wsDir} {
		if a := attrs[name]; a != nil {
			v, d := a.Expr.Value(nil)
			if d.HasErrors() || v.Type() != cty.String || v.IsNull() {
				return "", fmt.Errorf("%w: the local backend's %s is not a plain string", ErrUnsupported, name)
			}
			*dst = v.AsString()
		}
	}
	if workspace != "" && workspace != "default" {
		path = filepath.Join(wsDir, workspace, filepath.Base(path))
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return path, nil
}

// backendOf reads the module's backend block: its type ("" for none)
// and attributes. A cloud block, or configuration in JSON, is
// unsupported.
func backendOf(dir string) (string, hcl.Attributes, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, err
	}
	parser := hclparse.NewParser()
	backend, attrs := "", hcl.Attributes(nil)
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tf.json") {
			return "", nil, fmt.Errorf("%w: %s is JSON", ErrUnsupported, name)
		}
		if !strings.HasSuffix(name, ".tf") || e.IsDir() {
			continue
		}
		f, diags := parser.ParseHCLFile(filepath.Join(dir, name))
		if diags.HasErrors() {
			return "", nil, fmt.Errorf("%w: %s: %s", ErrUnsupported, name, diags.Error())
		}
		content, _, _ := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "terraform"}}})
		for _, tb := range content.Blocks {
			inner, _, _ := tb.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "backend", LabelNames: []string{"type"}}, {Type: "cloud"}}})
			for _, b := range inner.Blocks {
				if b.Type == "cloud" {
					return "", nil, fmt.Errorf("%w: a cloud block", ErrUnsupported)
				}
				backend = b.Labels[0]
				attrs, _ = b.Body.JustAttributes()
			}
		}
	}
	return backend, attrs, nil
}
