package engines

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, version string
		want          Spec
		field         string // of the *SpecError, when one is wanted
		reason        string
		unsupported   bool
	}{
		{name: "terraform", version: "1.5.7", want: Spec{"terraform", "1.5.7"}},
		{name: " tofu ", version: " v1.8.8 ", want: Spec{"tofu", "1.8.8"}},
		{name: "terraform", version: "= 1.5.7", want: Spec{"terraform", "1.5.7"}},
		{name: "terraform", version: "1.10.0-alpha20240807", want: Spec{"terraform", "1.10.0-alpha20240807"}},
		{name: "tofu", version: "~> 1.6", want: Spec{"tofu", "~> 1.6"}},
		{name: "terraform", version: ">= 1.5, < 1.9", want: Spec{"terraform", ">= 1.5, < 1.9"}},
		{name: "terraform", version: "LATEST", want: Spec{"terraform", "latest"}},
		{name: "tofu", version: "", want: Spec{"tofu", "latest"}},
		{name: "terraform", version: "1.5", field: "version", reason: `write 1.5.0, or a constraint such as "~> 1.5.0"`},
		{name: "terraform", version: "1", field: "version", reason: `write 1.0.0, or a constraint`},
		{name: "terraform", version: "~> 1.5 || ~> 1.6", field: "version", reason: "no \"or\""},
		{name: "terraform", version: "one point five", field: "version", reason: "is neither an exact version"},
		{name: "terraform", version: "latest:^1.5", field: "version", reason: "tfenv syntax"},
		{name: "terraform", version: "min-required", field: "version", reason: "tfenv syntax"},
		{name: "", version: "1.5.7", field: "name", reason: "is empty"},
		{name: "Terraform", version: "1.5.7", field: "name", reason: "write terraform in lower case"},
		{name: "opentofu", version: "1.8.8", field: "name", reason: "called tofu", unsupported: true},
		{name: "terragrunt", version: "0.50.0", field: "name", reason: "engine terragrunt is not supported", unsupported: true},
		{name: "cdktf", version: "", field: "name", reason: "not supported", unsupported: true},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+tt.version, func(t *testing.T) {
			got, err := ParseSpec(tt.name, tt.version)
			if tt.field == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseSpec = %+v, %v; want %+v", got, err, tt.want)
				}
				if err := got.Validate(); err != nil {
					t.Errorf("canonical spec does not validate: %v", err)
				}
				return
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("want *SpecError, got %v", err)
			}
			if se.Field != tt.field || !strings.Contains(se.Error(), tt.reason) {
				t.Errorf("error %q on field %q; want field %q mentioning %q", se, se.Field, tt.field, tt.reason)
			}
			if errors.Is(err, ErrUnsupportedEngine) != tt.unsupported {
				t.Errorf("errors.Is(ErrUnsupportedEngine) = %v", !tt.unsupported)
			}
		})
	}
}

func TestSpecErrorNamesTheValue(t *testing.T) {
	_, err := ParseSpec("terraform", "1.5")
	if got := err.Error(); !strings.HasPrefix(got, `engine version "1.5": `) {
		t.Errorf("error %q", got)
	}
}

func TestRequirementHighest(t *testing.T) {
	t.Parallel()
	listed := []string{"1.5.7", "1.6.0", "1.6.6", "1.7.5", "1.8.0-rc1", "1.8.5", "1.9.0-beta2", "1.10.0-alpha20240807", "0.12.29"}
	var vs []*version.Version
	for _, s := range listed {
		vs = append(vs, version.Must(version.NewVersion(s)))
	}
	tests := []struct{ spec, want string }{
		{"latest", "1.8.5"},
		{"~> 1.6", "1.8.5"},
		{"~> 1.6.0", "1.6.6"},
		{">= 1.5, < 1.8", "1.7.5"},
		{"< 1.0", "0.12.29"},
		{"1.6.0", "1.6.0"},
		{"!= 1.8.5", "1.7.5"},
		// A constraint naming a prerelease matches prereleases of that core
		// version only.
		{">= 1.8.0-rc1", "1.8.5"},
		{"1.9.0-beta2", "1.9.0-beta2"},
		{"= 1.9.0-beta2", "1.9.0-beta2"},
		{"~> 1.9", ""},
		{"> 1.8.5", ""},
		{"2.0.0", ""},
	}
	for _, tt := range tests {
		req, err := parseRequirement(tt.spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		got := req.highest(vs)
		switch {
		case tt.want == "" && got != nil:
			t.Errorf("%q resolved to %s, want nothing", tt.spec, got)
		case tt.want != "" && (got == nil || got.String() != tt.want):
			t.Errorf("%q resolved to %v, want %s", tt.spec, got, tt.want)
		}
	}
}
