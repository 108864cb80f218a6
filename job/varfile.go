package job

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/strata-iac/strata/internal/contenthash"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/runstate"
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

// prepareInputs computes the unit's var file content and its content
// digest.
func (in *stepInput) prepareInputs() (varFile []byte, err error) {
	return in.prepareInputsWith(in.run.EngineArgs, nil)
}

// prepareInputsWith computes the var file from strata's TF_VAR_ values,
// then those env steps and the step's env set, and the digest over the
// given engine arguments. Nothing is written: the var file exists only
// while the engine call that reads it runs (writeVarFile), since it holds
// values from strata's environment and other stacks' outputs.
func (in *stepInput) prepareInputsWith(ea engineargs.EngineArgs, stepTFVars map[string]string) (varFile []byte, err error) {
	u := in.ur.Spec
	fromEnvSteps := map[string]string{}
	for k, v := range in.Set {
		if name, ok := strings.CutPrefix(k, "TF_VAR_"); ok {
			fromEnvSteps[name] = v
		}
	}
	vin := varFileInput{
		Dir:          in.ur.Dir,
		Declared:     in.run.Project.Variables(u.Dir),
		TFVars:       []map[string]string{in.run.TFVars, in.ur.Vars.tfVars, fromEnvSteps, stepTFVars},
		Inputs:       in.ur.InputVals,
		UserVars:     ea.Plan.Vars,
		UserVarFiles: ea.Plan.VarFiles,
	}
	content, err := buildVarFile(vin)
	if err != nil {
		return nil, fmt.Errorf("var file: %w", err)
	}
	// The digest leaves out what env steps set: they run as part of the
	// plan workflow, and a saved plan is reused without running it again,
	// so the reuse decision is made before they run (reuseBeforeWorkflow).
	// Their values are in the plan itself.
	digestContent := content
	if len(fromEnvSteps) > 0 {
		vin.TFVars = []map[string]string{in.run.TFVars, in.ur.Vars.tfVars, stepTFVars}
		if digestContent, err = buildVarFile(vin); err != nil {
			return nil, fmt.Errorf("var file: %w", err)
		}
	}
	targets, err := in.targets()
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), ea.Text...), targetArgs(targets)...)
	// The files do not change while a job runs: a digest of the same
	// inputs (the reuse check, then the plan it falls back to) is read,
	// not hashed again.
	key := string(digestContent) + "\x00" + strings.Join(args, "\x00")
	if in.memo.key == key && in.memo.digest != "" {
		return content, nil
	}
	in.memo.digest, err = contenthash.Digest(contenthash.DigestInput{
		Root: in.run.Project.Root, Dir: u.Dir, ModuleDirs: in.run.Project.LocalModules(u.Dir), OtherRoots: in.run.otherRoots(u.Dir),
		FilePatterns: u.FilePatterns(), Reads: in.run.Project.ReadPatterns(u.Dir), Engine: in.ur.Engine.Name, EngineVersion: in.ur.Engine.Version.String(),
		Workspace: u.Workspace, Stack: u.Stack.Name, Variables: in.ur.Vars.byName,
		EngineArgs: args, VarFile: digestContent,
	})
	if err == nil {
		in.memo.key = key
	}
	return content, err
}

// writeVarFile writes the unit's var file for one engine call and returns
// its path ("" when there is nothing to write) and the function that
// empties it when the call ends. The file keeps its name from call to call
// (runstate.WriteScratch); a crash leaves nothing to keep.
func (in *stepInput) writeVarFile(content []byte) (string, func(), error) {
	if content == nil {
		os.Remove(in.ur.VarFile)
		return "", func() {}, nil
	}
	f, err := runstate.WriteScratch(in.ur.VarFile, content)
	if err != nil {
		return "", func() {}, err
	}
	return in.ur.VarFile, func() { f.Empty() }, nil
}

func targetArgs(targets []string) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = "-target=" + t
	}
	return out
}

// targets are the stack's targets, substituted.
func (in *stepInput) targets() ([]string, error) {
	out := make([]string, len(in.ur.Spec.Stack.Targets))
	for i, t := range in.ur.Spec.Stack.Targets {
		v, err := in.subst(t, "targets")
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// otherRoots lists the dirs of other root modules below dir (and below its
// local modules), which the content digest leaves out.
func (r *Run) otherRoots(dir string) []string {
	out := r.Project.RootsBelow(dir)
	for _, m := range r.Project.LocalModules(dir) {
		out = append(out, r.Project.RootsBelow(m)...)
	}
	return out
}
