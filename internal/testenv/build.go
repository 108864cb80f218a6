package testenv

import (
	"os"
	"os/exec"
)

// BuildFlags are how strata is built for users (.goreleaser.yaml and
// `make build`): a static binary (CGO_ENABLED=0) without code whose
// package initialisation every command would otherwise pay for at start:
// urfave/cli's Markdown and man page generator, and the Google Cloud
// Storage client's gRPC DirectPath (strata uses its JSON API). Tests that
// run the built binary build it the same way, so what they measure is
// what ships.
var BuildFlags = []string{"-trimpath", "-tags", BuildTags}

// BuildTags are the build tags of BuildFlags.
const BuildTags = "urfave_cli_no_docs,disable_grpc_modules"

// BuildStrata builds the strata command in pkgDir (a path to cmd/strata)
// into out, as it ships, and returns go build's output.
func BuildStrata(pkgDir, out string) ([]byte, error) {
	args := append([]string{"build"}, BuildFlags...)
	cmd := exec.Command("go", append(args, "-o", out, ".")...)
	cmd.Dir = pkgDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}
