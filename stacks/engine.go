package stacks

import (
	"fmt"

	"github.com/strata-iac/strata/engines"
)

// EngineChoice is the engine a unit asks for (§8.1), before resolution: the
// name and version as written, and which source named it.
type EngineChoice struct {
	Name    string `json:"name"`
	Version string `json:"version"` // exact, constraint, "latest", or "" for terraform on PATH
	// From names the source: "stack <name>", a version file's path,
	// "workflows[i]", "engine", "default_tf_version" or "PATH".
	From string `json:"-"`
}

// Supported reports whether strata can run the engine.
func (e EngineChoice) Supported() bool { return e.Name == "terraform" || e.Name == "tofu" }

// EngineFor chooses a unit's engine (§8.1): its stack's engine (nearest
// ancestor), else a .terraform-version / .opentofu-version file in its dir
// or above up to the root, else the first matching workflow's engine, else
// the top-level engine or default_tf_version, else terraform from PATH. The
// first source that names an engine gives both name and version.
func (p *Project) EngineFor(u *Unit) (EngineChoice, error) {
	if e := u.Stack.Engine; e != nil {
		return EngineChoice{Name: e.Name.Value, Version: e.VersionString().Value, From: "stack " + u.Stack.EngineOf}, nil
	}
	spec, file, ok, err := engines.VersionFile(p.Root, absDir(p.Root, u.Dir))
	if err != nil {
		return EngineChoice{}, fmt.Errorf("%s: %w", u.Name(), err)
	}
	if ok {
		return EngineChoice{Name: spec.Name, Version: spec.Version, From: relTo(p.Root, file)}, nil
	}
	if w := p.WorkflowFor(u); w != nil {
		if w.Engine != nil {
			return EngineChoice{Name: w.Engine.Name.Value, Version: w.Engine.VersionString().Value, From: "workflow " + w.TagQuery.Value}, nil
		}
		if w.TerraformVersion.Set {
			return EngineChoice{Name: "terraform", Version: w.TerraformVersion.Value, From: "workflow " + w.TagQuery.Value}, nil
		}
		if w.Terragrunt.Value {
			return EngineChoice{Name: "terragrunt", From: "workflow " + w.TagQuery.Value}, nil
		}
		if w.Cdktf.Value {
			return EngineChoice{Name: "cdktf", From: "workflow " + w.TagQuery.Value}, nil
		}
	}
	return p.TopLevelEngine(), nil
}

// TopLevelEngine is the engine of the repository as a whole: the top-level
// engine, else default_tf_version, else terraform from PATH. Units fall
// back to it, and commands outside any unit (fmt, version) use it.
func (p *Project) TopLevelEngine() EngineChoice {
	if e := p.Config.Engine; e != nil {
		return EngineChoice{Name: e.Name.Value, Version: e.VersionString().Value, From: "engine"}
	}
	if v := p.Config.DefaultTFVersion; v.Set {
		return EngineChoice{Name: "terraform", Version: v.Value, From: "default_tf_version"}
	}
	return EngineChoice{Name: "terraform", From: "PATH"}
}
