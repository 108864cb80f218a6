package engines

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/go-version"
)

// Engine names.
const (
	Terraform = "terraform"
	Tofu      = "tofu"
)

// Latest is the version that asks for the highest release that is not a
// prerelease.
const Latest = "latest"

// ErrUnsupportedEngine is wrapped by the SpecError for an engine name other
// than terraform or tofu, so the config layer can tell "unsupported engine"
// (a warning at load, a failed unit at run time) from a malformed spec.
var ErrUnsupportedEngine = errors.New("unsupported engine")

// Spec asks for an engine: Name is "terraform" or "tofu"; Version is an exact
// version ("1.5.7"), a go-version constraint ("~> 1.6", ">= 1.5, < 1.9") or
// "latest".
type Spec struct {
	Name    string
	Version string
}

// String gives the spec as people write it: "terraform 1.5.7",
// "tofu ~> 1.8".
func (s Spec) String() string {
	return s.Name + " " + s.Version
}

// SpecError says what is wrong with one field of a Spec. Field is "name" or
// "version", the key a config error should point at.
type SpecError struct {
	Field  string
	Value  string
	Reason string
	Err    error
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("engine %s %q: %s", e.Field, e.Value, e.Reason)
}

func (e *SpecError) Unwrap() error { return e.Err }

var (
	exactVersionRe   = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	partialVersionRe = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+)?$`)
)

// ParseSpec checks an engine name and version and returns them in canonical
// form: names are lower case, an exact version loses a leading "v"
// ("v1.5.7" is "1.5.7"), "latest" is lower case and an empty version means
// "latest". Errors are *SpecError.
func ParseSpec(name, ver string) (Spec, error) {
	s := Spec{Name: strings.TrimSpace(name), Version: strings.TrimSpace(ver)}
	if err := checkName(s.Name); err != nil {
		return Spec{}, err
	}
	req, err := parseRequirement(s.Version)
	if err != nil {
		return Spec{}, err
	}
	switch {
	case req.latest:
		s.Version = Latest
	case req.exact != nil:
		s.Version = req.exact.String()
	}
	return s, nil
}

// Validate reports whether s would be accepted by ParseSpec.
func (s Spec) Validate() error {
	_, err := ParseSpec(s.Name, s.Version)
	return err
}

func checkName(name string) error {
	switch name {
	case Terraform, Tofu:
		return nil
	case "":
		return &SpecError{Field: "name", Value: name, Reason: "is empty: write terraform or tofu"}
	}
	switch strings.ToLower(name) {
	case Terraform, Tofu:
		return &SpecError{Field: "name", Value: name, Reason: fmt.Sprintf("write %s in lower case", strings.ToLower(name))}
	case "opentofu":
		return &SpecError{Field: "name", Value: name, Reason: "the OpenTofu engine is called tofu", Err: ErrUnsupportedEngine}
	}
	return &SpecError{
		Field:  "name",
		Value:  name,
		Reason: fmt.Sprintf("engine %s is not supported: strata runs terraform and tofu", name),
		Err:    ErrUnsupportedEngine,
	}
}

// requirement is a parsed Spec.Version: exactly one of exact, constraints
// and latest is set.
type requirement struct {
	exact       *version.Version
	constraints version.Constraints
	latest      bool
	// prerelease is set when a constraint names a prerelease version; only
	// then may a prerelease match.
	prerelease bool
}

func parseRequirement(v string) (requirement, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || strings.EqualFold(v, Latest):
		return requirement{latest: true}, nil
	case exactVersionRe.MatchString(strings.TrimSpace(strings.TrimPrefix(v, "="))):
		// "= 1.5.7" asks for exactly what "1.5.7" does.
		ev, err := version.NewVersion(strings.TrimSpace(strings.TrimPrefix(v, "=")))
		if err != nil {
			return requirement{}, &SpecError{Field: "version", Value: v, Reason: err.Error(), Err: err}
		}
		return requirement{exact: ev}, nil
	case partialVersionRe.MatchString(v):
		full := strings.TrimPrefix(v, "v")
		if strings.Count(full, ".") == 0 {
			full += ".0"
		}
		return requirement{}, &SpecError{
			Field:  "version",
			Value:  v,
			Reason: fmt.Sprintf("is not an exact version: write %s.0, or a constraint such as \"~> %s.0\"", full, full),
		}
	}
	if strings.HasPrefix(v, "latest:") || v == "min-required" || v == "latest-allowed" {
		return requirement{}, &SpecError{
			Field:  "version",
			Value:  v,
			Reason: "is tfenv syntax strata does not read: write an exact version, \"latest\" or a constraint such as \"~> 1.5\"",
		}
	}
	if strings.Contains(v, "||") {
		return requirement{}, &SpecError{
			Field:  "version",
			Value:  v,
			Reason: "version constraints have no \"or\"; commas mean \"and\" (\">= 1.5, < 1.9\")",
		}
	}
	cs, err := version.NewConstraint(v)
	if err != nil {
		return requirement{}, &SpecError{
			Field:  "version",
			Value:  v,
			Reason: "is neither an exact version (1.5.7), \"latest\" nor a version constraint (\"~> 1.6\", \">= 1.5, < 1.9\")",
			Err:    err,
		}
	}
	r := requirement{constraints: cs}
	for _, c := range cs {
		cv, err := version.NewVersion(strings.TrimLeft(c.String(), "=!<>~ "))
		if err == nil && cv.Prerelease() != "" {
			r.prerelease = true
		}
	}
	return r, nil
}

// matches reports whether v satisfies the requirement. A prerelease never
// satisfies "latest", nor a constraint that names no prerelease (go-version
// enforces that for most operators but not for "!=").
func (r requirement) matches(v *version.Version) bool {
	switch {
	case r.exact != nil:
		return r.exact.Equal(v)
	case v.Prerelease() != "" && !r.prerelease:
		return false
	case r.latest:
		return true
	}
	return r.constraints.Check(v)
}

// highest returns the highest version in vs that satisfies r, or nil.
func (r requirement) highest(vs []*version.Version) *version.Version {
	var best *version.Version
	for _, v := range vs {
		if r.matches(v) && (best == nil || v.GreaterThan(best)) {
			best = v
		}
	}
	return best
}
