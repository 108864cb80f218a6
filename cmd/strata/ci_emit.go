package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/internal/atomicfile"
)

// ciEmitCommand is `strata ci emit`: the CI files that run `strata ci`
// (README, Running in CI).
func ciEmitCommand() *cli.Command {
	return &cli.Command{
		Name:  "emit",
		Usage: "write the CI files that run strata ci: a GitHub Actions workflow or GitLab pipelines",
		Subcommands: []*cli.Command{
			{
				Name:  "github",
				Usage: "write the reusable GitHub Actions workflow (commit it as .github/workflows/strata.yml)",
				Description: fmt.Sprintf("The workflow has --max-waves wave jobs (%d unless told), whatever the\n"+
					"repository's graph is: ci start says at run time which waves a run has and\n"+
					"over which shards, and the other wave jobs are skipped, so a deeper graph\n"+
					"needs no new workflow. A run that needs more waves than the workflow has\n"+
					"fails at ci start, naming the --max-waves that runs it.", ci.DefaultMaxWaves),
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "max-waves", Aliases: []string{"waves"}, Value: ci.DefaultMaxWaves, Usage: fmt.Sprintf("`K` wave jobs: the most waves a run can have (1 to %d)", ci.MaxWaveJobs)},
					&cli.IntFlag{Name: "shards", Value: ci.DefaultShards, Usage: fmt.Sprintf("at most `M` jobs per wave: the default of the workflow's shards input (1 to %d)", ci.MaxShards)},
					&cli.StringFlag{Name: "strata-version", Usage: "the strata every job installs by default: a release (`V`, v1.2.3) or a commit (default: this strata's release, else the commit it was built from)"},
					emitOutputFlag(),
				},
				Action: func(c *cli.Context) error {
					opt := ci.DefaultGitHubOptions()
					// A version that cannot be had is said after what is
					// wrong with the other flags.
					v, verr := workflowVersion(c)
					opt.MaxWaves, opt.Shards, opt.Version = c.Int("max-waves"), c.Int("shards"), v
					// The config sets the defaults of checkout-strategy and
					// whether the wave jobs may ask for an OIDC token.
					s, err := openProject(c)
					if err != nil {
						return err
					}
					opt.CheckoutStrategy = s.project.Config.CheckoutStrategy.Value
					opt.OIDC = len(s.project.Config.OIDCAudiences()) > 0
					b, err := ci.EmitGitHub(opt)
					if err != nil {
						return cli.Exit(err.Error(), 1)
					}
					if verr != nil {
						return verr
					}
					return writeEmitted(c, b)
				},
			},
			ciEmitDriftCommand(),
			{
				Name:  "gitlab",
				Usage: "write .gitlab-ci.yml; with --run, the child pipeline of that run",
				Description: "Without --run: the static pipeline to commit as .gitlab-ci.yml. Its start job\n" +
					"runs strata ci start, then strata ci emit gitlab --run ID, which reads the run's\n" +
					"manifest from the bucket and writes the child pipeline: one job per wave and\n" +
					"shard, each needing the jobs its units wait for.",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "shards", Value: ci.DefaultShards, Usage: fmt.Sprintf("at most `M` jobs per wave: the default of STRATA_SHARDS (1 to %d)", ci.MaxShards)},
					&cli.StringFlag{Name: "image", Value: ci.DefaultImage, Usage: "the jobs' `IMAGE`: strata and a shell", EnvVars: []string{"STRATA_IMAGE"}},
					&cli.StringFlag{Name: "run", Usage: "write the child pipeline of run `ID`"},
					&cli.StringFlag{Name: "state", Usage: "with --run: the state bucket `URL`", EnvVars: []string{"STRATA_STATE_URL"}},
					stateTimeoutFlag(),
					emitOutputFlag(),
				},
				Action: func(c *cli.Context) error {
					opt := ci.DefaultGitLabOptions()
					opt.Shards, opt.Image = c.Int("shards"), c.String("image")
					b, err := emitGitLab(c, opt)
					if err != nil {
						return cli.Exit(err.Error(), 1)
					}
					return writeEmitted(c, b)
				},
			},
		},
	}
}

