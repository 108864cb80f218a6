package job

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/engines"
	"github.com/strata-iac/strata/internal/contenthash"
	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// The init steps of a unit's job: init when the unit's data dir is not
// current, and its workspace (docs/behaviour.md#steps-of-a-unit).

// initStep is an `init` step: init with the step's extra_args and env,
// unless the unit's data dir is current.
type initStep struct{}

// initRequest is an init step as built: init's arguments, the step's own
// env, and whether it runs even when the data dir is current.
type initRequest struct {
	Args   engineargs.InitArgs
	Env    map[string]string
	Always bool
}

// build is the init the step asks for.
func (*initStep) build(in *stepInput) (initRequest, error) {
	ea, own, err := in.engineStep(command.Init)
	if err != nil {
		return initRequest{}, err
	}
	return initRequest{Args: ea.Init, Env: own, Always: in.InitAlways}, nil
}

func (k *initStep) run(ctx context.Context, in *stepInput) stepOutput {
	req, err := k.build(in)
	if err != nil {
		return stepOutput{Err: err, Failed: report.StepInit}
	}
	err = in.engine.init(ctx, in, req)
	return stepOutput{Reports: *in.reports, Err: err, Failed: report.StepInit}
}

// init runs the init unless the unit's data dir is current.
func (*unitEngine) init(ctx context.Context, in *stepInput, req initRequest) error {
	return in.initUnlessCurrent(ctx, req.Always, false, req.Args, req.Env)
}

// initInvocation is `init` with args, and own (the step's env) over
// the unit's environment.
func (in *stepInput) initInvocation(args engineargs.InitArgs, own map[string]string) invocation {
	return in.invocation(report.StepInit, own, &initCall{Args: args, Version: in.EngineVersion})
}

// workspaceInvocation selects the workspace ws, or creates it (create).
func (in *stepInput) workspaceInvocation(ws string, create bool) invocation {
	return in.invocation(report.StepWorkspace, nil, &workspaceCall{Name: ws, New: create})
}

// init is initUnlessCurrent for the job's own inits (before an apply, an
// output, a validate): its failure is the job's.
func (j *job) init(ctx context.Context, always, noBackend bool, args engineargs.InitArgs, stepEnv map[string]string) bool {
	return !j.failed(ctx, report.StepInit, j.in.initUnlessCurrent(ctx, always, noBackend, args, stepEnv))
}

// initUnlessCurrent runs init unless the unit's data dir is current
// (docs/behaviour.md#steps-of-a-unit): its fingerprint equals the one
// recorded at the last successful init.
func (in *stepInput) initUnlessCurrent(ctx context.Context, always, noBackend bool, args engineargs.InitArgs, stepEnv map[string]string) error {
	if !always && in.ur.Inited {
		return nil
	}
	fp, fpErr := in.fingerprint(args)
	if !always && fpErr == nil && in.initCurrent(fp) {
		in.ur.Inited, in.ur.InitArgs = true, args
		return nil
	}
	_, err := in.initNow(ctx, noBackend, args, stepEnv)
	return err
}

func (in *stepInput) initNow(ctx context.Context, noBackend bool, args engineargs.InitArgs, stepEnv map[string]string) (outcome, error) {
	if noBackend {
		f := false
		args.Backend = &f
	}
	// Terraform's plugin cache is not safe under parallel inits that write
	// it: an init that may write it runs alone, across strata processes
	// too; inits that find every provider there only read it, and overlap
	// (docs/architecture.md#what-an-init-costs).
	env := in.engineEnv(stepEnv)
	seeded := in.seedLock(ctx, args, env)
	ok := false
	defer func() { seeded(ok) }()
	release := func() {}
	if cache := env["TF_PLUGIN_CACHE_DIR"]; cache != "" {
		if err := os.MkdirAll(cache, 0o755); err == nil {
			lock, err := in.lockCache(ctx, cache, args.Upgrade)
			if err != nil {
				return outcome{}, err
			}
			release = lock.Release
		}
	}
	before, readErr := os.ReadFile(filepath.Join(in.ur.Dir, lockFileName))
	o, err := in.step(ctx, report.StepInit, in.initInvocation(args, stepEnv), true)
	release()
	if err != nil {
		return o, err
	}
	// The fingerprint below includes the lock file as completed.
	if err := in.completeLock(ctx, before, readErr == nil, stepEnv); err != nil {
		return o, err
	}
	ok = true
	in.ur.Inited = true
	in.ur.InitArgs = args
	if noBackend {
		return o, nil
	}
	if fp, ferr := in.fingerprint(args); ferr == nil {
		_, statErr := os.Stat(in.ur.DataDir)
		err = in.run.State.UpdateUnitUnsynced(in.ur.Spec, func(s *runstate.UnitState) {
			s.Init = &runstate.InitRecord{Fingerprint: fp, At: in.run.Now().UTC(), DataDir: statErr == nil}
		})
	}
	return o, err
}

