package engines

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// maxCLIConfigSize bounds the CLI config file read.
const maxCLIConfigSize = 1 << 20

// CLIConfigFile is the CLI config file an engine reads in env:
// TF_CLI_CONFIG_FILE, else .terraformrc in the home dir (.tofurc first for
// tofu). "" when there is none.
func CLIConfigFile(name string, env map[string]string) string {
	if f := env["TF_CLI_CONFIG_FILE"]; f != "" {
		return f
	}
	home := env["HOME"]
	if home == "" {
		return ""
	}
	names := []string{".terraformrc"}
	if name == "tofu" {
		names = []string{".tofurc", ".terraformrc"}
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(home, n)); err == nil {
			return filepath.Join(home, n)
		}
	}
	return ""
}

// LockMirror is where `providers lock` should find packages so it sees
// what init sees (docs/behaviour.md#lock-files): the engine's lock command
// ignores the CLI config's provider_installation and asks the origin
// registries, unless given -fs-mirror or -net-mirror, one of the two. The
// first installation method of the config decides: a filesystem_mirror
// gives its path (-fs-mirror), a network_mirror its URL (-net-mirror),
// direct (or no provider_installation) neither. A config that cannot be
// read is an error; no config file is neither.
func LockMirror(cliConfig string) (fsMirror, netMirror string, err error) {
	if cliConfig == "" {
		return "", "", nil
	}
	st, err := os.Stat(cliConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	if st.Size() > maxCLIConfigSize {
		return "", "", fmt.Errorf("%s: larger than %d bytes", cliConfig, maxCLIConfigSize)
	}
	parser := hclparse.NewParser()
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(cliConfig, ".json") {
		f, diags = parser.ParseJSONFile(cliConfig)
	} else {
		f, diags = parser.ParseHCLFile(cliConfig)
	}
	if diags.HasErrors() {
		return "", "", fmt.Errorf("reading the CLI config: %s", diags.Error())
	}
	content, _, diags := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "provider_installation"}}})
	if diags.HasErrors() || len(content.Blocks) == 0 {
		return "", "", nil
	}
	return firstMirror(content.Blocks[0].Body)
}

// firstMirror reads the first installation method of a
// provider_installation block, in the order written.
func firstMirror(body hcl.Body) (fsMirror, netMirror string, err error) {
	methods := []hcl.BlockHeaderSchema{{Type: "filesystem_mirror"}, {Type: "network_mirror"}, {Type: "direct"}, {Type: "dev_overrides"}}
	content, _, diags := body.PartialContent(&hcl.BodySchema{Blocks: methods})
	if diags.HasErrors() {
		return "", "", fmt.Errorf("reading the CLI config's provider_installation: %s", diags.Error())
	}
	for _, b := range content.Blocks {
		switch b.Type {
		case "direct":
			return "", "", nil
		case "filesystem_mirror":
			fsMirror, err = stringAttr(b.Body, "path")
			return fsMirror, "", err
		case "network_mirror":
			netMirror, err = stringAttr(b.Body, "url")
			return "", netMirror, err
		}
	}
	return "", "", nil
}

// stringAttr is a block's string attribute, required.
func stringAttr(body hcl.Body, name string) (string, error) {
	content, _, diags := body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: name, Required: true}}})
	if diags.HasErrors() {
		return "", fmt.Errorf("reading the CLI config: %s", diags.Error())
	}
	v, diags := content.Attributes[name].Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
		return "", fmt.Errorf("reading the CLI config: %s is not a string", name)
	}
	return v.AsString(), nil
}
