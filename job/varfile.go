package job

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// varFileInput is what a unit's var file is made from (docs/behaviour.md#input-variables).
type varFileInput struct {
	Dir string // absolute module dir
	// Declared are the variables the module declares, as the project read
	// it once; nil when it could not be read (the engine says why).
	Declared map[string]*tfconfig.Variable
	// TFVars are TF_VAR_ values by variable name, lowest precedence first:
	// strata's own environment, then the step's env.
	TFVars []map[string]string
	// Inputs are values wired from other stacks' outputs, as JSON.
	Inputs map[string]json.RawMessage
	// UserVars and UserVarFiles are the user's -var and -var-file.
	UserVars     []string
	UserVarFiles []string
}

// buildVarFile returns the JSON var file strata passes to plan, or nil when
// it would be empty. A TF_VAR_ entry is written only for a variable the
// module declares and that no terraform.tfvars, *.auto.tfvars[.json], -var
// or -var-file sets, so Terraform's own precedence is kept; values typed
// other than string are parsed as Terraform parses TF_VAR_ values.
func buildVarFile(in varFileInput) ([]byte, error) {
	if len(in.Inputs) == 0 && !anyValues(in.TFVars) {
		return nil, nil
	}
	setElsewhere := varsSetByFiles(in.Dir, in.UserVarFiles)
	for _, v := range in.UserVars {
		if name, _, ok := strings.Cut(v, "="); ok {
			setElsewhere[strings.TrimSpace(name)] = true
		}
	}
	entries := map[string]json.RawMessage{}
	for _, level := range in.TFVars {
		for name, value := range level {
			decl, ok := in.Declared[name]
			if !ok || setElsewhere[name] {
				continue
			}
			raw, err := tfVarJSON(value, decl.Type)
			if err != nil {
				return nil, err
			}
			entries[name] = raw
		}
	}
	for name, raw := range in.Inputs {
		entries[name] = raw
	}
	if len(entries) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("{\n")
	for i, n := range names {
		key, _ := json.Marshal(n)
		b.WriteString("  " + string(key) + ": " + string(entries[n]))
		if i < len(names)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return []byte(b.String()), nil
}

func anyValues(levels []map[string]string) bool {
	for _, l := range levels {
		if len(l) > 0 {
			return true
		}
	}
	return false
}

// tfVarJSON converts a TF_VAR_ value to JSON: a string for string (or
// untyped) variables; otherwise the value is an HCL expression, as
// Terraform reads it.
func tfVarJSON(value, typ string) (json.RawMessage, error) {
	t := strings.TrimSpace(typ)
	if t == "" || t == "string" || t == "any" {
		b, err := json.Marshal(value)
		return b, err
	}
	expr, diags := hclsyntax.ParseExpression([]byte(value), "TF_VAR", hcl.InitialPos)
	if diags.HasErrors() {
		// Terraform would fail on this value too; pass it as a string so
		// the engine reports it in its own words.
		b, err := json.Marshal(value)
		return b, err
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		b, err := json.Marshal(value)
		return b, err
	}
	return ctyjson.SimpleJSONValue{Value: v}.MarshalJSON()
}

// varsSetByFiles returns the variables that terraform.tfvars,
// *.auto.tfvars[.json] in dir and the user's -var-file files set.
func varsSetByFiles(dir string, userFiles []string) map[string]bool {
	set := map[string]bool{}
	files := append([]string(nil), userFiles...)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		if n == "terraform.tfvars" || n == "terraform.tfvars.json" || strings.HasSuffix(n, ".auto.tfvars") || strings.HasSuffix(n, ".auto.tfvars.json") {
			files = append(files, filepath.Join(dir, n))
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if strings.HasSuffix(f, ".json") {
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) == nil {
				for k := range m {
					set[k] = true
				}
			}
			continue
		}
		file, diags := hclsyntax.ParseConfig(b, f, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		if body, ok := file.Body.(*hclsyntax.Body); ok {
			for name := range body.Attributes {
				set[name] = true
			}
		}
	}
	return set
}
