package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// The state bucket of --state, for a run on one machine and for the ci
// commands (docs/ci.md#run-state-in-the-bucket).

// openBucket opens the state bucket at url, its requests bounded by
// --state-timeout.
func openBucket(c *cli.Context, url string) (*objstore.Store, error) {
	if url == "" {
		return nil, fmt.Errorf("no state bucket: give --state URL or STRATA_STATE_URL (s3://…, gs://…, azblob://…, file:///dir)")
	}
	return objstore.Open(c.Context, url, objstore.Options{Timeout: c.Duration("state-timeout")})
}

// attachState keeps a run on one machine in step with the bucket: the
// units' records are read into the local state dir now, and written back
// as each unit ends (opt.UnitDone); wait returns once all are written.
func attachState(ctx context.Context, st *objstore.Store, stateDir string, units []*stacks.Unit, opt *runner.Options) (wait func() error, err error) {
	a, err := runstate.Attach(ctx, st, stateDir, units)
	if err != nil {
		return nil, err
	}
	opt.UnitDone, opt.Warnings = a.UnitDone, a.Warnings
	return a.Wait, nil
}
