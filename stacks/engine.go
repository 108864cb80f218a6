package stacks

import (
	"fmt"

	"github.com/strata-iac/strata/stacks/config"
)

// EngineSource is the kind of source that named a unit's engine, in the
// order they are tried.
type EngineSource int

const (
	SourceStack            EngineSource = iota // the stack's engine (nearest ancestor)
	SourceVersionFile                          // .terraform-version / .opentofu-version
	SourceWorkflow                             // the first matching workflow
	SourceTopLevel                             // the top-level engine
	SourceDefaultTFVersion                     // default_tf_version
	SourcePath                                 // none: terraform from PATH
)

// EngineChoice is the engine a unit asks for, before resolution: the name
// and version as written, and which source named it.
type EngineChoice struct {
	Name    string       `json:"name"`
	Version string       `json:"version"` // exact, constraint, "latest", or "" for terraform on PATH
	Source  EngineSource `json:"-"`
	// From names the source for people: "stack <name>", a version file's
	// path, "workflow <query>", "engine", "default_tf_version" or "PATH".
	From string `json:"-"`
	// Pos is where the config names the engine, zero when no line of it
	// does (a version file, PATH).
	Pos config.Pos `json:"-"`
}

// OnPath reports whether no source names an engine, so the unit runs the
// terraform on PATH.
func (e EngineChoice) OnPath() bool { return e.Source == SourcePath }

// Supported reports whether strata can run the engine.
func (e EngineChoice) Supported() bool { return e.Name == "terraform" || e.Name == "tofu" }

// EngineFor chooses a unit's engine: its stack's engine (nearest
// ancestor), else a .terraform-version / .opentofu-version file in its dir
// or above up to the root, else the first matching workflow's engine, else
// the top-level engine or default_tf_version, else terraform from PATH. The
// first source that names an engine gives both name and version.
func (p *Project) EngineFor(u *Unit) (EngineChoice, error) {
	if e := u.Stack.Engine; e != nil {
		return EngineChoice{Name: e.Name.Value, Version: e.VersionString().Value, Source: SourceStack, From: "stack " + u.Stack.EngineOf, Pos: e.Name.Pos}, nil
	}
	spec, file, ok, err := p.versionFiles.Find(u.Dir)
	if err != nil {
		return EngineChoice{}, fmt.Errorf("%s: %w", u.Name(), err)
	}
	if ok {
		return EngineChoice{Name: spec.Name, Version: spec.Version, Source: SourceVersionFile, From: relTo(p.Root, file)}, nil
	}
	if w := p.WorkflowFor(u); w != nil {
		if w.Engine != nil {
			return EngineChoice{Name: w.Engine.Name.Value, Version: w.Engine.VersionString().Value, Source: SourceWorkflow, From: "workflow " + w.TagQuery.Value, Pos: w.Engine.Name.Pos}, nil
		}
		if w.TerraformVersion.Set {
			return EngineChoice{Name: "terraform", Version: w.TerraformVersion.Value, Source: SourceWorkflow, From: "workflow " + w.TagQuery.Value}, nil
		}
		if w.Terragrunt.Value {
			return EngineChoice{Name: "terragrunt", Source: SourceWorkflow, From: "workflow " + w.TagQuery.Value, Pos: w.Terragrunt.Pos}, nil
		}
		if w.Cdktf.Value {
			return EngineChoice{Name: "cdktf", Source: SourceWorkflow, From: "workflow " + w.TagQuery.Value, Pos: w.Cdktf.Pos}, nil
		}
	}
	return p.TopLevelEngine(), nil
}

// TopLevelEngine is the engine of the repository as a whole: the top-level
// engine, else default_tf_version, else terraform from PATH. Units fall
// back to it, and commands outside any unit (fmt, version) use it.
func (p *Project) TopLevelEngine() EngineChoice {
	if e := p.Config.Engine; e != nil {
		return EngineChoice{Name: e.Name.Value, Version: e.VersionString().Value, Source: SourceTopLevel, From: "engine", Pos: e.Name.Pos}
	}
	if v := p.Config.DefaultTFVersion; v.Set {
		return EngineChoice{Name: "terraform", Version: v.Value, Source: SourceDefaultTFVersion, From: "default_tf_version"}
	}
	return EngineChoice{Name: "terraform", Source: SourcePath, From: "PATH"}
}

// LockPlatforms are the platforms whose provider hashes every unit's lock
// file should hold (docs/behaviour.md#lock-files); nil when the config
// declares none, and the engine's own platform is then enough.
func (p *Project) LockPlatforms() []string {
	if p.Config.LockPlatforms == nil {
		return nil
	}
	out := make([]string, 0, len(*p.Config.LockPlatforms))
	for _, pl := range *p.Config.LockPlatforms {
		out = append(out, pl.Value)
	}
	return out
}
