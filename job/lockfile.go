package job

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/atomicfile"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
)

// A unit's lock file holds the hashes of the platforms the repository
// declares (docs/behaviour.md#lock-files): `providers lock` adds them, run
// by strata providers lock and after an init that wrote the lock file.
// The engine's lock command is the one writer: units whose lock command
// would read the same inputs get the lock file it wrote for the first of
// them, so one repository's units lock alike, and each distinct set of
// providers is fetched once per platform.

// lockFileName is the engines' dependency lock file.
const lockFileName = ".terraform.lock.hcl"

// lockCall is `providers lock`.
type lockCall struct {
	Args engineargs.LockArgs
}

func (c *lockCall) Argv() []string {
	argv := append([]string{"providers", "lock"}, c.Args.Mirror()...)
	for _, p := range c.Args.Platforms {
		argv = append(argv, "-platform="+p)
	}
	return append(argv, c.Args.Providers...)
}

// checksVersion: the lock command runs the argv terraform-exec would
// build, without its extra start of the engine for `version -json`:
// strata knows every engine's version once it resolved it.
func (*lockCall) checksVersion() bool { return false }

func (c *lockCall) run(ctx context.Context, x *Executor, _ *tfexec.Terraform, inv invocation, out, errOut io.Writer) (outcome, error) {
	_, err := x.runRaw(ctx, inv, append(c.Argv(), "-no-color"), out, errOut)
	return outcome{}, err
}

// lockFiles are the lock files the engine wrote in this run, by the
// inputs it read (inputsKey).
type lockFiles struct {
	mu    sync.Mutex
	wrote map[string]*lockResult
}

// lockResult is one lock command's lock file, ready once done is closed.
type lockResult struct {
	done chan struct{}
	data []byte
	from string // the unit it ran in
	ok   bool
}

// claim returns the result for key and whether the caller is the one to
// produce it (and must call finish). A caller that is not waits for the
// one that is: when that one published nothing, the caller tries again
// (and may produce it itself).
func (l *lockFiles) claim(ctx context.Context, key string) (*lockResult, bool, error) {
	for {
		l.mu.Lock()
		r, ok := l.wrote[key]
		if !ok {
			if l.wrote == nil {
				l.wrote = map[string]*lockResult{}
			}
			r = &lockResult{done: make(chan struct{})}
			l.wrote[key] = r
		}
		l.mu.Unlock()
		if !ok {
			return r, true, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-r.done:
		}
		if r.ok {
			return r, false, nil
		}
	}
}

// finish publishes a lock file; a failed lock command publishes nothing,
// and the next unit with the same inputs runs its own.
func (l *lockFiles) finish(key string, r *lockResult, data []byte, from string, ok bool) {
	l.mu.Lock()
	if ok {
		r.data, r.from, r.ok = data, from, true
	} else {
		delete(l.wrote, key)
	}
	l.mu.Unlock()
	close(r.done)
}

// lockArgs are the arguments of the unit's lock command: those given, the
// platforms the repository declares for it when none is given, and the
// CLI config's mirror when no mirror is given (the engine's lock command
// reads no provider_installation).
func (in *stepInput) lockArgs(given engineargs.LockArgs, platforms []string, stepEnv map[string]string) (engineargs.LockArgs, error) {
	a := given
	var err error
	if len(a.Platforms) == 0 {
		a.Platforms = platforms
	}
	if a.FSMirror != "" || a.NetMirror != "" {
		return a, nil
	}
	env := in.engineEnv(stepEnv)
	if _, ok := env["HOME"]; !ok {
		env["HOME"], _ = os.UserHomeDir()
	}
	a.FSMirror, a.NetMirror, err = engines.LockMirror(engines.CLIConfigFile(in.ur.Engine.Name, env))
	return a, err
}

// lock brings the unit's lock file to what the engine's lock command
// writes for args: the lock file another unit's command wrote for the
// same inputs in this run, else the command run here.
func (in *stepInput) lock(ctx context.Context, args engineargs.LockArgs, stepEnv map[string]string) error {
	path := filepath.Join(in.ur.Dir, lockFileName)
	before, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	key, ok := in.inputsKey("lock", struct {
		Args engineargs.LockArgs
		Lock []byte
	}{args, before})
	if !ok {
		return in.lockHere(ctx, args, stepEnv)
	}
	r, mine, err := in.run.lockFiles.claim(ctx, key)
	if err != nil {
		return err
	}
	if !mine {
		return in.lockCopy(path, before, r)
	}
	err = in.lockHere(ctx, args, stepEnv)
	data, rerr := os.ReadFile(path)
	in.run.lockFiles.finish(key, r, data, in.ur.Spec.Name(), err == nil && rerr == nil)
	return cmp.Or(err, rerr)
}

// lockInvocation is `providers lock` with args, and own over the unit's
// environment.
func (in *stepInput) lockInvocation(args engineargs.LockArgs, own map[string]string) invocation {
	return in.invocation(report.StepLock, own, &lockCall{Args: args})
}

// lockHere runs the engine's lock command in the unit.
func (in *stepInput) lockHere(ctx context.Context, args engineargs.LockArgs, stepEnv map[string]string) error {
	_, err := in.step(ctx, report.StepLock, in.lockInvocation(args, stepEnv), true)
	return err
}

// lockCopy writes the lock file another unit's lock command wrote for the
// same inputs, as a step of its own.
func (in *stepInput) lockCopy(path string, before []byte, r *lockResult) error {
	started := in.run.Now()
	var err error
	if !bytes.Equal(before, r.data) {
		err = atomicfile.Write(path, r.data, 0o644)
	}
	*in.reports = append(*in.reports, report.StepReport{Name: report.StepLockShared, StartedAt: started, FinishedAt: in.run.Now(), OK: err == nil})
	if err == nil {
		in.run.Console.UnitNote(in.ur.Spec.Name(), fmt.Sprintf("lock file as the engine wrote it for %s, whose providers and lock file are the same", r.from))
	}
	return err
}

// providersLock is the job of strata providers lock: the lock command
// with the platforms the repository declares for the unit.
func (j *job) providersLock(ctx context.Context) {
	args, err := j.in.lockArgs(j.run.EngineArgs.Lock, j.run.Project.LockPlatforms(), nil)
	if err == nil {
		err = j.in.lock(ctx, args, nil)
	}
	j.failed(ctx, report.StepLock, err)
}
