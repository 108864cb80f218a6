package engines

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/strata-iac/strata/internal/environ"
)

// identity is what a binary says it is.
type identity struct {
	name    string
	version *version.Version
}

// identifyTimeout bounds one "version -json" run; a healthy engine answers
// in tens of milliseconds.
const identifyTimeout = 30 * time.Second

// identify names a binary and its version with one start of it. A release
// build names itself in its Go build information (terraform and tofu print
// the same JSON keys, "terraform_version", but their main modules differ),
// and "<path> version -json" gives the version. A binary without build
// information (a wrapper script, a shim) is asked its plain "version"
// instead, whose first line gives both ("Terraform v1.5.7", "OpenTofu
// v1.8.8"): asking it twice would start the engine behind it twice.
func identify(ctx context.Context, path string) (identity, error) {
	ctx, cancel := context.WithTimeout(ctx, identifyTimeout)
	defer cancel()

	name := nameFromBuildInfo(path)
	if name == "" {
		return identifyByText(ctx, path)
	}
	out, err := runVersion(ctx, path, "version", "-json")
	if err != nil {
		return identity{}, err
	}
	var doc struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Version == "" {
		return identity{}, fmt.Errorf("%s version -json printed no engine version: %q", path, firstLine(out))
	}
	v, err := version.NewVersion(doc.Version)
	if err != nil {
		return identity{}, fmt.Errorf("%s version -json: %w", path, err)
	}
	return identity{name: name, version: v}, nil
}

// identifyByText names a binary and its version from the first line of its
// plain "version" output.
func identifyByText(ctx context.Context, path string) (identity, error) {
	text, err := runVersion(ctx, path, "version")
	if err != nil {
		return identity{}, err
	}
	name := nameFromVersionText(text)
	if name == "" {
		return identity{}, fmt.Errorf("%s is neither terraform nor tofu: its version output starts %q", path, firstLine(text))
	}
	line := firstLine(text)
	word := strings.Fields(line[strings.Index(line, " v")+2:] + " ")[0]
	v, err := version.NewVersion(word)
	if err != nil {
		return identity{}, fmt.Errorf("%s version: no engine version in %q: %w", path, line, err)
	}
	return identity{name: name, version: v}, nil
}

// runVersion runs one version command of an engine. CHECKPOINT_DISABLE keeps
// terraform from asking the network whether it is outdated, and TF_CLI_ARGS
// is dropped so the user's default flags cannot change the output.
func runVersion(ctx context.Context, path string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	env := make([]string, 0, len(os.Environ())+1)
	// The credentials strata reads reach no engine (docs/behaviour.md#credentials).
	for _, kv := range environ.WithoutCredentials(os.Environ()) {
		if strings.HasPrefix(kv, "TF_CLI_ARGS=") || strings.HasPrefix(kv, "TF_CLI_ARGS_version=") || strings.HasPrefix(kv, "CHECKPOINT_DISABLE=") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "CHECKPOINT_DISABLE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s %s: no answer within %s", path, strings.Join(args, " "), identifyTimeout)
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%s %s: %w: %s", path, strings.Join(args, " "), err, firstLine([]byte(msg)))
		}
		return nil, fmt.Errorf("%s %s: %w", path, strings.Join(args, " "), err)
	}
	return stdout.Bytes(), nil
}

// Main module paths of the engines' release builds.
const (
	terraformModule = "github.com/hashicorp/terraform"
	tofuModule      = "github.com/opentofu/opentofu"
)

func nameFromBuildInfo(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, p := range []string{info.Main.Path, info.Path} {
		switch {
		case p == terraformModule || strings.HasPrefix(p, terraformModule+"/"):
			return Terraform
		case p == tofuModule || strings.HasPrefix(p, tofuModule+"/"):
			return Tofu
		}
	}
	return ""
}

func nameFromVersionText(out []byte) string {
	line := firstLine(out)
	switch {
	case strings.HasPrefix(line, "Terraform v"):
		return Terraform
	case strings.HasPrefix(line, "OpenTofu v"):
		return Tofu
	}
	return ""
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// mismatchError says a binary is not the engine it was expected to be.
type mismatchError struct {
	path      string
	got, want identity
}

func (e *mismatchError) Error() string {
	return fmt.Sprintf("%s is %s %s, not %s %s", e.path, e.got.name, e.got.version, e.want.name, e.want.version)
}

// check compares what a binary says it is with what was asked for.
func (id identity) check(path, name string, v *version.Version) error {
	if id.name != name || !id.version.Equal(v) {
		return &mismatchError{path: path, got: id, want: identity{name: name, version: v}}
	}
	return nil
}
