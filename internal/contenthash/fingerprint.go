package contenthash

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// FingerprintInput is everything that decides whether a unit must be
// initialised again (docs/behaviour.md#steps-of-a-unit). Paths are as in DigestInput.
type FingerprintInput struct {
	Root, Dir             string
	ModuleDirs            []string // local modules, transitively
	Engine, EngineVersion string
	InitArgs              []string // init arguments after substitution
}

// fingerprintVersion opens every init fingerprint, so that a change to the
// layout below can never produce a fingerprint equal to an older one.
const fingerprintVersion = "strata init fingerprint v1"

// InitFingerprint returns the init fingerprint of a unit as
// "sha256:<hex>".
//
// The SHA-256 is taken over, in this order and framed like Digest:
//
//  1. fingerprintVersion;
//  2. engine name and version;
//  3. the content of .terraform.lock.hcl in Dir (absent is empty);
//  4. for Dir and then each module dir, sorted: the dir; the source text of
//     each top-level terraform block of its *.tf and *.tofu files, by file
//     and position (for *.tf.json and *.tofu.json, the value of each
//     top-level "terraform" key, canonically re-encoded); each module call
//     as its name and the source text of its source and version
//     arguments, sorted by name and file; and the name and whole content
//     of each file that does not parse;
//  5. the init arguments in order.
//
// Only what init acts on is read: editing resources, variables or outputs
// leaves the fingerprint alone. The terraform blocks of the local modules
// count too, since a provider a module starts to require needs an init.
// Files the engine ignores (hidden, editor backups) are skipped.
func InitFingerprint(in FingerprintInput) (string, error) {
	if in.Root == "" {
		return "", errors.New("init fingerprint: no repository root")
	}
	dir, ok := cleanRepoPath(in.Dir)
	if !ok {
		return "", fmt.Errorf("init fingerprint: unit dir %s is outside the repository", in.Dir)
	}
	seen := map[string]bool{dir: true}
	var modules []string
	for _, m := range in.ModuleDirs {
		c, ok := cleanRepoPath(m)
		if !ok {
			return "", fmt.Errorf("init fingerprint of %s: module dir %s is outside the repository", in.Dir, m)
		}
		if !seen[c] {
			seen[c] = true
			modules = append(modules, c)
		}
	}
	sort.Strings(modules)

	f := framer{h: sha256.New()}
	f.string(fingerprintVersion)
	f.string(in.Engine)
	f.string(in.EngineVersion)
	lock, err := os.ReadFile(filepath.Join(in.Root, filepath.FromSlash(dir), ".terraform.lock.hcl"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("init fingerprint of %s: %w", in.Dir, err)
	}
	f.bytes(lock)

	dirs := append([]string{dir}, modules...)
	f.count(len(dirs))
	for i, d := range dirs {
		what := "module dir"
		if i == 0 {
			what = "unit dir"
		}
		cfg, err := readInitConfig(in.Root, d, what)
		if err != nil {
			return "", fmt.Errorf("init fingerprint of %s: %w", in.Dir, err)
		}
		f.string(d)
		cfg.write(&f)
	}
	f.strings(in.InitArgs)
	return "sha256:" + hex.EncodeToString(f.h.Sum(nil)), nil
}

// initConfig is what init acts on in one module dir.
type initConfig struct {
	terraform [][]byte // terraform blocks, by file and position
	modules   []initModuleCall
	unparsed  []unparsedFile
}

// initModuleCall is one module block: its name and the source text of its
// source and version arguments (empty when absent).
type initModuleCall struct {
	name, file      string
	source, version []byte
}

type unparsedFile struct {
	name    string
	content []byte
}

func (c *initConfig) write(f *framer) {
	f.count(len(c.terraform))
	for _, t := range c.terraform {
		f.bytes(t)
	}
	sort.SliceStable(c.modules, func(i, j int) bool {
		a, b := c.modules[i], c.modules[j]
		if a.name != b.name {
			return a.name < b.name
		}
		return a.file < b.file
	})
	f.count(len(c.modules))
	for _, m := range c.modules {
		f.string(m.name)
		f.bytes(m.source)
		f.bytes(m.version)
	}
	f.count(len(c.unparsed))
	for _, u := range c.unparsed {
		f.string(u.name)
		f.bytes(u.content)
	}
}

// configFileKind returns how a file of a module dir is read: "hcl", "json",
// or "" for a file the engine does not load.
func configFileKind(name string) string {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		(strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#")) {
		return ""
	}
	switch {
	case strings.HasSuffix(name, ".tf"), strings.HasSuffix(name, ".tofu"):
		return "hcl"
	case strings.HasSuffix(name, ".tf.json"), strings.HasSuffix(name, ".tofu.json"):
		return "json"
	}
	return ""
}

// readInitConfig reads the config files of one module dir (not its
// subdirectories: the engine loads only the dir itself).
func readInitConfig(root, dir, what string) (*initConfig, error) {
	abs := filepath.Join(root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s %s does not exist", what, dir)
		}
		return nil, fmt.Errorf("%s %s: %w", what, dir, err)
	}
	cfg := &initConfig{}
	for _, e := range entries {
		name := e.Name()
		kind := configFileKind(name)
		if kind == "" || e.IsDir() {
			continue
		}
		p := filepath.Join(abs, name)
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
		} else if !e.Type().IsRegular() {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, dir, err)
		}
		var ok bool
		if kind == "hcl" {
			ok = cfg.addHCL(name, src)
		} else {
			ok = cfg.addJSON(name, src)
		}
		if !ok {
			cfg.unparsed = append(cfg.unparsed, unparsedFile{name: name, content: src})
		}
	}
	return cfg, nil
}

