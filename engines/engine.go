package engines

import (
	"runtime"

	"github.com/hashicorp/go-version"
)

// Where an Engine came from.
const (
	SourceCache    = "cache"
	SourcePath     = "path"
	SourceDownload = "download"
	SourceBuild    = "build"
)

// Engine is a verified engine binary: running Path with "version -json"
// reported Name and Version.
type Engine struct {
	Name    string           `json:"name"`
	Version *version.Version `json:"version"`
	Path    string           `json:"path"`
	// Source is how this run obtained the binary: "cache", "path",
	// "download" or "build".
	Source string `json:"source"`
}

// RegistryHost is the provider registry a provider source without a host
// names, for this engine.
func (e *Engine) RegistryHost() string {
	if e.Name == "tofu" {
		return "registry.opentofu.org"
	}
	return "registry.terraform.io"
}

// String gives the engine as "terraform 1.5.7".
func (e *Engine) String() string {
	return e.Name + " " + e.Version.String()
}

// binaryName is the file name of an engine's executable.
func binaryName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}
