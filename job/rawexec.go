package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/strata-iac/strata/internal/ansi"
)

// runRaw runs the engine directly, as terraform-exec does: the step's
// environment with TF_IN_AUTOMATION set, its own process group, one
// SIGINT when ctx ends (a SIGKILL after killAfter, when set), and a failure
// carrying the engine's stderr. It returns the exit code.
func (x *Executor) runRaw(ctx context.Context, inv invocation, argv []string, out, errOut io.Writer) (int, error) {
	if ctx.Err() != nil {
		return 1, ctx.Err()
	}
	cmd := exec.Command(inv.Engine, argv...)
	cmd.Dir = inv.Dir
	cmd.Env = append(EnvList(inv.Env), "TF_IN_AUTOMATION=1")
	ownProcessGroup(cmd)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, io.MultiWriter(errOut, &stderr)
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	err := waitInterruptible(ctx, cmd, interruptProcess, x.killAfter)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		// The error is read (initRequired, transient, diagnostics) and
		// reported: without colour.
		text := ansi.Strip(stderr.String())
		if ctx.Err() != nil {
			return code, fmt.Errorf("%w: %w\n%s", ctx.Err(), err, text)
		}
		return code, fmt.Errorf("%w\n%s", err, text)
	}
	return 0, err
}
