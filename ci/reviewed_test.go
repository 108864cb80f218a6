package ci

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
)

// ciRun starts a run of every unit with opt and runs all its jobs.
func ciRun(t *testing.T, st *objstore.Store, root string, env []string, opt StartOptions) *Manifest {
	t.Helper()
	p := loadRepo(t, root)
	m, err := Start(context.Background(), st, p, selectAll(t, p), opt)
	if err != nil {
		t.Fatal(err)
	}
	shardedRun(t, st, root, m, env)
	return m
}

func reportUnit(t *testing.T, rep *report.Report, dir string) *report.UnitReport {
	t.Helper()
	for _, u := range rep.Units {
		if u.Dir == dir {
			return u
		}
	}
	t.Fatalf("no unit in %s in the report", dir)
	return nil
}

// TestCIReviewedPlan: pull request 5's plan jobs record their plans as
// the PR's; after the merge changes app again, the apply jobs compare the
// plan they make with it. The report and the PR comment say how it
// differs; with --require-reviewed-plan in the run's options, app applies
// nothing and fails, and web, which plans after it, is skipped.
func TestCIReviewedPlan(t *testing.T) {
	testenv.NeedTerraform(t)
	for _, require := range []bool{false, true} {
		name := "applied"
		if require {
			name = "refused"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			root := testenv.WriteRepo(t, map[string]string{
				"strata.yml":  testenv.AppWebConfig,
				"app/main.tf": testenv.AppTF("a0-b0-c0", ""),
				"web/main.tf": "resource \"terraform_data\" \"web\" {}\n",
			})
			env := testenv.Env(t)
			st := openStore(t, "mem://")
			ciRun(t, st, root, env, StartOptions{Shards: 1, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})

			testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), testenv.AppTF("a0-b0-c9", ""))
			ciRun(t, st, root, env, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, PR: 5})
			p := loadRepo(t, root)
			states, err := runstate.ReadBucket(ctx, st, p.UnitsIn("app"))
			if err != nil {
				t.Fatal(err)
			}
			if rec := states[p.UnitsIn("app")[0]].Plan; rec == nil || rec.Review != "PR #5" || rec.Command != runner.CmdPlan {
				t.Fatalf("the bucket's record of PR 5's plan: %+v", rec)
			}

			testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), testenv.AppTF("a0-b7-c9", "resource \"terraform_data\" \"b\" {}\n"))
			m := ciRun(t, st, root, env, StartOptions{
				Shards:  1,
				PR:      5,
				Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true, RequireReviewedPlan: require},
			})
			checkRun(t, st, m.Run)
			rep, _, err := BuildReport(ctx, st, m.Run)
			if err != nil {
				t.Fatal(err)
			}
			app, web := reportUnit(t, rep, "app"), reportUnit(t, rep, "web")
			if app.Replanned == nil || app.Replanned.ReviewedBy != "PR #5" || app.Replanned.Same ||
				app.Replanned.Reviewed != (report.Changes{Change: 1}) || app.Replanned.New != (report.Changes{Add: 1, Change: 1}) {
				t.Errorf("app's comparison: %+v", app.Replanned)
			}
			comment := report.Comment(rep, "")
			if !require {
				const reason = "re-planned: differs from the reviewed plan, from PR #5 (reviewed +0 ~1 -0, applied +1 ~1 -0)"
				if app.Status != report.StatusApplied || app.Reason != reason || rep.ExitCode != 0 {
					t.Errorf("app: %s (%s), exit %d", app.Status, app.Reason, rep.ExitCode)
				}
				if !strings.Contains(comment, "**Applied changes their reviewed plan did not hold:** <code>app@default</code>") || !strings.Contains(comment, report.TableCell(reason)) {
					t.Errorf("the comment does not say app applied other changes than PR 5's:\n%s", comment)
				}
				return
			}
			const reason = "app@default: its new plan differs from the reviewed plan, from PR #5 (reviewed +0 ~1 -0, new +1 ~1 -0); not applied (--require-reviewed-plan)"
			if app.Status != report.StatusFailed || app.Reason != reason {
				t.Errorf("app: %s (%s), want failed (%s)", app.Status, app.Reason, reason)
			}
			if web.Status != report.StatusSkipped || web.Cause != "app@default" {
				t.Errorf("web: %s (%s)", web.Status, web.Reason)
			}
			if rep.ExitCode != 1 {
				t.Errorf("exit %d, want 1", rep.ExitCode)
			}
			if !strings.Contains(comment, report.TableCell(reason)) {
				t.Errorf("the comment does not give app's reason:\n%s", comment)
			}
			if got := testenv.StateInput(t, filepath.Join(root, "app")); got != "a0-b0-c0" {
				t.Errorf("app's state: %s", got)
			}
		})
	}
}

