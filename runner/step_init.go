package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-iac/strata/internal/contenthash"
	"github.com/strata-iac/strata/internal/filelock"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
)

// The init steps of a unit's job: init when the unit's data dir is not
// current, and its workspace (docs/behaviour.md#steps-of-a-unit).

// init runs init unless the unit's data dir is current (docs/behaviour.md#steps-of-a-unit): its
// fingerprint equals the one recorded at the last successful init.
func (j *job) init(ctx context.Context, always, noBackend bool, args InitArgs, stepEnv map[string]string) bool {
	if !always && j.ur.inited {
		return true
	}
	fp, fpErr := j.fingerprint(args)
	if !always && fpErr == nil && j.initCurrent(fp) {
		j.ur.inited, j.ur.initArgs = true, args
		return true
	}
	_, err := j.initNow(ctx, noBackend, args, stepEnv)
	return !j.failed(ctx, report.StepInit, err)
}

func (j *job) initNow(ctx context.Context, noBackend bool, args InitArgs, stepEnv map[string]string) (outcome, error) {
	if noBackend {
		f := false
		args.Backend = &f
	}
	// Terraform's plugin cache is not safe under parallel init: inits that
	// share one never overlap, across strata processes too.
	if cache := j.engineEnv(stepEnv)["TF_PLUGIN_CACHE_DIR"]; cache != "" {
		if err := os.MkdirAll(cache, 0o755); err == nil {
			lock, err := filelock.Acquire(ctx, filepath.Join(cache, ".strata-init.lock"), nil)
			if err != nil {
				return outcome{}, err
			}
			defer lock.Release()
		}
	}
	o, err := j.step(ctx, report.StepInit, func() invocation {
		a := args
		return invocation{Step: report.StepInit, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(stepEnv), Call: initCall{Args: a, Version: j.ur.engine.Version}}
	}, true)
	if err != nil {
		return o, err
	}
	j.ur.inited = true
	j.ur.initArgs = args
	if noBackend {
		return o, nil
	}
	if fp, ferr := j.fingerprint(args); ferr == nil {
		_, statErr := os.Stat(j.ur.dataDir)
		err = j.r.sd.UpdateUnitUnsynced(j.ur.u, func(s *runstate.UnitState) {
			s.Init = &runstate.InitRecord{Fingerprint: fp, At: j.r.opt.Now().UTC(), DataDir: statErr == nil}
		})
	}
	return o, err
}

func (j *job) initCurrent(fp string) bool {
	us, err := j.r.sd.ReadUnit(j.ur.u)
	if err != nil || us.Init == nil || us.Init.Fingerprint != fp {
		return false
	}
	_, statErr := os.Stat(j.ur.dataDir)
	return statErr == nil || !us.Init.DataDir
}

func (j *job) fingerprint(args InitArgs) (string, error) {
	u := j.ur.u
	return contenthash.InitFingerprint(contenthash.FingerprintInput{
		Root: j.r.p.Root, Dir: u.Dir, ModuleDirs: j.r.p.LocalModules(u.Dir),
		Engine: j.ur.engine.Name, EngineVersion: j.ur.engine.Version.String(),
		InitArgs: initArgText(args),
	})
}

func initArgText(a InitArgs) []string {
	return a.Flags()
}

// workspace selects the unit's workspace unless its data dir already has
// it; a missing workspace is created in plan and apply (docs/behaviour.md#steps-of-a-unit).
func (j *job) workspace(ctx context.Context, create bool) bool {
	ws := j.ur.u.Workspace
	if !j.ur.u.CreateAndSelectWorkspace || currentWorkspace(j.ur.dataDir) == ws {
		return true
	}
	_, err := j.step(ctx, report.StepWorkspace, func() invocation {
		return invocation{Step: report.StepWorkspace, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: workspaceCall{Name: ws}}
	}, true)
	if err != nil && create && ctx.Err() == nil && strings.Contains(errorText(err), "doesn't exist") {
		// The failed select stays in the report; the new workspace follows.
		_, err = j.step(ctx, report.StepWorkspace, func() invocation {
			return invocation{Step: report.StepWorkspace, Engine: j.ur.engine.Path, Dir: j.ur.dir, Env: j.engineEnv(nil), Call: workspaceCall{Name: ws, New: true}}
		}, true)
		if err == nil {
			// The report shows the workspace step once, as it ended.
			j.res.steps = append(j.res.steps[:len(j.res.steps)-2], j.res.steps[len(j.res.steps)-1])
		}
	}
	return !j.failed(ctx, report.StepWorkspace, err)
}