// addHCL adds the terraform blocks and module calls of a native syntax
// file, reporting false when the file does not parse.
func (c *initConfig) addHCL(name string, src []byte) bool {
	file, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return false
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return false
	}
	var terraform [][]byte
	var modules []initModuleCall
	for _, b := range body.Blocks {
		switch b.Type {
		case "terraform":
			terraform = append(terraform, hclSourceText(src, b.Range()))
		case "module":
			m := initModuleCall{file: name}
			if len(b.Labels) > 0 {
				m.name = b.Labels[0]
			}
			if a := b.Body.Attributes["source"]; a != nil {
				m.source = hclSourceText(src, a.Expr.Range())
			}
			if a := b.Body.Attributes["version"]; a != nil {
				m.version = hclSourceText(src, a.Expr.Range())
			}
			modules = append(modules, m)
		}
	}
	c.terraform = append(c.terraform, terraform...)
	c.modules = append(c.modules, modules...)
	return true
}

func hclSourceText(src []byte, r hcl.Range) []byte {
	if r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte > r.End.Byte {
		return nil
	}
	return src[r.Start.Byte:r.End.Byte]
}

// addJSON adds the "terraform" values and module calls of a JSON syntax
// file, reporting false when the file does not parse or has a shape the
// engine would reject. A key may repeat at the top level, as the JSON
// syntax allows for blocks.
func (c *initConfig) addJSON(name string, src []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	var terraform [][]byte
	var modules []initModuleCall
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return false
		}
		switch key {
		case "terraform":
			t, ok := canonicalJSON(raw)
			if !ok {
				return false
			}
			terraform = append(terraform, t)
		case "module":
			calls, ok := jsonModuleCalls(name, raw)
			if !ok {
				return false
			}
			modules = append(modules, calls...)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	c.terraform = append(c.terraform, terraform...)
	c.modules = append(c.modules, modules...)
	return true
}

// jsonModuleCalls reads a "module" value: an object of calls by name, or
// an array of such objects; each call is an object or an array of them.
func jsonModuleCalls(file string, raw json.RawMessage) ([]initModuleCall, bool) {
	var groups []map[string]json.RawMessage
	if !decodeObjectOrArray(raw, &groups) {
		return nil, false
	}
	var out []initModuleCall
	for _, g := range groups {
		for name, body := range g {
			var bodies []map[string]json.RawMessage
			if !decodeObjectOrArray(body, &bodies) {
				return nil, false
			}
			for _, b := range bodies {
				m := initModuleCall{name: name, file: file}
				var ok bool
				if s, present := b["source"]; present {
					if m.source, ok = canonicalJSON(s); !ok {
						return nil, false
					}
				}
				if v, present := b["version"]; present {
					if m.version, ok = canonicalJSON(v); !ok {
						return nil, false
					}
				}
				out = append(out, m)
			}
		}
	}
	return out, true
}

// decodeObjectOrArray decodes a JSON object, or an array of objects, into
// a slice of objects.
func decodeObjectOrArray(raw json.RawMessage, out *[]map[string]json.RawMessage) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return json.Unmarshal(raw, out) == nil
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(raw, &one); err != nil || one == nil {
		return false
	}
	*out = []map[string]json.RawMessage{one}
	return true
}

// canonicalJSON re-encodes a JSON value with sorted object keys, no
// insignificant space, and numbers as written.
func canonicalJSON(raw json.RawMessage) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return out, true
}