func (in *stepInput) initCurrent(fp string) bool {
	us, err := in.run.State.ReadUnit(in.ur.Spec)
	if err != nil || us.Init == nil || us.Init.Fingerprint != fp {
		return false
	}
	_, statErr := os.Stat(in.ur.DataDir)
	return statErr == nil || !us.Init.DataDir
}

func (in *stepInput) fingerprint(args engineargs.InitArgs) (string, error) {
	u := in.ur.Spec
	return contenthash.InitFingerprint(contenthash.FingerprintInput{
		Root: in.run.Project.Root, Dir: u.Dir, ModuleDirs: in.run.Project.LocalModules(u.Dir),
		Engine: in.ur.Engine.Name, EngineVersion: in.ur.Engine.Version.String(),
		InitArgs: initArgText(args),
	})
}

func initArgText(a engineargs.InitArgs) []string {
	return a.Flags()
}

// workspace selects the unit's workspace unless its data dir already has
// it; a missing workspace is created in plan and apply (docs/behaviour.md#steps-of-a-unit).
func (j *job) workspace(ctx context.Context, create bool) bool {
	return !j.failed(ctx, report.StepWorkspace, j.in.selectWorkspace(ctx, create))
}

// selectWorkspace is workspace returning its failure, for an engine call
// that returns it as a value (engineApply).
func (in *stepInput) selectWorkspace(ctx context.Context, create bool) error {
	ws := in.ur.Spec.Workspace
	if !in.ur.Spec.CreateAndSelectWorkspace || currentWorkspace(in.ur.DataDir) == ws {
		return nil
	}
	_, err := in.step(ctx, report.StepWorkspace, in.workspaceInvocation(ws, false), true)
	if err != nil && create && ctx.Err() == nil && strings.Contains(ErrorText(err), "doesn't exist") {
		// The failed select stays in the report; the new workspace follows.
		_, err = in.step(ctx, report.StepWorkspace, in.workspaceInvocation(ws, true), true)
		if err == nil {
			// The report shows the workspace step once, as it ended.
			r := *in.reports
			*in.reports = append(r[:len(r)-2], r[len(r)-1])
		}
	}
	return err
}

// lockCache takes the plugin cache's lock for an init: shared when the
// init will only read the cache, else exclusive. An init that waited for
// the exclusive lock looks again once it has it: the init before it may
// have filled the cache, and it then shares it with the others
// (docs/architecture.md#what-an-init-costs).
func (in *stepInput) lockCache(ctx context.Context, cache string, upgrade bool) (*filelock.Lock, error) {
	path := filepath.Join(cache, ".strata-init.lock")
	cached := func() bool {
		ok, _ := engines.CachedProviders(cache, in.ur.Dir, in.ur.Engine.RegistryHost(), in.ur.Engine.ModuleReader(in.run.Project.ModuleAt))
		return ok && !upgrade
	}
	for {
		if cached() {
			return filelock.AcquireShared(ctx, path, nil)
		}
		lock, err := filelock.Acquire(ctx, path, nil)
		if err != nil || !cached() {
			return lock, err
		}
		lock.Release()
	}
}