// TestRetriedJobAfterLostWrite: a job applied app's saved plan, then could
// not write app's run state and result back (the bucket was down), and
// failed; the bucket still names the plan. The retried job applies that
// plan, which is stale, and plans again with nothing to change: app is
// applied, by the earlier attempt, with the plan's changes, recorded once,
// and the run passes ci check.
func TestRetriedJobAfterLostWrite(t *testing.T) {
	testenv.NeedTerraform(t)
	ctx := context.Background()
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml":  "dirs:\n  app: {tags: [app]}\n",
		"app/main.tf": testenv.AppTF("a0", ""),
	})
	env := testenv.Env(t)
	st := openStore(t, "mem://")
	ciRun(t, st, root, env, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, PR: 5})
	before := map[string][]byte{}
	keys, err := st.List(ctx, "units/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		b, _, err := st.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		before[k] = b
	}
	m := ciRun(t, st, root, env, StartOptions{Shards: 1, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})

	// What the bucket holds had the job's writes failed: the run state
	// from before the apply, no result and no apply recorded.
	for k, b := range before {
		if err := st.Put(ctx, k, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{resultsPrefix(m.Run), appliesPrefix(m.Run)} {
		keys, err := st.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			t.Fatalf("the first attempt recorded nothing under %s", prefix)
		}
		for _, k := range keys {
			if err := st.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}

	shardedRun(t, st, root, m, env)
	rep, _, err := BuildReport(ctx, st, m.Run)
	if err != nil {
		t.Fatal(err)
	}
	app := reportUnit(t, rep, "app")
	const reason = "applied earlier: the state already holds the saved plan's changes"
	if app.Status != report.StatusApplied || app.Reason != reason || app.Changes != (report.Changes{Add: 1}) {
		t.Errorf("app: %s (%s) %s, want applied (%s) +1 ~0 -0", app.Status, app.Reason, app.Changes, reason)
	}
	applies, err := st.List(ctx, appliesPrefix(m.Run))
	if err != nil {
		t.Fatal(err)
	}
	if len(applies) != 1 {
		t.Errorf("%d applies recorded, want 1: %v", len(applies), applies)
	}
	checkRun(t, st, m.Run)

	// The bucket's run state has app applied: a plan finds nothing to do.
	m2 := ciRun(t, st, root, env, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1})
	rep2, _, _ := BuildReport(ctx, st, m2.Run)
	if got := reportUnit(t, rep2, "app").Status; got != report.StatusNoChanges {
		t.Errorf("plan after: app %s", got)
	}
}

// TestCIReviewedPlanOfAnotherPR: PR 5's plan jobs record app's plan as
// PR 5's. Before PR 5 merges, PR 6's merge applies, and meets app on its
// way. The note that app's new plan differs from the reviewed plan lands
// on PR 5's apply, never on PR 6's: there app is applied with no
// comparison; with --require-reviewed-plan it is refused, naming whose
// review its plan had. Had app's saved plan still been current, PR 6's
// apply would have applied it as it is, and says whose review it was.
func TestCIReviewedPlanOfAnotherPR(t *testing.T) {
	testenv.NeedTerraform(t)
	for _, tc := range []struct {
		name             string
		changed, require bool
	}{
		{"re-planned", true, false},
		{"refused", true, true},
		{"reused", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testenv.WriteRepo(t, map[string]string{
				"strata.yml":  testenv.AppWebConfig,
				"app/main.tf": testenv.AppTF("a0", ""),
				"web/main.tf": "resource \"terraform_data\" \"web\" {}\n",
			})
			env := testenv.Env(t)
			st := openStore(t, "mem://")
			ciRun(t, st, root, env, StartOptions{Shards: 1, Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true}})
			testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), testenv.AppTF("a5", ""))
			ciRun(t, st, root, env, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, PR: 5})
			if tc.changed {
				testenv.WriteFile(t, filepath.Join(root, "app", "main.tf"), testenv.AppTF("a6", ""))
			}
			// PR 5's locks are freed (strata ci unlock --pr 5); its
			// reviewed plan stays in app's record.
			if _, err := Unlock(context.Background(), st, 5); err != nil {
				t.Fatal(err)
			}
			m := ciRun(t, st, root, env, StartOptions{
				Shards:  1,
				PR:      6,
				Options: runner.Settings{Command: runner.CmdApply, AutoApprove: true, RequireReviewedPlan: tc.require},
			})
			rep, _, err := BuildReport(context.Background(), st, m.Run)
			if err != nil {
				t.Fatal(err)
			}
			app := reportUnit(t, rep, "app")
			switch {
			case !tc.changed:
				if app.Status != report.StatusApplied || app.Replanned == nil || !app.Replanned.Reused || app.Replanned.ReviewedBy != "PR #5" ||
					app.Reason != "applied the reviewed plan from PR #5" {
					t.Errorf("app: %s (%s), replanned %+v; want PR 5's reviewed plan applied as it is", app.Status, app.Reason, app.Replanned)
				}
			case tc.require:
				const reason = "app@default: no reviewed plan for its changes (+0 ~1 -0) in PR #6; its saved plan was reviewed in PR #5; not applied (--require-reviewed-plan)"
				if app.Status != report.StatusFailed || app.Reason != reason || app.Replanned != nil {
					t.Errorf("app: %s (%s), replanned %+v; want failed (%s)", app.Status, app.Reason, app.Replanned, reason)
				}
			default:
				if app.Status != report.StatusApplied || app.Replanned != nil || app.Reason != "" {
					t.Errorf("app: %s (%s), replanned %+v; want applied with no note of PR 5's review", app.Status, app.Reason, app.Replanned)
				}
				if comment := report.Comment(rep, ""); strings.Contains(comment, "reviewed plan") {
					t.Errorf("PR 6's comment speaks of PR 5's review:\n%s", comment)
				}
			}
		})
	}
}