// workflowVersion is the strata an emitted workflow installs by default
// (docs/ci.md#installing-strata-in-a-job): --strata-version, else this
// strata's release, else the commit it was built from, said on stderr. A
// build with neither (a changed tree, no git) is an error naming the
// flag: a workflow with no default fails every job that is not given
// one.
func workflowVersion(c *cli.Context) (string, error) {
	if v := c.String("strata-version"); v != "" {
		if ci.DefaultStrataVersion(v) == "" {
			return "", cli.Exit(fmt.Sprintf("--strata-version %s: expected a release (v1.2.3) or a commit (7 to 40 hex digits)", v), 1)
		}
		return v, nil
	}
	if v := ci.DefaultStrataVersion(strataVersion()); v != "" {
		return v, nil
	}
	if commit := buildCommit(); commit != "" {
		fmt.Fprintf(c.App.ErrWriter, "strata: this strata is no release: the workflow installs strata at commit %s, the one it was built from (--strata-version chooses another)\n", commit)
		return commit, nil
	}
	return "", cli.Exit(fmt.Sprintf("strata %s is a build with no release version and no commit of its own (built from a changed tree, or outside git): pass --strata-version with a release (v1.2.3) or a commit for the workflow's jobs to install", strataVersion()), 1)
}

// emitOutputFlag is ci emit's --output: the file to write, its dirs
// created, instead of stdout.
func emitOutputFlag() cli.Flag {
	return &cli.PathFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (its dirs are created) instead of stdout"}
}

// writeEmitted writes what ci emit made to --output, atomically, or to
// stdout.
func writeEmitted(c *cli.Context, b []byte) error {
	path := c.Path("output")
	if path == "" {
		_, err := c.App.Writer.Write(b)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return cli.Exit(fmt.Sprintf("--output %s: %v", path, err), 1)
	}
	if err := atomicfile.Write(path, b, 0o644); err != nil {
		return cli.Exit(fmt.Sprintf("--output %s: %v", path, err), 1)
	}
	fmt.Fprintf(c.App.ErrWriter, "wrote %s\n", path)
	return nil
}

// emitGitLab is the parent pipeline, or with --run the child pipeline of
// that run.
func emitGitLab(c *cli.Context, opt ci.GitLabOptions) ([]byte, error) {
	run := c.String("run")
	if run == "" {
		// What the config says of branches and checkouts
		// (docs/ci.md#checkout-strategy-on-gitlab): a config that does
		// not load is an error, never a pipeline that ignores it.
		s, err := openProject(c)
		if err != nil {
			return nil, err
		}
		cfg := s.project.Config
		opt.CheckoutStrategy = cfg.CheckoutStrategy.Value
		if cfg.DestinationBranches != nil {
			opt.DestinationBranches = *cfg.DestinationBranches
		}
		return ci.EmitGitLabParent(opt)
	}
	// The start job's checkout, for every job to make again.
	switch cs := os.Getenv("STRATA_CHECKOUT_STRATEGY"); cs {
	case "", "merge", "checkout":
		opt.CheckoutStrategy = cs
	default:
		return nil, fmt.Errorf("STRATA_CHECKOUT_STRATEGY %q: expected merge or checkout", cs)
	}
	opt.MergeTarget = os.Getenv("STRATA_MERGE_TARGET")
	if c.String("state") == "" {
		return nil, fmt.Errorf("--run needs the state bucket: --state URL or STRATA_STATE_URL")
	}
	st, err := openBucket(c, c.String("state"))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	m, err := ci.LoadManifest(c.Context, st, run)
	if err != nil {
		return nil, err
	}
	s, err := openProject(c)
	if err != nil {
		return nil, err
	}
	// The jobs' OIDC tokens (docs/behaviour.md#oidc).
	opt.OIDCAudiences = s.project.Config.OIDCAudiences()
	return ci.EmitGitLabChild(m, opt)
}

// ciEmitDriftCommand is `strata ci emit drift`: the scheduled workflow of
// the config's drift schedules (docs/ci.md#drift-schedules).
func ciEmitDriftCommand() *cli.Command {
	return &cli.Command{
		Name:  "drift",
		Usage: "write the GitHub Actions workflow that runs the config's drift schedules (commit it as .github/workflows/strata-drift.yml)",
		Flags: []cli.Flag{emitOutputFlag()},
		Action: func(c *cli.Context) error {
			s, err := openProject(c)
			if err != nil {
				return err
			}
			b, err := ci.EmitGitHubDrift(s.project.Config.DriftSchedules())
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			return writeEmitted(c, b)
		},
	}
}
