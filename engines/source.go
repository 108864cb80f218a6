package engines

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"
)

// A source is one place an engine binary can come from. The Installer tries
// its sources in order (cache, path, download, build) and keeps every
// failure for the final error.
type source interface {
	// kind names the source in errors and in Engine.Source.
	kind() string
	// usable says, without doing any work, why the source cannot provide
	// name at v (not enabled, offline, a version it cannot build), or nil.
	usable(name string, v *version.Version) error
	// installs reports whether get puts down a new binary (download, build)
	// rather than finding one that exists (cache, path). The Installer runs
	// installing sources under the version's lock, in a staging directory
	// inside the cache, and moves the verified result into place.
	installs() bool
	// get returns the path of a binary for name at v. An installing source
	// writes it into dir, an empty staging directory; a finding source
	// ignores dir and returns a binary it has verified.
	get(ctx context.Context, name string, v *version.Version, dir string) (string, error)
}

// Attempt is one source tried for an engine, and why it failed.
type Attempt struct {
	Source string
	Err    error
}

// UnavailableError says no source could provide an engine version; it lists
// every source tried, in order, and why each failed.
type UnavailableError struct {
	Name     string
	Version  string
	Attempts []Attempt
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s is not available:", e.Name, e.Version)
	for _, a := range e.Attempts {
		fmt.Fprintf(&b, "\n  %s: %s", a.Source, indent(a.Err.Error()))
	}
	return b.String()
}

// Unwrap gives the attempts' errors, so errors.Is and errors.As see them.
func (e *UnavailableError) Unwrap() []error {
	errs := make([]error, len(e.Attempts))
	for i, a := range e.Attempts {
		errs[i] = a.Err
	}
	return errs
}

// indent keeps a multi-line cause under its source's line.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ")
}
