package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// rawArgs is the argv terraform-exec would run for an init or a plan, its
// fixed flags included, with the flags it cannot express (Extra) at the
// end. Only invocations that carry such flags are run this way.
func rawArgs(inv Invocation) []string {
	switch {
	case inv.Init != nil:
		a := inv.Init
		argv := []string{"init", "-no-color", "-input=false"}
		backend, get := true, true
		if a.Backend != nil {
			backend = *a.Backend
		}
		if a.Get != nil {
			get = *a.Get
		}
		argv = append(argv, "-backend="+strconv.FormatBool(backend), "-get="+strconv.FormatBool(get), "-upgrade="+strconv.FormatBool(a.Upgrade))
		if a.Reconfigure {
			argv = append(argv, "-reconfigure")
		}
		if a.ForceCopy {
			argv = append(argv, "-force-copy")
		}
		for _, b := range a.BackendConfig {
			argv = append(argv, "-backend-config="+b)
		}
		for _, p := range a.PluginDir {
			argv = append(argv, "-plugin-dir="+p)
		}
		return append(argv, a.Extra...)
	case inv.Plan != nil:
		p := inv.Plan
		argv := []string{"plan", "-no-color", "-input=false", "-detailed-exitcode", "-out=" + p.Out}
		if p.VarFile != "" {
			argv = append(argv, "-var-file="+p.VarFile)
		}
		return append(argv, p.Args.Flags()...)
	}
	return nil
}

// runRaw runs the engine directly, as terraform-exec does: the step's
// environment with TF_IN_AUTOMATION set, its own process group, one
// SIGINT when ctx ends (a SIGKILL after killAfter, when set), and a failure
// carrying the engine's stderr. It returns the exit code.
func (x *executor) runRaw(ctx context.Context, inv Invocation, argv []string, out, errOut io.Writer) (int, error) {
	if ctx.Err() != nil {
		return 1, ctx.Err()
	}
	cmd := exec.Command(inv.Engine, argv...)
	cmd.Dir = inv.Dir
	cmd.Env = append(envList(inv.Env), "TF_IN_AUTOMATION=1")
	ownProcessGroup(cmd)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, io.MultiWriter(errOut, &stderr)
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cmd.Process.Signal(os.Interrupt)
			if x.killAfter > 0 {
				select {
				case <-done:
				case <-time.After(x.killAfter):
					cmd.Process.Kill()
				}
			}
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if ctx.Err() != nil {
			return code, fmt.Errorf("%w: %w\n%s", ctx.Err(), err, stderr.String())
		}
		return code, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return 0, err
}