// seedLock lets a unit with no lock file take the one another unit's init
// in this run wrote for the same providers, constraints, init arguments
// and CLI config, before its own init: the engine would select the same
// versions from the same source, and with the lock file in place the init
// finds them in the plugin cache and only reads it, instead of downloading
// them again (docs/architecture.md#what-an-init-costs). The first such
// unit inits as it would have; done publishes its lock file once its init
// ended, ok saying whether it ended well. Without a lock file to share
// (a lock file already there, -upgrade, a registry or remote module, only
// the builtin provider), done does nothing.
func (in *stepInput) seedLock(ctx context.Context, args engineargs.InitArgs, env map[string]string) (done func(ok bool)) {
	noop := func(bool) {}
	path := filepath.Join(in.ur.Dir, lockFileName)
	if _, err := os.Lstat(path); args.Upgrade || !errors.Is(err, fs.ErrNotExist) {
		return noop
	}
	// Where the state goes is no input of provider selection: stacks that
	// differ only in their -backend-config share one lock file.
	sel := args
	sel.BackendConfig, sel.Backend, sel.Reconfigure, sel.ForceCopy = nil, nil, false, false
	key, ok := in.inputsKey("seed", struct {
		CLIConfig, Cache string
		Init, Platforms  []string
	}{env["TF_CLI_CONFIG_FILE"], env["TF_PLUGIN_CACHE_DIR"], sel.Flags(), in.run.Project.LockPlatforms()})
	if !ok {
		return noop
	}
	r, mine, err := in.run.lockFiles.claim(ctx, key)
	switch {
	case err != nil:
		return noop
	case mine:
		return func(ok bool) {
			data, err := os.ReadFile(path)
			in.run.lockFiles.finish(key, r, data, in.ur.Spec.Name(), ok && err == nil)
		}
	}
	in.takeLock(path, r)
	return noop
}

// takeLock writes the lock file another unit's init wrote, unless one
// appeared meanwhile.
func (in *stepInput) takeLock(path string, r *lockResult) {
	started := in.run.Now()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return
	}
	_, err = f.Write(r.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// The init writes its own, as it would have.
		os.Remove(path)
		return
	}
	*in.reports = append(*in.reports, report.StepReport{Name: report.StepLockShared, StartedAt: started, FinishedAt: in.run.Now(), OK: true})
	in.run.Console.UnitNote(in.ur.Spec.Name(), fmt.Sprintf("lock file as %s's init wrote it, whose providers are the same: the init reads them from the plugin cache", r.from))
}

// completeLock adds the declared platforms' hashes to a lock file the
// init just wrote (before is the lock file before it; nil when there was
// none), in the init step's environment (stepEnv: its mirror, its
// registry tokens). A lock file the init left alone is left alone.
func (in *stepInput) completeLock(ctx context.Context, before []byte, hadLock bool, stepEnv map[string]string) error {
	platforms := in.run.Project.LockPlatforms()
	if len(platforms) == 0 {
		return nil
	}
	after, err := os.ReadFile(filepath.Join(in.ur.Dir, lockFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // only the builtin provider: no lock file
	}
	if err != nil || (hadLock && bytes.Equal(before, after)) {
		return err
	}
	args, err := in.lockArgs(engineargs.LockArgs{}, platforms, stepEnv)
	if err != nil {
		return err
	}
	return in.lock(ctx, args, stepEnv)
}

// inputsKey names what the engine reads to write the unit's lock file:
// the engine, the providers the configuration requires with their
// constraints, and what else the caller names. ok is false when the
// requirements cannot be known without init (a registry or remote
// module) or there are none (only the builtin provider).
func (in *stepInput) inputsKey(kind string, more any) (key string, ok bool) {
	req, err := engines.ProviderRequirements(in.ur.Dir, in.ur.Engine.RegistryHost(), in.ur.Engine.ModuleReader(in.run.Project.ModuleAt))
	if err != nil || len(req) == 0 {
		return "", false
	}
	b, err := json.Marshal(struct {
		Engine, Version string
		Requires        map[string][]string
		More            any
	}{in.ur.Engine.Name, in.ur.Engine.Version.String(), req, more})
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(b)
	return kind + ":" + hex.EncodeToString(sum[:]), true
}

// currentWorkspace reads the workspace a data dir has selected; absent
// means default.
func currentWorkspace(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, "environment"))
	if err != nil {
		return "default"
	}
	if ws := strings.TrimSpace(string(b)); ws != "" {
		return ws
	}
	return "default"
}
